"""Warns while `zeroforge run` waits on a queue that no live worker listens on.

A background thread looks at the queues every `interval_s` (10 s): a queue that holds jobs waiting to start and
has no live worker (services.worker.live_workers: a registration whose heartbeat is fresh) at two looks in a row
gets one line on stderr, within 30 s, naming the queue and the command that starts a worker; the line is
repeated every `repeat_s` (10 min) while it stays so. Two looks, so that local workers that are still starting
(importing torch) are not reported.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)


def no_worker_message(queue: str, data_dir: Path) -> str:
    """The warning for `queue`, with the command that starts a worker for it."""
    return (f"no worker listens on queue {queue}; start one with: zeroforge worker --data-dir {data_dir} "
            f"--queues {queue} (with REDIS_URL set to this run's Redis)")


class QueueWatch:
    """The thread of the module docstring; `check_once()` is one look (returns the queues warned about)."""

    def __init__(self, connection, data_dir: Path, queues: tuple[str, ...], warn: Callable[[str], None],
                 interval_s: float = 10.0, repeat_s: float = 600.0, clock: Callable[[], float] = time.monotonic):
        self.connection, self.data_dir, self.queues, self.warn = connection, data_dir, queues, warn
        self.interval_s, self.repeat_s, self._clock = interval_s, repeat_s, clock
        self._suspects: set[str] = set()
        self._warned_at: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zeroforge-queue-watch", daemon=True)

    def start(self) -> "QueueWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _unserved(self) -> set[str]:
        from rq import Queue
        from rq.serializers import JSONSerializer

        from services.worker import live_workers

        return {name for name in self.queues
                if Queue(name, connection=self.connection, serializer=JSONSerializer).count > 0
                and not live_workers(self.connection, name)}

    def check_once(self) -> list[str]:
        """One look; warns about (and returns) the queues unserved at this look and the previous one."""
        unserved = self._unserved()
        now = self._clock()
        warned = []
        for name in sorted(unserved & self._suspects):
            if now - self._warned_at.get(name, float("-inf")) >= self.repeat_s:
                self._warned_at[name] = now
                self.warn(no_worker_message(name, self.data_dir))
                warned.append(name)
        for name in self._suspects - unserved:
            self._warned_at.pop(name, None)   # served again: warn at once the next time it is not
        self._suspects = unserved
        return warned

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.check_once()
            except Exception as exc:   # Redis away: the pipeline's own patience reports that
                log.debug("queue watch skipped a look: %s", exc)
