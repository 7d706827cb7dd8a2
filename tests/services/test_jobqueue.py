"""services.jobqueue on an in-memory Redis (fakeredis) with an in-process rq SimpleWorker in burst mode."""
from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

import services.jobqueue as jobqueue
from services.jobqueue import (QUEUE_EVAL, QUEUE_SELFPLAY, JobFailedError, JobsTimeoutError, JobSpec, WaitProgress,
                               enqueue, run_jobs, wait_for_jobs)
from services.payloads import MatchPayload
from services.progress import JobReporter, record_text
from tests.services.conftest import match_payload, run_burst_worker, selfplay_payload

def _match_spec(layout, config, job_id: str, retries: int = 2) -> JobSpec:
    """A cheap real job: random against random on one tic-tac-toe opening."""
    payload = MatchPayload.model_validate(match_payload(layout, config, "random", "random", [0], 1, seed=3))
    return JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_EVAL, job_id=job_id,
                   timeout_s=60, retries=retries)


def _fetch(connection, job_id: str) -> Job:
    return Job.fetch(job_id, connection=connection, serializer=JSONSerializer)


def test_selfplay_job_runs_through_the_queue(fake_redis, layout, context, config, initial_version) -> None:
    job_id = "zf-test-tictactoe-g000001-sp0000"
    spec = JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id, timeout_s=120,
                   payload=selfplay_payload(layout, config, initial_version, job_id))
    assert enqueue(fake_redis, spec).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis, context)
    reports: list[WaitProgress] = []
    results = wait_for_jobs(fake_redis, [job_id], timeout_s=10, poll_s=0.01, progress=reports.append)
    summary = results[job_id]
    assert summary["games"] == 4 and summary["reused"] is False and summary["positions"] >= 4 * 5
    assert Path(summary["shard"]).name == f"{job_id}.h5" and (layout.root / summary["shard"]).is_file()
    assert reports and reports[-1].finished == reports[-1].total == 1 and reports[-1].results == results


def test_a_finished_job_is_not_enqueued_again(fake_redis, layout, context, config) -> None:
    spec = _match_spec(layout, config, "zf-test-match")
    first = run_jobs_with_worker(fake_redis, context, [spec])
    assert [p["opening"] for p in first["zf-test-match"]["pairs"]] == [0]
    again = enqueue(fake_redis, spec)
    assert again.get_status() == JobStatus.FINISHED
    assert Queue(QUEUE_EVAL, connection=fake_redis, serializer=JSONSerializer).count == 0
    assert wait_for_jobs(fake_redis, [spec.job_id], timeout_s=1, poll_s=0.01) == first


def run_jobs_with_worker(connection, context, specs: list[JobSpec]) -> dict:
    for spec in specs:
        enqueue(connection, spec)
    run_burst_worker(connection, context)
    return run_jobs(connection, specs, timeout_s=5)


def test_a_failing_job_names_itself_and_its_error_after_the_retries(
        fake_redis, layout, context, config, initial_version) -> None:
    job_id = "zf-test-bad-model"
    spec = JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id, timeout_s=60,
                   retries=1, payload=selfplay_payload(layout, config, "000099", job_id))
    enqueue(fake_redis, spec)
    run_burst_worker(fake_redis, context)  # runs it, the retry requeues it, and the burst worker runs it again
    job = _fetch(fake_redis, job_id)
    assert job.get_status() == JobStatus.FAILED and job.retries_left == 0  # its one retry was used
    with pytest.raises(JobFailedError, match=rf"job {job_id} failed: .*RegistryError.*unknown model version 000099"):
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01)
    # enqueueing a failed job again gives it a fresh start (the flow's resume path)
    assert enqueue(fake_redis, spec).get_status() == JobStatus.QUEUED


def test_waiting_without_a_worker_times_out_with_a_hint(fake_redis, layout, config) -> None:
    enqueue(fake_redis, _match_spec(layout, config, "zf-test-orphan"))
    with pytest.raises(JobsTimeoutError) as caught:
        wait_for_jobs(fake_redis, ["zf-test-orphan"], timeout_s=0.2, poll_s=0.05)
    message = str(caught.value)
    assert "1 of 1 jobs unfinished" in message and "1 never started" in message
    assert "is a worker listening" in message and "zeroforge worker" in message


def test_a_vanished_job_is_reported(fake_redis) -> None:
    with pytest.raises(JobFailedError, match="zf-test-never-enqueued vanished"):
        wait_for_jobs(fake_redis, ["zf-test-never-enqueued"], timeout_s=1, poll_s=0.01)


def test_a_canceled_job_fails_the_wait_at_once(fake_redis, layout, config) -> None:
    job = enqueue(fake_redis, _match_spec(layout, config, "zf-test-canceled"))
    job.cancel()
    with pytest.raises(JobFailedError, match="zf-test-canceled was canceled"):
        wait_for_jobs(fake_redis, ["zf-test-canceled"], timeout_s=2, poll_s=0.01)


