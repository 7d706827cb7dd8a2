"""The zeroforge rq worker: one process that runs self-play, training and evaluation jobs, and nothing else.

A worker is an rq `SimpleWorker` (jobs run in the worker process itself, so torch is imported once and
models stay cached between jobs; rq's default forking worker would re-import torch for every job).

Only zeroforge's job functions run: `ZeroforgeJob` checks the job's function name against JOB_FUNCTIONS before
anything is imported or called, ignores any callbacks a job names, and calls the function with the job's one
`payload` argument and the worker's `WorkerContext` (its data directory and device, fixed at start). Anything
else fails with RefusedJobError without running.

Start one by hand with `zeroforge worker --data-dir D --device cpu --redis-url URL`, or let `zeroforge run`
start local ones (cli/local_workers.py).
"""
from __future__ import annotations

import importlib
import logging
import os
import socket
from typing import Any

from redis import Redis
from rq import Queue, SimpleWorker, Worker
from rq.job import Job
from rq.serializers import JSONSerializer

from services.payloads import WorkerContext
from services.jobqueue import ALL_QUEUES

log = logging.getLogger(__name__)

#: The dotted names of the only functions a zeroforge worker runs (each takes (payload, WorkerContext)).
JOB_FUNCTIONS = (
    "services.selfplay.selfplay_job",
    "services.trainer.train_job",
    "services.gatekeeper.match_job",
)


class RefusedJobError(RuntimeError):
    """A job that names a function other than zeroforge's job functions, or other arguments; it never runs."""


class WorkerConfigError(ValueError):
    """A worker option is invalid (bad device, unknown queue); the message says which and why."""


def validate_device(device: str) -> str:
    """Check that `device` is "cpu", "cuda" or "cuda:N" and usable here; return it normalised."""
    import torch

    if device == "cpu":
        return device
    if device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()):
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


class ZeroforgeWorker(SimpleWorker):
    """A SimpleWorker that hands its WorkerContext to every ZeroforgeJob it performs."""

    job_class = ZeroforgeJob

    def __init__(self, *args: Any, context: WorkerContext, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context = context

    def perform_job(self, job: Job, queue: Queue, execution: Any) -> bool:
        if isinstance(job, ZeroforgeJob):
            job.worker_context = self.context
        return super().perform_job(job, queue, execution)


def run_worker(
    redis_url: str,
    queues: list[str],
    context: WorkerContext,
    torch_threads: int = 1,
    burst: bool = False,
    name: str | None = None,
    max_idle_time: int | None = None,
) -> None:
    """Run a ZeroforgeWorker in this process until stopped (or until the queues are empty with burst).

    Imports torch and fixes its thread count before taking jobs.
    """
    unknown = [q for q in queues if q not in ALL_QUEUES]
    if unknown:
        raise WorkerConfigError(f"unknown queue(s) {unknown}; zeroforge uses {', '.join(ALL_QUEUES)}")
    context = context.model_copy(update={"device": validate_device(context.device)})
    import torch

    torch.set_num_threads(max(1, torch_threads))
    connection = Redis.from_url(redis_url)
    connection.ping()
    worker_name = name or f"zf-{socket.gethostname()}-{os.getpid()}-{context.device.replace(':', '')}"
    worker = ZeroforgeWorker(queues, connection=connection, serializer=JSONSerializer, name=worker_name,
                             context=context)
    log.info("worker %s listening on %s (device %s, data %s, %d torch thread(s))", worker_name, ",".join(queues),
             context.device, context.data_dir, torch_threads)
    worker.work(burst=burst, max_idle_time=max_idle_time, logging_level="INFO")


def listening_workers(connection: Redis, queue: str) -> int:
    """How many rq workers currently listen on `queue`."""
    return len(Worker.all(queue=Queue(queue, connection=connection, serializer=JSONSerializer)))


