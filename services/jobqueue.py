"""Enqueue zeroforge jobs on rq and wait for them, robustly.

Jobs are enqueued by dotted path with rq's JSON serializer (never pickle) and one typed payload each
(services.payloads), with deterministic job ids from shared.layout.JobIds (the data directory's identity,
the game, the generation and the job's role), so that a resumed flow re-enqueues the same ids instead of
creating duplicates.

Recovery, all driven from the waiting side:
- a job whose worker stopped heartbeating (killed, out of memory, machine lost) is requeued once its
  execution entry in the StartedJobRegistry expires (a zeroforge worker keeps it for 4 heartbeats, 20 s by
  default), and fails for good, clearly, after its tries (JobSpec.retries + 1) are used up;
- Redis going away is ridden out: every Redis call of `enqueue` and `wait_for_jobs` is retried with
  back-off for up to `RedisPatience.outage_s` (one log line when it goes, one when it is back), then
  RedisLostError says so in one line; the jobs' state stays in Redis (or is redone), so a rerun resumes;
- a job that vanished from Redis (a restart without persistence) is enqueued again when its JobSpec is known;
- a job that an earlier run's worker left running when that run was stopped or killed, and that fails for that
  reason once this program waits for it, is enqueued again with all its tries (as a rerun does with every failed
  job): the earlier run's try does not count against this one.

The Redis URL comes from the process environment (ZEROFORGE_REDIS_URL, else REDIS_URL), never from a flow
parameter, so that a password never lands in Prefect's database.
"""
from __future__ import annotations

import datetime
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from pydantic import BaseModel
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Queue, Retry
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer
from rq.utils import as_text
from rq.worker_registration import REDIS_WORKER_KEYS

from services.progress import META_KEY as PROGRESS_KEY
from services.redis_server import redact_url

log = logging.getLogger(__name__)

#: When this program started (UTC): a job whose abandoned try began before it was left by an earlier run.
PROGRAM_STARTED_AT = datetime.datetime.now(datetime.timezone.utc)

QUEUE_SELFPLAY = "selfplay"
QUEUE_TRAIN = "train"
QUEUE_EVAL = "eval"
#: In priority order: a worker takes training and gate/anchor jobs before self-play (rq dequeues from the first
#: non-empty queue of its list), so that self-play enqueued ahead of its generation (pipeline.overlap_selfplay)
#: only fills workers the training and the gate leave idle.
ALL_QUEUES = (QUEUE_TRAIN, QUEUE_EVAL, QUEUE_SELFPLAY)

#: The environment variable that carries the pipeline's Redis URL (password included) to its flows and workers.
REDIS_URL_ENV = "ZEROFORGE_REDIS_URL"
#: Errors that mean "Redis is not reachable right now" (retried), as opposed to a bad request.
REDIS_DOWN_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionError)
#: The worker hash field where a zeroforge worker records its heartbeat TTL (services.worker.live_workers).
TTL_FIELD = "zeroforge_heartbeat_ttl"
#: After Redis comes back, the wait leaves STARTED jobs alone for the longest heartbeat TTL of the registered
#: workers plus this margin, so that live workers heartbeat again before their stale entries count as dead.
RECOVERY_MARGIN_S = 3.0
#: The grace when no worker records its TTL (rq's own workers: 420 s; zeroforge's default: 20 s).
DEFAULT_RECOVERY_GRACE_S = 30.0

T = TypeVar("T")


class JobFailedError(RuntimeError):
    """A job failed after its retries; the message carries the job id and the end of its traceback."""


class JobsTimeoutError(TimeoutError):
    """Jobs did not finish within the wait limit (no worker listening, or workers too slow)."""


class RedisLostError(RuntimeError):
    """Redis stayed unreachable for longer than the outage budget; the message says for how long and where."""


class RedisUrlMissingError(RuntimeError):
    """Neither ZEROFORGE_REDIS_URL nor REDIS_URL is set in this process."""


def redis_url_from_env(env: dict[str, str] | None = None) -> str:
    """The pipeline's Redis URL: $ZEROFORGE_REDIS_URL, else $REDIS_URL; RedisUrlMissingError when neither is set."""
    env = os.environ if env is None else env
    url = env.get(REDIS_URL_ENV) or env.get("REDIS_URL")
    if not url:
        raise RedisUrlMissingError(f"no Redis URL: set {REDIS_URL_ENV} (zeroforge run sets it for its flows) "
                                   "or REDIS_URL")
    return url


def connect(redis_url: str | None = None) -> Redis:
    """A Redis connection for rq (bytes responses, as rq expects) to `redis_url`, default redis_url_from_env().

    Socket timeouts are bounded, so that a server that vanishes is noticed in seconds, not hung on.
    """
    return Redis.from_url(redis_url or redis_url_from_env(), socket_connect_timeout=5, socket_timeout=30,
                          health_check_interval=15)


