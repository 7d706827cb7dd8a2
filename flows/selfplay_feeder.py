"""Continuous self-play: while a generation trains, gates and measures its candidate, keep the self-play queue
holding a job for every live self-play worker, so that no worker waits for work (pipeline.overlap_selfplay).

The jobs belong to the next generation and are played by the model its base jobs were enqueued ahead with (the best
model at this generation's start); workers take training and eval jobs first (queue priority), so these jobs only
fill workers that would otherwise be idle. The next generation waits for every job enqueued for it, so the number
of games a generation trains on follows how long the one before it kept workers free (training steps then follow
the new positions where train.samples_per_position is set).
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from rq import Queue
from rq.serializers import JSONSerializer

from services.jobqueue import QUEUE_SELFPLAY, REDIS_DOWN_ERRORS, JobSpec, RedisLostError, RedisPatience, connect, enqueue
from services.worker import live_workers

#: At most this many times a generation's jobs_per_generation are enqueued for it (a bound for a generation whose
#: training or gate never starts: the pipeline's own wait limit ends that one).
MAX_JOBS_FACTOR = 4


class SelfPlayFeeder:
    """A background thread that tops up the self-play queue with the next jobs of one generation.

    make_spec(i): the JobSpec of that generation's self-play job i. first_index: the first index not yet enqueued
    (the jobs enqueued ahead at the generation's start are 0..first_index-1). `jobs` is the number of jobs
    enqueued for the generation so far (first_index at the start). Use as a context manager."""

    def __init__(self, make_spec: Callable[[int], JobSpec], first_index: int, max_jobs: int, logger,
                 poll_s: float = 2.0):
        self._make_spec, self.jobs, self._max_jobs = make_spec, first_index, max_jobs
        self._logger, self._poll_s = logger, poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="selfplay-feeder", daemon=True)

    def __enter__(self) -> "SelfPlayFeeder":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def top_up(self, connection) -> int:
        """Enqueue jobs until the self-play queue holds one waiting job per live self-play worker (or the bound is
        reached); returns how many this call enqueued."""
        waiting = Queue(QUEUE_SELFPLAY, connection=connection, serializer=JSONSerializer).count
        wanted = len(live_workers(connection, QUEUE_SELFPLAY))
        added = 0
        while waiting + added < wanted and self.jobs < self._max_jobs:
            enqueue(connection, self._make_spec(self.jobs), RedisPatience(connection, outage_s=self._poll_s))
            self.jobs += 1
            added += 1
        return added

    def _run(self) -> None:
        connection = None
        while not self._stop.is_set():
            try:
                connection = connection or connect()
                self.top_up(connection)
            except (*REDIS_DOWN_ERRORS, RedisLostError):   # the generation's own waits report an outage
                connection = None
            except Exception as exc:        # never let topping up break the generation
                self._logger.warning("continuous self-play stopped topping up the queue: %s", exc)
                return
            self._stop.wait(self._poll_s)
