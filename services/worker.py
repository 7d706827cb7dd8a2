"""The zeroforge rq worker: one process that runs self-play, training and evaluation jobs (and the registry
changes asked for from hosts with only the store, services.registry_job), and nothing else.

A worker is an rq `SimpleWorker` (jobs run in the worker process itself, so torch is imported once and
models stay cached between jobs; rq's default forking worker would re-import torch for every job).

Only zeroforge's job functions run: `ZeroforgeJob` checks the job's function name against JOB_FUNCTIONS before
anything is imported or called, ignores any callbacks a job names, and calls the function with the job's one
`payload` argument and the worker's `WorkerContext` (its data directory and device, fixed at start). Anything
else fails with RefusedJobError without running.

Liveness: a worker heartbeats every `heartbeat_s` seconds (default 5), from a background thread while a job
runs, and its job's execution entry in the StartedJobRegistry lives for 4 heartbeats (20 s by default;
rq's own SimpleWorker keeps it for the job's whole timeout + 60 s). So the job of a worker killed outright is
requeued by the waiting flow (services.jobqueue.cleanup_started) about 20 s later, and `live_workers` tells a
live worker from the registration a dead one left behind (kill -9, or a Redis restart from its append-only file)
by the age of its last heartbeat.

Start one by hand with `zeroforge worker --data-dir D --device cpu` (REDIS_URL in the environment), or let
`zeroforge run` start local ones (cli/local_workers.py).
"""
from __future__ import annotations

import importlib
import logging
import os
import signal
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any

from redis import Redis
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.defaults import RQ_KEY_PREFIX
from rq.serializers import JSONSerializer
from rq.registry import FailedJobRegistry, FinishedJobRegistry
from rq.utils import as_text, utcparse
from rq.utils import now as rq_now
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY, clean_worker_registry, get_keys

from services.jobqueue import ALL_QUEUES, REDIS_DOWN_ERRORS, TTL_FIELD, RedisPatience
from services.payloads import WorkerContext
from services.redis_server import redact_url
from shared.child_processes import process_exists

log = logging.getLogger(__name__)

#: The dotted names of the only functions a zeroforge worker runs (each takes (payload, WorkerContext)).
JOB_FUNCTIONS = (
    "services.selfplay.selfplay_job",
    "services.trainer.train_job",
    "services.gatekeeper.match_job",
    "services.registry_job.registry_job",
)


#: Seconds between a worker's heartbeats (idle or busy); its job is taken for abandoned after HEARTBEATS_PER_TTL
#: heartbeats are missed.
DEFAULT_HEARTBEAT_S = 5
#: The name prefix of the local workers that `zeroforge run` starts (cli.local_workers): they die with their run
LOCAL_WORKER_PREFIX = "zf-local-"
HEARTBEATS_PER_TTL = 4


#: The worker hash field where a zeroforge worker records its device (for `zeroforge status`).
DEVICE_FIELD = "zeroforge_device"


def heartbeat_ttl(heartbeat_s: int) -> int:
    """How long a worker's registration and its job's execution entry last without a heartbeat (seconds)."""
    return HEARTBEATS_PER_TTL * heartbeat_s


class RefusedJobError(RuntimeError):
    """A job that names a function other than zeroforge's job functions, or other arguments; it never runs."""


class WorkerConfigError(ValueError):
    """A worker option is invalid (bad device, unknown queue); the message says which and why."""