def _where(connection: Redis) -> str:
    kwargs = connection.connection_pool.connection_kwargs
    return redact_url(f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}")


class RedisPatience:
    """Rides out Redis outages of up to `outage_s` seconds: `call(fn)` retries fn with back-off (0.5 s doubling
    to 8 s) while Redis is unreachable, logging one line when it goes and one when it is back; past the budget it
    raises RedisLostError. One instance follows one connection through a wait, so the budget spans the calls."""

    def __init__(self, connection: Redis, outage_s: float = 120.0, sleep: Callable[[float], None] = time.sleep,
                 give_up: Callable[[], bool] = lambda: False):
        """give_up(): checked before each retry; True ends the wait at once with RedisLostError (a stop request)."""
        self.connection, self.outage_s, self._sleep, self._give_up = connection, outage_s, sleep, give_up
        self.down_since: float | None = None
        self.recovered_at: float | None = None
        self.grace_s = DEFAULT_RECOVERY_GRACE_S
        self.outages: list[float] = []           # seconds of each outage ridden out

    def call(self, fn: Callable[[], T], what: str) -> T:
        """fn(), retried while Redis is unreachable (see the class docstring)."""
        delay = 0.5
        while True:
            try:
                result = fn()
            except REDIS_DOWN_ERRORS as exc:
                now = time.monotonic()
                if self.down_since is None:
                    self.down_since = now
                    log.warning("Redis at %s unreachable (%s) while %s; retrying for up to %.0f s",
                                _where(self.connection), type(exc).__name__, what, self.outage_s)
                if self._give_up():
                    raise RedisLostError(f"Redis at {_where(self.connection)} unreachable (while {what}); "
                                         "stopped waiting for it on request") from None
                if now - self.down_since > self.outage_s:
                    raise RedisLostError(
                        f"Redis at {_where(self.connection)} unreachable for {now - self.down_since:.0f} s "
                        f"(while {what}); the run stopped where it was: start Redis again and rerun the same command "
                        "to resume") from None
                self._sleep(delay)
                delay = min(8.0, delay * 2)
                continue
            if self.down_since is not None:
                seconds = time.monotonic() - self.down_since
                self.outages.append(seconds)
                self.recovered_at = time.monotonic()
                self.down_since = None
                self.grace_s = self._recovery_grace_s()
                log.warning("Redis at %s is back after %.1f s", _where(self.connection), seconds)
            return result

    def _recovery_grace_s(self) -> float:
        """The longest heartbeat TTL that a registered worker records, plus RECOVERY_MARGIN_S."""
        try:
            ttls = [self.connection.hget(key, TTL_FIELD) for key in self.connection.smembers(REDIS_WORKER_KEYS)]
        except REDIS_DOWN_ERRORS:
            return DEFAULT_RECOVERY_GRACE_S
        known = [float(as_text(t)) for t in ttls if t is not None and as_text(t).isdigit()]
        return max(known) + RECOVERY_MARGIN_S if known else DEFAULT_RECOVERY_GRACE_S

    def in_grace(self) -> bool:
        """True for a short while after Redis came back (see _recovery_grace_s): no job is taken for abandoned
        then, as live workers may not have heartbeaten since."""
        return self.recovered_at is not None and time.monotonic() - self.recovered_at < self.grace_s


@dataclass(frozen=True)
class JobSpec:
    """One job to enqueue: the dotted function path (one of services.worker.JOB_FUNCTIONS), its payload, and
    where/how to run it. `retries`: how often a failed or abandoned job is run again (tries = retries + 1)."""

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
    #: {job_id: progress record} of the running jobs that reported one (services.progress, from the job's meta)
    running: dict[str, dict] = field(default_factory=dict)


def ttl_kwargs(pipeline) -> dict[str, int]:
    """JobSpec keyword arguments for result/failure TTLs and retries from a config's [pipeline] section."""
    return {"result_ttl_s": pipeline.result_ttl_s, "failure_ttl_s": pipeline.failure_ttl_s,
            "retries": pipeline.job_retries}


def _delete_job(connection: Redis, job: Job) -> None:
    """Delete `job` and its records. rq's Job.delete fetches every execution in the job's execution registry and
    raises ValueError("Execution ... not found") for one whose hash expired before its registry entry (an
    abandoned job, for up to a minute): such dangling entries are dropped first."""
    registry_key = job.execution_registry.key
    for raw in connection.zrange(registry_key, 0, -1):
        execution_id = as_text(raw)
        if not connection.exists(Execution(execution_id, job.id, connection).key):
            connection.zrem(registry_key, raw)
    try:
        job.delete()
    except ValueError:   # the last hash expired between the check and the delete: remove what is left by hand
        connection.delete(registry_key)
        job.delete()


