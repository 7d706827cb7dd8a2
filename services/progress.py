"""Job progress: what a running job reports through its rq job meta, and how a waiter words it.

A job function asks `job_reporter(kind)` for a reporter; inside an rq worker it writes
`job.meta["progress"]` ({"kind", "done", "total", "unit", "started", "time", and extra figures such as
"loss"}) with `job.save_meta()`, at most every `min_interval_s` seconds (and always for the last unit); run by
hand (`zeroforge selfplay`), there is no rq job and the reporter does nothing. Reporting never fails a job: a
Redis error while saving is logged once and skipped.

`services.jobqueue.wait_for_jobs` hands the progress of the running jobs to its callback (WaitProgress.running),
and `progress_text` / `LogThrottle` turn it into plain log lines at most every ~10 s.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable

log = logging.getLogger(__name__)

#: The meta key of a job's progress record.
META_KEY = "progress"
#: Seconds between two progress lines of a waiter, unless a job finished meanwhile.
LOG_INTERVAL_S = 10.0


class JobReporter:
    """Writes one job's progress to its rq meta (see the module docstring); `enabled` is False outside rq."""

    def __init__(self, job: Any, kind: str, unit: str, min_interval_s: float = 2.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.job, self.kind, self.unit, self.min_interval_s, self._clock = job, kind, unit, min_interval_s, clock
        self.started = clock()
        self._last = float("-inf")
        self._failed = False

    @property
    def enabled(self) -> bool:
        return self.job is not None

    def __call__(self, done: int, total: int, **figures: float) -> None:
        """Record `done` of `total` units (ints >= 0) and extra `figures` (e.g. loss=1.23), throttled."""
        now = self._clock()
        if self.job is None or (now - self._last < self.min_interval_s and done < total):
            return
        self._last = now
        record = {"kind": self.kind, "done": int(done), "total": int(total), "unit": self.unit,
                  "started": self.started, "time": now, **{k: float(v) for k, v in figures.items()}}
        try:
            self.job.meta[META_KEY] = record
            self.job.save_meta()
        except Exception as exc:   # progress is a nicety: it never takes the job down
            if not self._failed:
                log.warning("could not record the progress of job %s (%s); going on without it", self.job.id, exc)
            self._failed = True


def job_reporter(kind: str, unit: str, min_interval_s: float = 2.0) -> JobReporter:
    """A JobReporter for the rq job running in this process (a no-op one when none is: a job run by hand).
    kind: "self-play", "train" or "match"; unit: what `done` counts ("games", "steps")."""
    from rq import get_current_job

    return JobReporter(get_current_job(), kind, unit, min_interval_s)


def rate_and_eta(record: dict) -> tuple[float | None, float | None]:
    """(units per second, seconds left) of a progress record; None where it cannot be told yet."""
    elapsed = float(record.get("time", 0)) - float(record.get("started", 0))
    done, total = int(record.get("done", 0)), int(record.get("total", 0))
    if elapsed <= 0 or done <= 0:
        return None, None
    rate = done / elapsed
    return rate, max(0, total - done) / rate


def record_text(record: dict) -> str:
    """One progress record as text, e.g. "96/256 games, 12.3 games/s, ETA 13 s" or "40/200 steps, loss 2.310"."""
    rate, eta = rate_and_eta(record)
    unit = record.get("unit", "")
    parts = [f"{record.get('done', 0)}/{record.get('total', '?')} {unit}"]
    if rate is not None:
        parts.append(f"{rate:.1f} {unit}/s, ETA {eta:.0f} s")
    if "moves_per_s" in record:
        parts.append(f"{record['moves_per_s']:.1f} moves/s")
    parts += [f"{name} {record[name]:.3f}" for name in ("loss", "score") if name in record]
    return ", ".join(parts)


def progress_text(finished: int, total: int, started: int, elapsed_s: float, running: dict[str, dict]) -> str:
    """A waiter's line: "1/2 jobs done, 1 running (35 s); 96/256 games, 12.3 games/s, ETA 13 s" (one record per
    running job that reported, in job id order)."""
    line = f"{finished}/{total} jobs done, {started} running ({elapsed_s:.0f} s)"
    records = [record_text(running[k]) for k in sorted(running)]
    return line + ("; " + "; ".join(records) if records else "")


class LogThrottle:
    """Says when a waiter should print: at the first call, when `finished` changed, else every `interval_s`."""

    def __init__(self, interval_s: float = LOG_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s, self._clock = interval_s, clock
        self._last_time: float | None = None
        self._last_finished: int | None = None

    def due(self, finished: int) -> bool:
        """True when a line is due now (and then counts it as printed)."""
        now = self._clock()
        if self._last_time is not None and finished == self._last_finished and now - self._last_time < self.interval_s:
            return False
        self._last_time, self._last_finished = now, finished
        return True
