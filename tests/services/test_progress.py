"""Job progress: the job functions record it in their rq job's meta; the waiter's lines and their throttle; the
warning about queues that no worker listens on."""
from __future__ import annotations

from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from cli.queue_watch import QueueWatch
from services.jobqueue import QUEUE_SELFPLAY, QUEUE_TRAIN, JobSpec, enqueue
from services.payloads import TrainPayload
from services.progress import META_KEY, LogThrottle, job_reporter, progress_text, rate_and_eta
from tests.services.conftest import run_burst_worker, selfplay_payload, train_payload


def _meta(connection, job_id: str) -> dict:
    return Job.fetch(job_id, connection=connection, serializer=JSONSerializer).meta[META_KEY]


def test_selfplay_and_training_jobs_record_their_progress_in_the_job_meta(
        fake_redis, layout, context, config, initial_version) -> None:
    play_id = "zf-test-progress-sp"
    enqueue(fake_redis, JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=play_id,
                                timeout_s=120, payload=selfplay_payload(layout, config, initial_version, play_id)))
    run_burst_worker(fake_redis, context)
    played = _meta(fake_redis, play_id)
    assert (played["kind"], played["unit"], played["done"], played["total"]) == ("self-play", "games", 4, 4)
    assert played["time"] >= played["started"]
    train_id = "zf-test-progress-train"
    enqueue(fake_redis, JobSpec(func="services.trainer.train_job", queue=QUEUE_TRAIN, job_id=train_id, timeout_s=120,
                                payload=TrainPayload.model_validate(train_payload(layout, config, initial_version))))
    run_burst_worker(fake_redis, context)
    trained = _meta(fake_redis, train_id)
    assert (trained["kind"], trained["unit"], trained["done"], trained["total"]) == ("train", "steps", 6, 6)
    assert trained["loss"] > 0


def test_a_job_run_by_hand_has_no_reporter_to_write_to() -> None:
    reporter = job_reporter("self-play", "games")
    assert not reporter.enabled
    reporter(1, 2)            # does nothing, raises nothing


def test_rates_etas_and_the_waiters_line() -> None:
    record = {"done": 30, "total": 120, "unit": "games", "started": 1000.0, "time": 1010.0}
    assert rate_and_eta(record) == (3.0, 30.0)
    assert rate_and_eta({**record, "done": 0}) == (None, None)
    line = progress_text(1, 2, 1, 35.2, {"job-b": {**record, "unit": "steps", "loss": 2.3104}, "job-a": record})
    assert line == ("1/2 jobs done, 1 running (35 s); 30/120 games, 3.0 games/s, ETA 30 s; "
                    "30/120 steps, 3.0 steps/s, ETA 30 s, loss 2.310")


def test_the_throttle_prints_every_ten_seconds_or_when_a_job_finishes() -> None:
    now = [0.0]
    throttle = LogThrottle(10.0, clock=lambda: now[0])
    seen = []
    for t, finished in [(0, 0), (4, 0), (9.9, 0), (10.0, 0), (11, 1), (12, 1), (21, 1)]:
        now[0] = t
        seen.append(throttle.due(finished))
    assert seen == [True, False, False, True, True, False, True]


def test_a_queue_with_waiting_jobs_and_no_worker_is_warned_about_twice_looked_then_rarely(
        fake_redis, layout, config, initial_version, tmp_path) -> None:
    job_id = "zf-test-unserved"
    enqueue(fake_redis, JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id,
                                timeout_s=120, payload=selfplay_payload(layout, config, initial_version, job_id)))
    now, lines = [0.0], []
    watch = QueueWatch(fake_redis, tmp_path / "data", ("selfplay", "train"), lines.append, interval_s=10,
                       repeat_s=600, clock=lambda: now[0])
    looks = []
    for t in (10, 20, 30, 620):
        now[0] = t
        looks.append(watch.check_once())
    assert looks == [[], ["selfplay"], [], ["selfplay"]]
    assert lines[0] == (f"no worker listens on queue selfplay; start one with: zeroforge worker --data-dir "
                        f"{tmp_path / 'data'} --queues selfplay (with REDIS_URL set to this run's Redis)")
    Queue(QUEUE_SELFPLAY, connection=fake_redis, serializer=JSONSerializer).remove(job_id)   # a worker took it
    now[0] = 630
    assert watch.check_once() == []