def enqueue(connection: Redis, spec: JobSpec, patience: RedisPatience | None = None) -> Job:
    """Enqueue `spec` unless a job with its id is finished, queued or running; return the rq Job.

    A failed, stopped or canceled job of that id is deleted and enqueued afresh with all its tries (so a rerun
    of the pipeline redoes what failed). Redis outages are ridden out with `patience` (default: a fresh one).
    """
    patience = patience or RedisPatience(connection)
    return patience.call(lambda: _enqueue_once(connection, spec), f"enqueueing {spec.job_id}")


def _enqueue_once(connection: Redis, spec: JobSpec) -> Job:
    serializer = JSONSerializer
    existing = Job.fetch_many([spec.job_id], connection=connection, serializer=serializer)[0]
    if existing is not None:
        status = existing.get_status()
        if status in (JobStatus.FINISHED, JobStatus.STARTED, JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED):
            return existing
        _delete_job(connection, existing)
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
        meta={"tries": spec.retries + 1},
    )


def withdraw_queued(connection: Redis, job_ids: list[str]) -> int:
    """Delete the jobs of `job_ids` that are still waiting in their queue (no worker took them), so that none of
    them runs later; running and finished jobs are left alone. Returns how many were withdrawn."""
    withdrawn = 0
    for job in Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer):
        if job is not None and job.get_status(refresh=False) == JobStatus.QUEUED:
            _delete_job(connection, job)
            withdrawn += 1
    return withdrawn


def cleanup_started(connection: Redis, queues: tuple[str, ...] = ALL_QUEUES) -> None:
    """Requeue (or fail, when its tries are used up) every job whose worker stopped heartbeating: its
    execution entry in the queue's StartedJobRegistry expired. Call it while waiting."""
    for name in queues:
        queue = Queue(name, connection=connection, serializer=JSONSerializer)
        StartedJobRegistry(queue=queue).cleanup()


def _last_error_line(job: Job) -> str | None:
    """The last line of the error that the job's latest try recorded; None when it recorded none."""
    result = job.latest_result()
    text = (result.exc_string or "").strip() if result is not None else ""
    return text.splitlines()[-1] if text else None


def _is_abandonment(error_line: str | None) -> bool:
    """True for the error line of a try that ended because its worker stopped heartbeating (rq's AbandonedJobError)."""
    return "AbandonedJobError" in (error_line or "")


def failure_text(job: Job) -> str:
    """The last line of a failed job's error (its worker's death said in words), for one-line reports."""
    last = _last_error_line(job)
    if _is_abandonment(last):
        tries = job.meta.get("tries") if isinstance(job.meta, dict) else None
        times = f"on all {tries} tries" if isinstance(tries, int) and tries > 1 else "and it had no retry left"
        return (f"its worker stopped heartbeating while running it {times} (killed, out of memory, or cut off "
                "from Redis); see the worker logs")
    return last or "no traceback recorded"


def abandoned_before_this_program(job: Job) -> bool:
    """True for a failed `job` whose last try was abandoned (its worker stopped heartbeating) and had begun before
    this program started: a worker of an earlier run left it, and it is no failure of this run's."""
    return (_is_abandonment(_last_error_line(job)) and job.started_at is not None
            and job.started_at < PROGRAM_STARTED_AT)


def _orphans(connection: Redis, jobs: dict[str, Job]) -> set[str]:
    """Ids of jobs that no worker can ever finish: QUEUED but in no queue list, or STARTED with no execution
    entry in their queue's StartedJobRegistry (a Redis restart that lost its last writes can leave them)."""
    orphans = set()
    by_queue: dict[str, tuple[set[str], set[str]]] = {}
    for job_id, job in jobs.items():
        status = job.get_status(refresh=False)
        if status not in (JobStatus.QUEUED, JobStatus.STARTED) or not job.origin:
            continue
        if job.origin not in by_queue:
            queue = Queue(job.origin, connection=connection, serializer=JSONSerializer)
            started = {job_id for job_id, _ in StartedJobRegistry(queue=queue).get_job_and_execution_ids(cleanup=False)}
            by_queue[job.origin] = (set(queue.get_job_ids()), started)
        queued, started = by_queue[job.origin]
        lost_queued = status == JobStatus.QUEUED and job_id not in queued
        if lost_queued or (status == JobStatus.STARTED and job_id not in started):
            orphans.add(job_id)
    return orphans