def validate_device(device: str) -> str:
    """Check that `device` is "cpu", "cuda" or "cuda:N" and usable here; return it normalised."""
    import torch

    if device == "cpu":
        return device
    index_text = device[5:] if device.startswith("cuda:") else ""
    if device == "cuda" or (index_text.isascii() and index_text.isdigit() and len(index_text) <= 3):
        if not torch.cuda.is_available():
            raise WorkerConfigError(f"--device {device}: this machine has no CUDA GPU visible to torch; use --device cpu")
        index = int(device[5:]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise WorkerConfigError(f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) here (cuda:0..)")
        return device
    raise WorkerConfigError(f"--device {device!r}: expected cpu, cuda or cuda:N")


class ZeroforgeJob(Job):
    """An rq Job that runs only JOB_FUNCTIONS, as func(payload, worker_context), and never a callback."""

    worker_context: WorkerContext | None = None

    def _execute(self) -> Any:
        name = self.func_name
        if name not in JOB_FUNCTIONS:
            log.error("refused job %s: %r is not a zeroforge job function", self.id, name)
            raise RefusedJobError(f"job {self.id} refused: {name!r} is not one of zeroforge's job functions "
                                  f"({', '.join(JOB_FUNCTIONS)})")
        if self.args or set(self.kwargs) != {"payload"}:
            raise RefusedJobError(f"job {self.id} refused: zeroforge jobs take one keyword argument, payload")
        if self.worker_context is None:
            raise RefusedJobError(f"job {self.id} refused: no worker context (run it in a ZeroforgeWorker)")
        module, attribute = name.rsplit(".", 1)
        return getattr(importlib.import_module(module), attribute)(self.kwargs["payload"], self.worker_context)

    # A job could name any importable callable as a callback; zeroforge jobs have none, so none ever runs.
    @property
    def success_callback(self) -> None:
        return None

    @property
    def failure_callback(self) -> None:
        return None

    @property
    def stopped_callback(self) -> None:
        return None


class _JobHeartbeat:
    """A daemon thread that keeps a running job's execution entry (and the worker's registration) fresh."""

    def __init__(self, worker: "ZeroforgeWorker", job: Job, execution: Any) -> None:
        self.worker, self.job, self.execution = worker, job, execution
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{job.id}", daemon=True)

    def __enter__(self) -> "_JobHeartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=self.worker.heartbeat_s + 5)

    def _run(self) -> None:
        failing = False
        while not self._stop.wait(self.worker.heartbeat_s):
            try:
                self.worker.maintain_heartbeats(self.job, self.execution)
            except REDIS_DOWN_ERRORS as exc:
                if not failing:
                    log.warning("heartbeat of job %s failed (%s); retrying every %d s", self.job.id, exc,
                                self.worker.heartbeat_s)
                failing = True
                continue
            except Exception:   # a heartbeat must never take the job down with it
                log.exception("heartbeat of job %s failed", self.job.id)
                continue
            if failing:
                log.warning("heartbeat of job %s is back", self.job.id)
            failing = False


class ZeroforgeWorker(SimpleWorker):
    """A SimpleWorker that hands its WorkerContext to every ZeroforgeJob it performs and heartbeats every
    `heartbeat_s` seconds, also while a job runs (see the module docstring)."""

    job_class = ZeroforgeJob
    #: rq doubles its wait between reconnection attempts up to this (rq: 60 s, i.e. up to a minute lost after an
    #: outage); 8 s, like services.jobqueue.RedisPatience.
    max_connection_wait_time = 8.0

    def __init__(self, *args: Any, context: WorkerContext, heartbeat_s: int = DEFAULT_HEARTBEAT_S,
                 outage_s: float = 300.0, **kwargs: Any) -> None:
        if not 1 <= int(heartbeat_s) <= 300:
            raise WorkerConfigError(f"heartbeat {heartbeat_s!r} s: expected 1..300 seconds")
        self.heartbeat_s = int(heartbeat_s)
        self.outage_s = outage_s
        ttl = heartbeat_ttl(self.heartbeat_s)
        # worker_ttl - 15 is rq's idle dequeue timeout, i.e. the idle heartbeat: make it heartbeat_s
        kwargs.setdefault("worker_ttl", self.heartbeat_s + 15)
        kwargs.setdefault("job_monitoring_interval", self.heartbeat_s)
        super().__init__(*args, **kwargs)
        self.context = context
        self.execution_ttl = ttl

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        """The life of a running job's execution entry without a heartbeat (short: the heartbeat thread renews it)."""
        return self.execution_ttl

    def set_shutdown_requested_date(self) -> None:
        """Record a stop request in Redis when it can (for dashboards); a stop must work while Redis is away."""
        try:
            super().set_shutdown_requested_date()
        except REDIS_DOWN_ERRORS:
            pass

    def serialize(self) -> dict:
        """rq's worker record, plus the heartbeat TTL that live_workers and the flows' recovery grace read."""
        return {**super().serialize(), TTL_FIELD: self.execution_ttl, DEVICE_FIELD: self.context.device}

    def perform_job(self, job: Job, queue: Queue, execution: Any) -> bool:
        """Run `job` with this worker's context, heartbeating from a thread until it has ended."""
        if isinstance(job, ZeroforgeJob):
            job.worker_context = self.context
        with _JobHeartbeat(self, job, execution):
            return super().perform_job(job, queue, execution)

    # A job that ends while Redis is away keeps its result: recording it waits for Redis (rq would give up at once,
    # and the job would be run again). rq 3's hooks for the end of a job, overridden with the same signatures.
    def _patience(self) -> RedisPatience:
        """Waits for Redis up to outage_s, unless this worker is asked to stop (then the job is simply redone)."""
        return RedisPatience(self.connection, self.outage_s,
                             give_up=lambda: self._stop_requested or self._shutdown_requested_date is not None)

    def _finalize_success(self, job: Job, queue: Queue, execution: Any, return_value: Any) -> None:
        self._patience().call(
            lambda: super(ZeroforgeWorker, self)._finalize_success(job, queue, execution, return_value),
            f"recording the result of job {job.id}")

    def _finalize_failure(self, job: Job, queue: Queue, execution: Any, exc_info: Any) -> None:
        self._patience().call(
            lambda: super(ZeroforgeWorker, self)._finalize_failure(job, queue, execution, exc_info),
            f"recording the failure of job {job.id}")

    def clean_registries(self) -> None:
        """rq's periodic maintenance, without requeueing abandoned jobs: that is the waiting flow's part
        (services.jobqueue.wait_for_jobs), which holds back right after a Redis outage; a worker that has just
        reconnected would take every running job for abandoned, since their heartbeats are as old as the outage."""
        for queue in self.queues:
            if queue.acquire_maintenance_lock():
                for registry in (FinishedJobRegistry, FailedJobRegistry):
                    registry(name=queue.name, connection=queue.connection, job_class=queue.job_class,
                             serializer=queue.serializer).cleanup()
                clean_worker_registry(queue)
                queue.release_maintenance_lock()
        self.last_cleaned_at = rq_now()


def run_worker(
    redis_url: str,
    queues: list[str],
    context: WorkerContext,
    torch_threads: int = 1,
    burst: bool = False,
    name: str | None = None,
    max_idle_time: int | None = None,
    heartbeat_s: int = DEFAULT_HEARTBEAT_S,
    outage_s: float = 300.0,
) -> None:
    """Run a ZeroforgeWorker in this process until stopped (or until the queues are empty with burst).

    Imports torch and fixes its thread count before taking jobs. Redis going away is ridden out: rq retries its
    own dequeue, and when a Redis call fails elsewhere (a job finishing while Redis is down), the worker waits for
    Redis (up to `outage_s`, then RedisLostError) and starts again under a fresh name; the job it held is
    requeued by the flow (and is idempotent).
    """
    unknown = [q for q in queues if q not in ALL_QUEUES]
    if unknown:
        raise WorkerConfigError(f"unknown queue(s) {unknown}; zeroforge uses {', '.join(ALL_QUEUES)}")
    context = context.model_copy(update={"device": validate_device(context.device)})
    import torch

    torch.set_num_threads(max(1, torch_threads))
    connection = Redis.from_url(redis_url, socket_connect_timeout=5, health_check_interval=15)
    connection.ping()
    base_name = name or f"zf-{socket.gethostname()}-{os.getpid()}-{context.device.replace(':', '')}"
    clear_ghost(connection, base_name)
    restart = 0
    while True:
        worker_name = base_name if restart == 0 else f"{base_name}-c{restart}"
        worker = ZeroforgeWorker(queues, connection=connection, serializer=JSONSerializer, name=worker_name,
                                 context=context, heartbeat_s=heartbeat_s, outage_s=outage_s)
        log.info("worker %s listening on %s (device %s, data %s, %d torch thread(s), heartbeat %d s)", worker_name,
                 ",".join(queues), context.device, context.data_dir, torch_threads, heartbeat_s)
        try:
            worker.work(burst=burst, max_idle_time=max_idle_time, logging_level="INFO")
        except REDIS_DOWN_ERRORS as exc:
            if worker._shutdown_requested_date is not None:   # asked to stop: Redis being away changes nothing
                return
            log.warning("worker %s lost Redis at %s (%s); waiting for it", worker_name, redact_url(redis_url), exc)
        else:
            stopped = worker._shutdown_requested_date is not None or worker._stop_requested
            if burst or max_idle_time is not None or stopped:
                return
            log.warning("worker %s stopped on an error (logged above); starting again", worker_name)
            time.sleep(2.0)
        # between two rq work loops, SIGTERM and SIGINT simply end the process (no job runs here)
        signal.signal(signal.SIGTERM, _exit_on_signal)
        signal.signal(signal.SIGINT, _exit_on_signal)
        RedisPatience(connection, outage_s).call(connection.ping, "waiting to restart the worker")
        restart += 1


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def heartbeat_age_s(last_heartbeat: bytes | None) -> float | None:
    """Seconds since a worker hash's `last_heartbeat` value (bytes, rq's UTC format); None when absent or bad."""
    if not last_heartbeat:
        return None
    try:
        moment = utcparse(as_text(last_heartbeat))
    except ValueError:
        return None
    return (datetime.now(timezone.utc) - moment.replace(tzinfo=timezone.utc)).total_seconds()


def live_workers(connection: Redis, queue: str) -> list[str]:
    """Names of the workers listening on `queue` that heartbeat: registered, not dead, and whose last heartbeat is
    younger than their heartbeat TTL (a zeroforge worker records it; others get rq's default 420 s). The
    registration a killed worker leaves behind (kill -9, or a Redis restarted from its append-only file) is
    ignored, so `zeroforge run` never counts a dead worker as listening."""
    names = []
    q = Queue(queue, connection=connection, serializer=JSONSerializer)
    for key in sorted(get_keys(queue=q)):
        name = key.removeprefix(f"{RQ_KEY_PREFIX}:worker:")
        last, death, ttl, host, pid = connection.hmget(key, "last_heartbeat", "death", TTL_FIELD, "hostname", "pid")
        if worker_is_live(last, death, ttl, name, host, pid):
            names.append(name)
    return names


def worker_is_live(last_heartbeat: bytes | None, death: bytes | None, ttl: bytes | None, name: str = "",
                   hostname: bytes | None = None, pid: bytes | None = None) -> bool:
    """Whether a worker hash's fields (last_heartbeat, death, TTL_FIELD, and its `name`, hostname and pid; bytes or
    None) say it lives: no death recorded and a heartbeat younger than its TTL (rq's 420 s for a worker that records
    none), and, for a local worker of `zeroforge run` registered from this host, a process with its pid: those die
    with their run (kill -9 included), and a rerun at once must not wait for their heartbeats to expire."""
    age = heartbeat_age_s(last_heartbeat)
    limit = float(as_text(ttl)) if ttl and as_text(ttl).isdigit() else 420.0
    return death is None and age is not None and age <= limit and not _local_worker_gone(name, hostname, pid)


def _local_worker_gone(name: str, hostname: bytes | None, pid: bytes | None) -> bool:
    """True for a local worker of `zeroforge run` (LOCAL_WORKER_PREFIX) registered from this host whose process no
    longer exists."""
    if not name.startswith(LOCAL_WORKER_PREFIX) or hostname is None or as_text(hostname) != socket.gethostname():
        return False
    try:
        return not process_exists(int(as_text(pid or b"")))
    except ValueError:          # no pid recorded
        return False


def clear_ghost(connection: Redis, name: str) -> None:
    """Remove the registration that a dead worker named `name` left behind (no heartbeat within its TTL), so that
    a new worker can take the name; WorkerConfigError when a live worker already has it."""
    key = f"{RQ_KEY_PREFIX}:worker:{name}"
    last, death, ttl = connection.hmget(key, "last_heartbeat", "death", TTL_FIELD)
    if last is None and death is None:
        return
    if worker_is_live(last, death, ttl):
        age = heartbeat_age_s(last) or 0.0
        raise WorkerConfigError(f"a live worker named {name!r} is registered (heartbeat {age:.0f} s ago); "
                                "choose another --name")
    with connection.pipeline() as pipe:
        pipe.delete(key)
        pipe.srem(REDIS_WORKER_KEYS, key)
        for queue in ALL_QUEUES:
            pipe.srem(WORKERS_BY_QUEUE_KEY % queue, key)
        pipe.execute()
    log.info("removed the registration of dead worker %s", name)


def listening_workers(connection: Redis, queue: str) -> int:
    """How many live rq workers (see live_workers) listen on `queue`."""
    return len(live_workers(connection, queue))
