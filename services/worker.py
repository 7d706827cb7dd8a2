"""The zeroforge rq worker: one process that runs self-play, training and evaluation jobs.

A worker is an rq `SimpleWorker` (jobs run in the worker process itself, so torch is imported once and
models stay cached between jobs; rq's default forking worker would re-import torch for every job).
The worker's device (cpu, cuda, cuda:N) is fixed at start and read by the jobs through `job_device()`.

Start one by hand with `zeroforge worker --queues selfplay,train,eval --device cpu --redis-url URL`, or
let `zeroforge run` start local ones with `spawn_local_workers`.
"""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from redis import Redis

DEVICE_ENV = "ZEROFORGE_WORKER_DEVICE"
THREADS_ENV = "ZEROFORGE_WORKER_THREADS"

log = logging.getLogger(__name__)


class WorkerConfigError(ValueError):
    """A worker option is invalid (bad device, unknown queue); the message says which and why."""


def job_device() -> str:
    """The torch device string this worker process was started with ("cpu" by default)."""
    return os.environ.get(DEVICE_ENV, "cpu")


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


def run_worker(
    redis_url: str,
    queues: list[str],
    device: str = "cpu",
    torch_threads: int = 1,
    burst: bool = False,
    name: str | None = None,
    max_idle_time: int | None = None,
) -> None:
    """Run an rq SimpleWorker in this process until stopped (or until the queues are empty with burst).

    Imports torch and fixes its thread count before taking jobs.
    """
    from rq import SimpleWorker
    from rq.serializers import JSONSerializer

    from services.jobqueue import ALL_QUEUES

    unknown = [q for q in queues if q not in ALL_QUEUES]
    if unknown:
        raise WorkerConfigError(f"unknown queue(s) {unknown}; zeroforge uses {', '.join(ALL_QUEUES)}")
    device = validate_device(device)
    import torch

    torch.set_num_threads(max(1, torch_threads))
    os.environ[DEVICE_ENV] = device
    os.environ[THREADS_ENV] = str(torch_threads)
    connection = Redis.from_url(redis_url)
    connection.ping()
    worker_name = name or f"zf-{socket.gethostname()}-{os.getpid()}-{device.replace(':', '')}"
    worker = SimpleWorker(queues, connection=connection, serializer=JSONSerializer, name=worker_name)
    log.info("worker %s listening on %s (device %s, %d torch thread(s))", worker_name, ",".join(queues), device, torch_threads)
    worker.work(burst=burst, max_idle_time=max_idle_time, logging_level="INFO")


def listening_workers(connection: Redis, queue: str) -> int:
    """How many rq workers currently listen on `queue`."""
    from rq import Queue, Worker
    from rq.serializers import JSONSerializer

    return len(Worker.all(queue=Queue(queue, connection=connection, serializer=JSONSerializer)))


def _spawn_one(index: int, redis_url: str, queues: list[str], log_dir: Path, device: str,
               torch_threads: int, restart: int = 0) -> subprocess.Popen:
    """Start local worker `index` (`python -m services.worker ...`), appending to log_dir/worker-<index>.log."""
    env = dict(os.environ, OMP_NUM_THREADS=str(torch_threads), MKL_NUM_THREADS=str(torch_threads))
    name = f"zf-local-{os.getpid()}-{index}" + (f"-r{restart}" if restart else "")
    cmd = [sys.executable, "-m", "services.worker", "--redis-url", redis_url, "--queues", ",".join(queues),
           "--device", device, "--torch-threads", str(torch_threads), "--name", name]
    with open(log_dir / f"worker-{index}.log", "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def spawn_local_workers(
    count: int, redis_url: str, queues: list[str], log_dir: Path, device: str = "cpu", torch_threads: int = 1
) -> list[subprocess.Popen]:
    """Start `count` worker processes on this machine (`python -m services.worker ...`); logs go to log_dir."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [_spawn_one(i, redis_url, queues, log_dir, device, torch_threads) for i in range(count)]


class WorkerWatchdog:
    """Restarts local worker processes that die (crash, OOM kill) while a pipeline runs.

    The job a dead worker held is requeued by the flows' StartedJobRegistry cleanup once its heartbeat
    expires; the watchdog only makes sure that a worker is there to take it.
    """

    def __init__(self, procs: list[subprocess.Popen], redis_url: str, queues: list[str], log_dir: Path,
                 device: str = "cpu", torch_threads: int = 1, interval_s: float = 5.0) -> None:
        self.procs, self.interval_s = procs, interval_s
        self._spawn_args = (redis_url, queues, log_dir, device, torch_threads)
        self._stop = threading.Event()
        self.restarts = 0
        self._thread = threading.Thread(target=self._run, name="zeroforge-worker-watchdog", daemon=True)

    def start(self) -> "WorkerWatchdog":
        self._thread.start()
        return self

    def check_once(self) -> None:
        """Replace every worker process that has exited."""
        for i, proc in enumerate(self.procs):
            if proc.poll() is not None and not self._stop.is_set():
                self.restarts += 1
                log.warning("local worker %d (pid %d) exited with %s; restarting it", i, proc.pid, proc.returncode)
                self.procs[i] = _spawn_one(i, *self._spawn_args, restart=self.restarts)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check_once()

    def stop(self) -> None:
        """Stop watching (call before stopping the workers)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s + 1)


def stop_processes(procs: list[subprocess.Popen], timeout_s: float = 10.0) -> None:
    """Terminate processes this program started (by PID), killing those that do not exit in time."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m services.worker", description="Run one zeroforge rq worker.")
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--queues", default="selfplay,train,eval")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--name", default=None)
    parser.add_argument("--burst", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_worker(args.redis_url, [q for q in args.queues.split(",") if q], args.device, args.torch_threads, args.burst, args.name)


if __name__ == "__main__":
    _main()