def wait_for_jobs(
    connection: Redis,
    job_ids: list[str],
    *,
    timeout_s: float,
    poll_s: float = 0.5,
    progress: Callable[[WaitProgress], None] | None = None,
    queues: tuple[str, ...] = ALL_QUEUES,
    specs: dict[str, JobSpec] | None = None,
    patience: RedisPatience | None = None,
    orphan_check_s: float = 10.0,
) -> dict[str, Any]:
    """Block until every job finished; return {job_id: return value}.

    While waiting, jobs of dead workers are requeued (cleanup_started; not just after a Redis outage, so that live
    workers heartbeat first: see RedisPatience.in_grace), Redis outages are ridden out (`patience`), and, when `specs`
    ({job_id: JobSpec}) is given, a job that vanished from Redis, or stayed orphaned (see _orphans) for two checks
    `orphan_check_s` apart, is enqueued again.

    Raises JobFailedError as soon as one job has failed for good (tries used up), naming it and the last line
    of its traceback, or was stopped or canceled by hand, or vanished without a spec to redo it;
    JobsTimeoutError when `timeout_s` passes (saying how many jobs never started, the usual sign that no worker
    listens on the queue); RedisLostError when Redis stays away longer than the patience allows.
    """
    patience = patience or RedisPatience(connection)
    start = time.monotonic()
    results: dict[str, Any] = {}
    last_reported = None
    running: dict[str, dict] = {}
    orphan_state = {"suspects": set(), "next_check": start + orphan_check_s}

    def poll() -> int:
        """One look at every unfinished job; returns how many are running."""
        if not patience.in_grace():
            cleanup_started(connection, queues)
        started = 0
        running.clear()
        pending: dict[str, Job] = {}
        for job_id, job in zip(job_ids, Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer)):
            if job_id in results:
                continue
            if job is None:
                if specs is None or job_id not in specs:
                    raise JobFailedError(f"job {job_id} vanished from Redis (expired or deleted); "
                                         "re-run the flow to redo it")
                log.warning("job %s vanished from Redis (a restart without persistence?); enqueueing it again", job_id)
                _enqueue_once(connection, specs[job_id])
                continue
            status = job.get_status(refresh=False)
            if status == JobStatus.FINISHED:
                results[job_id] = job.return_value()
            elif status == JobStatus.FAILED and specs is not None and job_id in specs \
                    and abandoned_before_this_program(job):
                log.warning("job %s was left running by a worker of an earlier run (stopped or killed); enqueueing "
                            "it again with all its tries", job_id)
                _delete_job(connection, job)
                _enqueue_once(connection, specs[job_id])
            elif status == JobStatus.FAILED:
                raise JobFailedError(f"job {job_id} failed: {failure_text(job)}")
            elif status in (JobStatus.STOPPED, JobStatus.CANCELED):  # final: no worker will ever run it
                raise JobFailedError(f"job {job_id} was {status.value} by hand and will never finish; "
                                     "re-run the flow to enqueue it again")
            else:
                pending[job_id] = job
                started += status == JobStatus.STARTED
                record = job.meta.get(PROGRESS_KEY) if isinstance(job.meta, dict) else None
                if status == JobStatus.STARTED and isinstance(record, dict):
                    running[job_id] = record
        if specs is not None and pending and time.monotonic() >= orphan_state["next_check"] and not patience.in_grace():
            orphans = _orphans(connection, pending)
            for job_id in orphans & orphan_state["suspects"]:
                log.warning("job %s is %s but no worker can see it (lost in a Redis restart?); enqueueing it again",
                            job_id, pending[job_id].get_status(refresh=False))
                _delete_job(connection, pending[job_id])
                _enqueue_once(connection, specs[job_id])
            orphan_state["suspects"] = orphans - orphan_state["suspects"]
            orphan_state["next_check"] = time.monotonic() + orphan_check_s
        return started

    while True:
        started = patience.call(poll, "waiting for jobs")
        elapsed = time.monotonic() - start
        snapshot = (len(results), started, tuple(sorted((k, r.get("time")) for k, r in running.items())))
        if progress is not None and snapshot != last_reported:
            progress(WaitProgress(len(results), len(job_ids), started, elapsed, dict(results), dict(running)))
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
    patience: RedisPatience | None = None,
) -> dict[str, Any]:
    """Enqueue all `specs` (skipping finished ones) and wait for them, redoing lost ones; returns {job_id: result}."""
    patience = patience or RedisPatience(connection)
    for spec in specs:
        enqueue(connection, spec, patience)
    queues = tuple(sorted({s.queue for s in specs})) or ALL_QUEUES
    return wait_for_jobs(connection, [s.job_id for s in specs], timeout_s=timeout_s, progress=progress, queues=queues,
                         specs={s.job_id: s for s in specs}, patience=patience)
