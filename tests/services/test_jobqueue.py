"""services.jobqueue on an in-memory Redis (fakeredis) with an in-process rq SimpleWorker in burst mode."""
from __future__ import annotations

from pathlib import Path

import pytest
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

from services.jobqueue import (QUEUE_EVAL, QUEUE_SELFPLAY, JobFailedError, JobsTimeoutError, JobSpec, WaitProgress,
                               enqueue, namespace_for, run_jobs, wait_for_jobs)
from tests.services.conftest import run_burst_worker, selfplay_kwargs

#: A cheap real job: services.gatekeeper.split_openings(num_openings=5, jobs=2) -> [[0, 2, 4], [1, 3]].
SPLIT = {"func": "services.gatekeeper.split_openings", "kwargs": {"num_openings": 5, "jobs": 2}}


def _split_spec(job_id: str, retries: int = 2, **kwargs) -> JobSpec:
    return JobSpec(func=SPLIT["func"], kwargs=kwargs or SPLIT["kwargs"], queue=QUEUE_EVAL, job_id=job_id,
                   timeout_s=60, retries=retries)


def _fetch(connection, job_id: str) -> Job:
    return Job.fetch(job_id, connection=connection, serializer=JSONSerializer)


def test_selfplay_job_runs_through_the_queue(fake_redis, data_dir, config, initial_version) -> None:
    job_id = "zf-test-tictactoe-g000001-sp0000"
    spec = JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id, timeout_s=120,
                   kwargs=selfplay_kwargs(data_dir, config, initial_version, job_id))
    assert enqueue(fake_redis, spec).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis)
    reports: list[WaitProgress] = []
    results = wait_for_jobs(fake_redis, [job_id], timeout_s=10, poll_s=0.01, progress=reports.append)
    summary = results[job_id]
    assert summary["games"] == 4 and summary["reused"] is False and summary["positions"] >= 4 * 5
    assert Path(summary["shard"]).name == f"{job_id}.h5" and Path(summary["shard"]).is_file()
    assert reports and reports[-1].finished == reports[-1].total == 1 and reports[-1].results == results


def test_a_finished_job_is_not_enqueued_again(fake_redis) -> None:
    spec = _split_spec("zf-test-split")
    first = run_jobs_with_worker(fake_redis, [spec])
    assert first == {"zf-test-split": [[0, 2, 4], [1, 3]]}
    again = enqueue(fake_redis, spec)
    assert again.get_status() == JobStatus.FINISHED
    assert Queue(QUEUE_EVAL, connection=fake_redis, serializer=JSONSerializer).count == 0
    assert wait_for_jobs(fake_redis, [spec.job_id], timeout_s=1, poll_s=0.01) == first


def run_jobs_with_worker(connection, specs: list[JobSpec]) -> dict:
    for spec in specs:
        enqueue(connection, spec)
    run_burst_worker(connection)
    return run_jobs(connection, specs, timeout_s=5)


def test_a_failing_job_names_itself_and_its_error_after_the_retries(
        fake_redis, data_dir, config, initial_version) -> None:
    job_id = "zf-test-bad-model"
    spec = JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id, timeout_s=60,
                   retries=1, kwargs=selfplay_kwargs(data_dir, config, "000099", job_id))
    enqueue(fake_redis, spec)
    run_burst_worker(fake_redis)  # runs it, the retry requeues it, and the burst worker runs it again
    job = _fetch(fake_redis, job_id)
    assert job.get_status() == JobStatus.FAILED and job.retries_left == 0  # its one retry was used
    with pytest.raises(JobFailedError, match=rf"job {job_id} failed: .*RegistryError.*unknown model version 000099"):
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01)
    # enqueueing a failed job again gives it a fresh start (the flow's resume path)
    assert enqueue(fake_redis, spec).get_status() == JobStatus.QUEUED


def test_waiting_without_a_worker_times_out_with_a_hint(fake_redis) -> None:
    enqueue(fake_redis, _split_spec("zf-test-orphan"))
    with pytest.raises(JobsTimeoutError) as caught:
        wait_for_jobs(fake_redis, ["zf-test-orphan"], timeout_s=0.2, poll_s=0.05)
    message = str(caught.value)
    assert "1 of 1 jobs unfinished" in message and "1 never started" in message
    assert "is a worker listening" in message and "zeroforge worker" in message


def test_a_vanished_job_is_reported(fake_redis) -> None:
    with pytest.raises(JobFailedError, match="zf-test-never-enqueued vanished"):
        wait_for_jobs(fake_redis, ["zf-test-never-enqueued"], timeout_s=1, poll_s=0.01)


def test_a_canceled_job_fails_the_wait_at_once(fake_redis) -> None:
    job = enqueue(fake_redis, _split_spec("zf-test-canceled"))
    job.cancel()
    with pytest.raises(JobFailedError, match="zf-test-canceled was canceled"):
        wait_for_jobs(fake_redis, ["zf-test-canceled"], timeout_s=2, poll_s=0.01)


def _start_and_abandon(connection, queue_name: str) -> str:
    """Take the next job as a worker does (STARTED, execution in the StartedJobRegistry), then 'kill' the worker:
    it never finishes the job and its execution entry expires."""
    queue = Queue(queue_name, connection=connection, serializer=JSONSerializer)
    worker = SimpleWorker([queue_name], connection=connection, serializer=JSONSerializer)
    job, _ = Queue.dequeue_any([queue], None, connection=connection, serializer=JSONSerializer)
    worker.prepare_execution(job)
    worker.prepare_job_execution(job)
    assert job.get_status() == JobStatus.STARTED
    registry = StartedJobRegistry(queue=queue)
    for entry in connection.zrange(registry.key, 0, -1):
        connection.zadd(registry.key, {entry: 1})  # expired long ago
    return job.id


def test_an_abandoned_started_job_is_retried_then_finishes(fake_redis) -> None:
    enqueue(fake_redis, _split_spec("zf-test-abandoned", retries=1))
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobsTimeoutError):  # the wait's cleanup requeues it; nobody runs it yet
        wait_for_jobs(fake_redis, [job_id], timeout_s=0.05, poll_s=0.01, queues=(QUEUE_EVAL,))
    assert _fetch(fake_redis, job_id).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis)
    assert wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01) == {job_id: [[0, 2, 4], [1, 3]]}


def test_an_abandoned_job_without_retries_fails_the_wait(fake_redis) -> None:
    enqueue(fake_redis, _split_spec("zf-test-abandoned-final", retries=0))
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobFailedError, match=f"job {job_id} failed: .*AbandonedJobError"):
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01, queues=(QUEUE_EVAL,))


def test_namespace_is_stable_per_data_dir(tmp_path: Path) -> None:
    assert namespace_for(tmp_path / "a") == namespace_for(str(tmp_path / "a"))
    assert namespace_for(tmp_path / "a") != namespace_for(tmp_path / "b")
    assert len(namespace_for(tmp_path)) == 8
