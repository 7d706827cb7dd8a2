"""services.worker_time: worker-seconds by role inside a window, from rq's job records (fakeredis, real jobs run by
an in-process worker)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from rq.job import Job
from rq.serializers import JSONSerializer

from services.jobqueue import QUEUE_EVAL, JobSpec, enqueue
from services.payloads import MatchPayload
from services.worker_time import WorkerTime, job_role, worker_time
from tests.services.conftest import match_payload, run_burst_worker

PREFIX = "zf-abc-tictactoe-g"


def _run(connection, layout, config, context, job_ids: list[str]) -> list[Job]:
    """Run cheap real match jobs (random against random) under `job_ids`; returns their rq Jobs."""
    payload = MatchPayload.model_validate(match_payload(layout, config, "random", "random", [0], 1, seed=3))
    for job_id in job_ids:
        enqueue(connection, JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_EVAL,
                                    job_id=job_id, timeout_s=60))
    run_burst_worker(connection, context)
    return Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer)


def _seconds(job: Job) -> float:
    return (job.ended_at - job.started_at).total_seconds()


def test_job_roles_come_from_the_ids() -> None:
    assert job_role(f"{PREFIX}000003-m000002-sp0001") == "selfplay"
    assert job_role(f"{PREFIX}000003-train-000002") == "train"
    assert job_role(f"{PREFIX}000003-gate-000004-vs-000002-m000") == "gate"
    assert job_role(f"{PREFIX}000003-anchor-000004-m001") == "anchor"
    assert job_role("some-other-job") is None


def test_busy_time_by_role_inside_the_window_only_for_this_pipeline(fake_redis, layout, config, context) -> None:
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    ids = [f"{PREFIX}000001-gate-000002-vs-000001-m000", f"{PREFIX}000001-anchor-000002-m000",
           f"{PREFIX}000002-m000001-sp0000", "zf-other-tictactoe-g000001-gate-000002-vs-000001-m000"]
    jobs = _run(fake_redis, layout, config, context, ids)
    after = datetime.now(timezone.utc) + timedelta(seconds=1)
    split = worker_time(fake_redis, PREFIX, before, after)
    assert split.gate_s == pytest.approx(_seconds(jobs[0]), abs=1e-3)
    assert split.anchor_s == pytest.approx(_seconds(jobs[1]), abs=1e-3)
    assert split.selfplay_s == pytest.approx(_seconds(jobs[2]), abs=1e-3)    # the other pipeline's job is not counted
    assert split.train_s == 0.0
    # the burst worker has ended: no live worker, so no idle time either
    assert split.workers == 0 and split.idle_s == 0.0
    assert split.window_s == pytest.approx((after - before).total_seconds())
    # a window after the jobs holds none of their time; one cut through a job holds only its part
    assert worker_time(fake_redis, PREFIX, after, after + timedelta(seconds=5)).total_s == 0.0
    middle = jobs[0].started_at.replace(tzinfo=timezone.utc) + timedelta(seconds=_seconds(jobs[0]) / 2)
    cut = worker_time(fake_redis, PREFIX, middle, after)
    assert cut.gate_s == pytest.approx(_seconds(jobs[0]) / 2, abs=1e-3)


def test_a_live_worker_that_runs_nothing_is_idle(fake_redis, context) -> None:
    from services.worker import ZeroforgeWorker

    start = datetime.now(timezone.utc)
    worker = ZeroforgeWorker(["selfplay"], connection=fake_redis, serializer=JSONSerializer, context=context)
    worker.register_birth()
    worker.heartbeat()
    end = start + timedelta(seconds=30)
    split = worker_time(fake_redis, PREFIX, start, end)
    assert split.workers == 1
    assert split.idle_s == pytest.approx(30.0, abs=1.0) and split.share("idle") == pytest.approx(1.0)


def test_shares_and_the_line() -> None:
    split = WorkerTime(workers=2, window_s=100.0, selfplay_s=140.0, train_s=40.0, gate_s=10.0, anchor_s=0.0,
                       idle_s=10.0)
    assert split.total_s == 200.0 and split.share("selfplay") == pytest.approx(0.7)
    assert split.line() == ("2 worker(s) x 100 s: self-play 70% (140 s), training 20% (40 s), gate 5% (10 s), "
                            "anchor 0% (0 s), idle 5% (10 s)")
    assert WorkerTime(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0).share("idle") is None


def test_withdrawing_leaves_started_and_finished_jobs_alone(fake_redis, layout, config, context) -> None:
    from rq.job import JobStatus

    from services.jobqueue import withdraw_queued

    done = _run(fake_redis, layout, config, context, [f"{PREFIX}000002-m000001-sp0000"])[0]
    payload = MatchPayload.model_validate(match_payload(layout, config, "random", "random", [0], 1, seed=3))
    queued = f"{PREFIX}000002-m000001-sp0001"
    enqueue(fake_redis, JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_EVAL, job_id=queued,
                                timeout_s=60))
    assert withdraw_queued(fake_redis, [done.id, queued, "zf-no-such-job"]) == 1
    assert Job.fetch(done.id, connection=fake_redis, serializer=JSONSerializer).get_status() == JobStatus.FINISHED
    assert Job.fetch_many([queued], connection=fake_redis, serializer=JSONSerializer) == [None]
    run_burst_worker(fake_redis, context)          # nothing left to run
