"""Enqueue zeroforge jobs on rq and wait for them, robustly.

Jobs are enqueued by dotted path with rq's JSON serializer (never pickle) and one typed payload each
(services.payloads), with deterministic job ids from shared.layout.JobIds (the data directory's identity,
the game, the generation and the job's role), so that a resumed flow re-enqueues the same ids instead of
creating duplicates.  While waiting, the StartedJobRegistry of each
queue is cleaned up so that a job whose worker was killed outright is retried (or marked failed) instead
of staying STARTED forever.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel
from redis import Redis
from rq import Queue, Retry
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

log = logging.getLogger(__name__)

QUEUE_SELFPLAY = "selfplay"
QUEUE_TRAIN = "train"
QUEUE_EVAL = "eval"
ALL_QUEUES = (QUEUE_SELFPLAY, QUEUE_TRAIN, QUEUE_EVAL)


class JobFailedError(RuntimeError):
    """A job failed after its retries; the message carries the job id and the end of its traceback."""


class JobsTimeoutError(TimeoutError):
    """Jobs did not finish within the wait limit (no worker listening, or workers too slow)."""


def connect(redis_url: str) -> Redis:
    """A Redis connection for rq (bytes responses, as rq expects)."""
    return Redis.from_url(redis_url)


@dataclass(frozen=True)
class JobSpec:
    """One job to enqueue: the dotted function path (one of services.worker.JOB_FUNCTIONS), its payload, and
    where/how to run it."""

    func: str
    payload: BaseModel
    queue: str
    job_id: str
    timeout_s: int
    description: str = ""
    retries: int = 2
    result_ttl_s: int = 86_400
    failure_ttl_s: int = 604_800


@dataclass
class WaitProgress:
    """What `wait_for_jobs` reports to its progress callback."""

    finished: int
    total: int
    started: int
    elapsed_s: float
    results: dict[str, Any] = field(default_factory=dict)


def ttl_kwargs(pipeline) -> dict[str, int]:
    """JobSpec keyword arguments for result/failure TTLs from a config's [pipeline] section."""
    return {"result_ttl_s": pipeline.result_ttl_s, "failure_ttl_s": pipeline.failure_ttl_s}


def enqueue(connection: Redis, spec: JobSpec) -> Job:
    """Enqueue `spec` unless a job with its id already finished or is running; return the rq Job."""
    serializer = JSONSerializer
    existing = Job.fetch_many([spec.job_id], connection=connection, serializer=serializer)[0]
    if existing is not None:
        status = existing.get_status()
        if status in (JobStatus.FINISHED, JobStatus.STARTED, JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED):
            return existing
        existing.delete()
    queue = Queue(spec.queue, connection=connection, serializer=serializer)
    return queue.enqueue_call(
        func=spec.func,
        kwargs={"payload": spec.payload.model_dump(mode="json")},
        timeout=spec.timeout_s,
        result_ttl=spec.result_ttl_s,
        failure_ttl=spec.failure_ttl_s,
        job_id=spec.job_id,
        description=spec.description or spec.job_id,
        retry=Retry(max=spec.retries) if spec.retries > 0 else None,
    )


def cleanup_started(connection: Redis, queues: tuple[str, ...] = ALL_QUEUES) -> None:
    """Requeue or fail jobs whose worker died (their STARTED entry expired); call it while waiting."""
    for name in queues:
        queue = Queue(name, connection=connection, serializer=JSONSerializer)
        StartedJobRegistry(queue=queue).cleanup()


def _failure_text(job: Job) -> str:
    result = job.latest_result()
    text = (result.exc_string if result is not None and result.exc_string else "") or ""
    return text.strip().splitlines()[-1] if text.strip() else "no traceback recorded"


def wait_for_jobs(
    connection: Redis,
    job_ids: list[str],
    *,
    timeout_s: float,
    poll_s: float = 0.5,
    progress: Callable[[WaitProgress], None] | None = None,
    queues: tuple[str, ...] = ALL_QUEUES,
) -> dict[str, Any]:
    """Block until every job finished; return {job_id: return value}.

    Raises JobFailedError as soon as one job has failed for good (retries exhausted), naming it and the
    last line of its traceback, or was stopped or canceled by hand; and JobsTimeoutError when `timeout_s`
    passes (saying how many jobs never started, the usual sign that no worker listens on the queue).
    """
    start = time.monotonic()
    results: dict[str, Any] = {}
    last_reported = None
    while True:
        cleanup_started(connection, queues)
        jobs = Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer)
        started = 0
        for job_id, job in zip(job_ids, jobs):
            if job is None:
                raise JobFailedError(f"job {job_id} vanished from Redis (expired or deleted); re-run the flow to redo it")
            status = job.get_status()
            if status == JobStatus.FINISHED and job_id not in results:
                results[job_id] = job.return_value()
            elif status == JobStatus.FAILED:
                raise JobFailedError(f"job {job_id} failed: {_failure_text(job)}")
            elif status in (JobStatus.STOPPED, JobStatus.CANCELED):  # final: no worker will ever run it
                raise JobFailedError(f"job {job_id} was {status.value} by hand and will never finish; "
                                     "re-run the flow to enqueue it again")
            elif status == JobStatus.STARTED:
                started += 1
        elapsed = time.monotonic() - start
        snapshot = (len(results), started)
        if progress is not None and snapshot != last_reported:
            progress(WaitProgress(len(results), len(job_ids), started, elapsed, dict(results)))
            last_reported = snapshot
        if len(results) == len(job_ids):
            return results
        if elapsed > timeout_s:
            waiting = len(job_ids) - len(results) - started
            raise JobsTimeoutError(
                f"{len(job_ids) - len(results)} of {len(job_ids)} jobs unfinished after {timeout_s:.0f} s "
                f"({waiting} never started: is a worker listening on queues {', '.join(queues)}? "
                f"start one with `zeroforge worker --redis-url URL`)"
            )
        time.sleep(poll_s)


def run_jobs(
    connection: Redis,
    specs: list[JobSpec],
    *,
    timeout_s: float,
    progress: Callable[[WaitProgress], None] | None = None,
) -> dict[str, Any]:
    """Enqueue all `specs` (skipping finished ones) and wait for them; returns {job_id: result}."""
    for spec in specs:
        enqueue(connection, spec)
    queues = tuple(sorted({s.queue for s in specs})) or ALL_QUEUES
    return wait_for_jobs(connection, [s.job_id for s in specs], timeout_s=timeout_s, progress=progress, queues=queues)
