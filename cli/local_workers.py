"""Local worker processes of `zeroforge run`: start them, restart the ones that die, stop them.

Each worker is `python -m cli worker ...` with the Redis URL in its environment (never on its command line,
where `ps` would show a password) and the run's data directory as its --data-dir.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

log = logging.getLogger(__name__)


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when the parent (`zeroforge run`) dies, however it
    dies (kill -9 included), so that no worker outlives its run. A no-op where prctl is missing."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _spawn_one(index: int, redis_url: str, queues: list[str], data_dir: Path, log_dir: Path, device: str,
               torch_threads: int, restart: int = 0) -> subprocess.Popen:
    """Start local worker `index` (`python -m cli worker ...`), appending to log_dir/worker-<index>.log."""
    env = dict(os.environ, OMP_NUM_THREADS=str(torch_threads), MKL_NUM_THREADS=str(torch_threads),
               REDIS_URL=redis_url)
    name = f"zf-local-{os.getpid()}-{index}" + (f"-r{restart}" if restart else "")
    cmd = [sys.executable, "-m", "cli", "worker", "--queues", ",".join(queues), "--data-dir", str(data_dir),
           "--device", device, "--torch-threads", str(torch_threads), "--name", name]
    with open(log_dir / f"worker-{index}.log", "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                preexec_fn=_die_with_parent)


def spawn_local_workers(count: int, redis_url: str, queues: list[str], data_dir: Path, log_dir: Path,
                        device: str = "cpu", torch_threads: int = 1) -> list[subprocess.Popen]:
    """Start `count` worker processes on this machine for `data_dir`; logs go to log_dir."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [_spawn_one(i, redis_url, queues, data_dir, log_dir, device, torch_threads) for i in range(count)]


class WorkerWatchdog:
    """Restarts local worker processes that die (crash, OOM kill) while a pipeline runs.

    The job a dead worker held is requeued by the flows' StartedJobRegistry cleanup once its heartbeat
    expires; the watchdog only makes sure that a worker is there to take it.
    """

    def __init__(self, procs: list[subprocess.Popen], redis_url: str, queues: list[str], data_dir: Path,
                 log_dir: Path, device: str = "cpu", torch_threads: int = 1, interval_s: float = 5.0) -> None:
        self.procs, self.interval_s = procs, interval_s
        self._spawn_args = (redis_url, queues, data_dir, log_dir, device, torch_threads)
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


