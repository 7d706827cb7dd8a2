"""services.job_cancel: a canceled job's status read through rq, and a gate chunk that stops when canceled."""
from __future__ import annotations

import threading
import time

from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

import services.job_cancel as job_cancel
from services.jobqueue import QUEUE_EVAL, JobSpec, enqueue
from services.payloads import MatchPayload
from tests.services.conftest import match_payload, run_burst_worker


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _spec(layout, config, job_id: str, player: str, openings: int) -> JobSpec:
    payload = MatchPayload.model_validate(match_payload(layout, config, player, player, list(range(openings)),
                                                        openings, seed=3))
    return JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_EVAL, job_id=job_id,
                   timeout_s=300, retries=0)


def test_the_check_reads_the_status_at_most_every_interval(fake_redis, layout, config) -> None:
    job = enqueue(fake_redis, _spec(layout, config, "zf-test-cancel", "random", 1))
    clock = _Clock()
    check = job_cancel.job_cancel_check(job, min_interval_s=2.0, clock=clock)
    assert check() is False                         # the first call reads: queued
    job.cancel()
    clock.now = 1.0
    assert check() is False                         # within the interval: not read again
    clock.now = 2.5
    assert check() is True and check() is True
    assert job_cancel.job_cancel_check(None)() is False       # outside rq: never canceled


def test_a_status_that_cannot_be_read_is_not_a_cancel() -> None:
    class Unreachable:
        id = "zf-test-unreachable"

        def get_status(self, refresh: bool = True):
            raise ConnectionError("redis is away")

    assert job_cancel.job_cancel_check(Unreachable())() is False


def test_a_canceled_match_job_stops_before_its_next_turn(fake_redis, layout, context, config, monkeypatch) -> None:
    """A long match chunk (pure MCTS on 40 openings) is canceled from another thread once it runs: the worker
    stops it at its next turn and records no pairs."""
    monkeypatch.setattr(job_cancel, "CHECK_INTERVAL_S", 0.0)
    spec = _spec(layout, config, "zf-test-cancel-running", "pure-mcts:3000", 40)
    enqueue(fake_redis, spec)
    job = Job.fetch(spec.job_id, connection=fake_redis, serializer=JSONSerializer)

    def cancel_once_started() -> None:
        deadline = time.monotonic() + 60
        while job.get_status(refresh=True) != JobStatus.STARTED and time.monotonic() < deadline:
            time.sleep(0.01)
        job.cancel()

    canceller = threading.Thread(target=cancel_once_started)
    canceller.start()
    run_burst_worker(fake_redis, context, queues=(QUEUE_EVAL,))
    canceller.join()
    result = Job.fetch(spec.job_id, connection=fake_redis, serializer=JSONSerializer).return_value()
    assert result is not None and result["stopped"] is True and result["pairs"] == []
