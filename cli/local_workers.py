"""Local worker processes of `zeroforge run`: start them, restart the ones that die, stop them.

Each worker is `python -m cli worker ...` with the Redis URL in its environment (never on its command line,
where `ps` would show a password) and the run's data directory as its --data-dir. A local worker dies with the
process that started it, however that process dies (kill -9 included): Linux sends it SIGKILL (PR_SET_PDEATHSIG,
shared.child_processes).
SIGKILL rather than SIGTERM because rq answers SIGTERM with a warm shutdown that first finishes the current job,
which may take an hour; the job of a killed worker is requeued by the next run (its heartbeat stops), and every
job is idempotent.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from services.worker import DEFAULT_HEARTBEAT_S, LOCAL_WORKER_PREFIX
from shared.child_processes import start_tied

log = logging.getLogger(__name__)


def _spawn_one(index: int, redis_url: str, queues: list[str], data_dir: Path, log_dir: Path, device: str,
               torch_threads: int, heartbeat_s: int, restart: int = 0) -> subprocess.Popen:
    """Start local worker `index` (`python -m cli worker ...`), appending to log_dir/worker-<index>.log."""
    env = dict(os.environ, OMP_NUM_THREADS=str(torch_threads), MKL_NUM_THREADS=str(torch_threads),
               REDIS_URL=redis_url)
    env.pop("ZEROFORGE_REDIS_URL", None)    # the worker takes REDIS_URL, this run's Redis
    name = f"{LOCAL_WORKER_PREFIX}{os.getpid()}-{index}" + (f"-r{restart}" if restart else "")
    cmd = [sys.executable, "-m", "cli", "worker", "--queues", ",".join(queues), "--data-dir", str(data_dir),
           "--device", device, "--torch-threads", str(torch_threads), "--heartbeat", str(heartbeat_s), "--name", name]
    with open(log_dir / f"worker-{index}.log", "ab") as out:
        return start_tied(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def spawn_local_workers(count: int, redis_url: str, queues: list[str], data_dir: Path, log_dir: Path,
                        device: str = "cpu", torch_threads: int = 1,
                        heartbeat_s: int = DEFAULT_HEARTBEAT_S) -> list[subprocess.Popen]:
    """Start `count` worker processes on this machine for `data_dir`; logs go to log_dir."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [_spawn_one(i, redis_url, queues, data_dir, log_dir, device, torch_threads, heartbeat_s)
            for i in range(count)]


class WorkerWatchdog:
    """Restarts local worker processes that die (crash, OOM kill) while a pipeline runs.

    The job a dead worker held is requeued by the flows' StartedJobRegistry cleanup once its heartbeat
    expires; the watchdog only makes sure that a worker is there to take it. At the end: `request_stop` (no more
    restarts), then stop the workers, then `stop`.
    """

    def __init__(self, procs: list[subprocess.Popen], redis_url: str, queues: list[str], data_dir: Path,
                 log_dir: Path, device: str = "cpu", torch_threads: int = 1, interval_s: float = 5.0,
                 heartbeat_s: int = DEFAULT_HEARTBEAT_S) -> None:
        self.procs, self.interval_s = procs, interval_s
        self._spawn_args = (redis_url, queues, data_dir, log_dir, device, torch_threads, heartbeat_s)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._restarting = True
        self.restarts = 0
        self._thread = threading.Thread(target=self._run, name="zeroforge-worker-watchdog", daemon=True)

    def start(self) -> "WorkerWatchdog":
        self._thread.start()
        return self

    def check_once(self) -> None:
        """Replace every worker process that has exited (unless stopping)."""
        with self._lock:
            for i, proc in enumerate(self.procs):
                if proc.poll() is not None and self._restarting:
                    self.restarts += 1
                    log.warning("local worker %d (pid %d) exited with %s; restarting it", i, proc.pid, proc.returncode)
                    self.procs[i] = _spawn_one(i, *self._spawn_args, restart=self.restarts)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check_once()

    def request_stop(self) -> None:
        """Restart nothing from now on (call before stopping the workers, so that none is restarted meanwhile)."""
        with self._lock:
            self._restarting = False

    def stop(self) -> None:
        """Stop watching and end the thread (call after stopping the workers)."""
        self.request_stop()
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s + 1)


def stop_processes(procs: list[subprocess.Popen], timeout_s: float = 10.0) -> None:
    """Terminate processes this program started (by PID), killing those that have not exited `timeout_s` later.

    An idle worker exits at once on SIGTERM; one in the middle of a job would first finish it (rq's warm shutdown),
    so it is killed after `timeout_s` instead: its job is redone when the run resumes (every job is idempotent)."""
    import time

    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + timeout_s
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.info("process %d still running %.1f s after SIGTERM (a worker in a job): killing it", p.pid,
                     timeout_s)
            p.kill()
            p.wait()