def _start_and_abandon(connection, queue_name: str, abandon: bool = True) -> str:
    """Take the next job as a worker does (STARTED, execution in the StartedJobRegistry), then (with `abandon`)
    'kill' the worker: it never finishes the job and its execution entry expires."""
    queue = Queue(queue_name, connection=connection, serializer=JSONSerializer)
    worker = SimpleWorker([queue_name], connection=connection, serializer=JSONSerializer)
    job, _ = Queue.dequeue_any([queue], None, connection=connection, serializer=JSONSerializer)
    worker.prepare_execution(job)
    worker.prepare_job_execution(job)
    assert job.get_status() == JobStatus.STARTED
    registry = StartedJobRegistry(queue=queue)
    for entry in connection.zrange(registry.key, 0, -1) if abandon else []:
        connection.zadd(registry.key, {entry: 1})  # expired long ago
    return job.id


def test_an_abandoned_started_job_is_retried_then_finishes(fake_redis, layout, context, config) -> None:
    enqueue(fake_redis, _match_spec(layout, config, "zf-test-abandoned", retries=1))
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobsTimeoutError):  # the wait's cleanup requeues it; nobody runs it yet
        wait_for_jobs(fake_redis, [job_id], timeout_s=0.05, poll_s=0.01, queues=(QUEUE_EVAL,))
    assert _fetch(fake_redis, job_id).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis, context)
    assert [p["opening"] for p in wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01)[job_id]["pairs"]] == [0]


def test_an_abandoned_job_without_retries_fails_the_wait(fake_redis, layout, config) -> None:
    enqueue(fake_redis, _match_spec(layout, config, "zf-test-abandoned-final", retries=0))
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobFailedError, match=f"job {job_id} failed: its worker stopped heartbeating .* no retry left"):
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01, queues=(QUEUE_EVAL,))


def test_a_job_an_earlier_runs_worker_abandoned_is_enqueued_again_with_all_its_tries(
        fake_redis, layout, context, config, monkeypatch) -> None:
    spec = _match_spec(layout, config, "zf-test-left-by-earlier-run", retries=0)
    enqueue(fake_redis, spec)
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobFailedError, match="no retry left"):     # abandoned while this program runs: a failure
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01, queues=(QUEUE_EVAL,), specs={job_id: spec})
    enqueue(fake_redis, spec)                                        # the rerun's enqueue redoes the failed job
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    later = _fetch(fake_redis, job_id).started_at + datetime.timedelta(seconds=1)
    monkeypatch.setattr(jobqueue, "PROGRAM_STARTED_AT", later)      # this program started after that try began
    with pytest.raises(JobsTimeoutError):                            # enqueued again; nobody runs it yet
        wait_for_jobs(fake_redis, [job_id], timeout_s=0.2, poll_s=0.01, queues=(QUEUE_EVAL,), specs={job_id: spec})
    assert _fetch(fake_redis, job_id).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis, context)
    assert [p["opening"] for p in wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01)[job_id]["pairs"]] == [0]


def test_a_worker_runs_nothing_but_zeroforge_jobs(fake_redis, layout, context, tmp_path) -> None:
    """Any Redis client can enqueue a job; the worker refuses every function that is not a zeroforge job."""
    marker = tmp_path / "marker"
    queue = Queue(QUEUE_SELFPLAY, connection=fake_redis, serializer=JSONSerializer)
    refused = [queue.enqueue_call(func="os.system", args=(f"touch {marker}",), job_id="zf-evil-1"),
               queue.enqueue_call(func="subprocess.run", args=(f"touch {marker}",), kwargs={"shell": True},
                                  job_id="zf-evil-2"),
               queue.enqueue_call(func="services.selfplay.selfplay_job", args=("x",), job_id="zf-evil-3")]
    run_burst_worker(fake_redis, context)
    assert not marker.exists()
    for job in refused:
        job = _fetch(fake_redis, job.id)
        assert job.get_status() == JobStatus.FAILED and "refused" in job.latest_result().exc_string


def test_a_worker_refuses_jobs_of_another_data_directory(fake_redis, layout, context, config, tmp_path) -> None:
    from shared.layout import DataLayout

    other = DataLayout(tmp_path / "other", "tictactoe")
    enqueue(fake_redis, _match_spec(other, config, "zf-test-elsewhere", retries=0))
    run_burst_worker(fake_redis, context)
    with pytest.raises(JobFailedError, match="refused: this worker serves"):
        wait_for_jobs(fake_redis, ["zf-test-elsewhere"], timeout_s=5, poll_s=0.01)


def test_the_wait_hands_over_the_progress_that_running_jobs_report(fake_redis, layout, config) -> None:
    enqueue(fake_redis, _match_spec(layout, config, "zf-test-progress"))
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL, abandon=False)
    job = _fetch(fake_redis, job_id)
    reporter = JobReporter(job, "match", "games", min_interval_s=0.0, clock=iter([100.0, 110.0]).__next__)
    reporter(3, 8, score=0.5)                     # what a worker's job function records, 10 s after it started
    reports: list[WaitProgress] = []
    with pytest.raises(JobsTimeoutError):
        wait_for_jobs(fake_redis, [job_id], timeout_s=0.1, poll_s=0.01, queues=(QUEUE_EVAL,), progress=reports.append)
    record = reports[0].running[job_id]
    assert reports[0].started == 1 and (record["done"], record["total"], record["unit"]) == (3, 8, "games")
    assert record_text(record) == "3/8 games, 0.3 games/s, ETA 17 s, score 0.500"
