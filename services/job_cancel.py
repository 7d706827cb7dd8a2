"""Cooperative cancellation of a running job.

rq's `Job.cancel()` only marks a job "canceled" in Redis: a worker that has already started it (zeroforge's
workers are SimpleWorkers, the job runs in the worker process) goes on running it to the end. The flows
cancel the jobs they no longer need (the remaining chunks of a gate that stopped early, the jobs of an
interrupted flow), so a job that can stop half-way asks `cancel_check()` for a function to call between its
units of work; it says True once the job's status is "canceled", reading Redis at most every `min_interval_s`.
Outside rq (a job run by hand) it is always False, and a Redis error reads as "not canceled": the job goes on.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable

from rq.job import JobStatus

log = logging.getLogger(__name__)

#: Seconds between two reads of a running job's status.
CHECK_INTERVAL_S = 2.0


def job_cancel_check(job: Any, min_interval_s: float = CHECK_INTERVAL_S,
                     clock: Callable[[], float] = time.monotonic) -> Callable[[], bool]:
    """A function () -> bool that says whether rq job `job` (None: no job) has been canceled, reading its status
    from Redis at most every `min_interval_s` seconds (the first call reads it); once True it stays True."""
    last = float("-inf")
    canceled = False

    def check() -> bool:
        nonlocal last, canceled
        if job is None or canceled or clock() - last < min_interval_s:
            return canceled
        last = clock()
        try:
            canceled = job.get_status(refresh=True) == JobStatus.CANCELED
        except Exception as exc:    # a status read never takes the job down: it goes on as if not canceled
            log.debug("could not read the status of job %s (%s)", job.id, exc)
        return canceled

    return check


def cancel_check(min_interval_s: float | None = None) -> Callable[[], bool]:
    """job_cancel_check for the rq job running in this process (always False when none is: a job run by hand),
    every `min_interval_s` seconds (None: CHECK_INTERVAL_S)."""
    from rq import get_current_job

    return job_cancel_check(get_current_job(), CHECK_INTERVAL_S if min_interval_s is None else min_interval_s)
