"""Recovery on fakeredis: jobs of dead workers, lost and orphaned jobs, Redis outages, ghost workers, heartbeats,
payloads that try to leave the data directory, and flows that never take the Redis URL as a parameter."""
from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from rq import Queue
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer
from rq.utils import utcformat

from services.jobqueue import (QUEUE_EVAL, JobFailedError, JobsTimeoutError, RedisLostError, RedisPatience, enqueue,
                               redis_url_from_env, ttl_kwargs, wait_for_jobs)
from services.worker import ZeroforgeWorker, heartbeat_ttl, live_workers, listening_workers
from tests.services.conftest import run_burst_worker, selfplay_payload, tiny_config
from tests.services.test_jobqueue import _fetch, _match_spec, _start_and_abandon


def test_a_job_whose_worker_dies_on_every_try_fails_clearly_after_its_tries(fake_redis, layout, config) -> None:
    config = tiny_config(**{"pipeline.job_retries": 2})
    spec = _match_spec(layout, config, "zf-test-killed-thrice", retries=ttl_kwargs(config.pipeline)["retries"])
    enqueue(fake_redis, spec)
    for attempt in range(3):
        _start_and_abandon(fake_redis, QUEUE_EVAL)
        if attempt < 2:  # the wait requeues it: tries left
            with pytest.raises(JobsTimeoutError):
                wait_for_jobs(fake_redis, [spec.job_id], timeout_s=0.02, poll_s=0.01, queues=(QUEUE_EVAL,))
            assert _fetch(fake_redis, spec.job_id).get_status() == JobStatus.QUEUED
    with pytest.raises(JobFailedError, match="zf-test-killed-thrice failed: its worker stopped heartbeating while "
                                             r"running it on all 3 tries \(killed, out of memory"):
        wait_for_jobs(fake_redis, [spec.job_id], timeout_s=5, poll_s=0.01, queues=(QUEUE_EVAL,))


def test_a_rerun_right_after_an_abandoned_job_enqueues_it_afresh(fake_redis, layout, context, config) -> None:
    """rq keeps an execution's registry entry 60 s longer than its hash; deleting such a job made rq raise
    ValueError('Execution ... not found in Redis'). enqueue drops the dangling entries first."""
    spec = _match_spec(layout, config, "zf-test-rerun", retries=0)
    enqueue(fake_redis, spec)
    job_id = _start_and_abandon(fake_redis, QUEUE_EVAL)
    with pytest.raises(JobFailedError):
        wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01, queues=(QUEUE_EVAL,))
    job = _fetch(fake_redis, job_id)
    executions = fake_redis.zrange(job.execution_registry.key, 0, -1)
    assert executions, "the abandoned execution is still in the job's execution registry"
    for raw in executions:  # its hash expired, as after its TTL
        fake_redis.delete(Execution(raw.decode(), job_id, fake_redis).key)
    assert enqueue(fake_redis, spec).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis, context)
    assert wait_for_jobs(fake_redis, [job_id], timeout_s=5, poll_s=0.01)[job_id]["pairs"]


def test_a_job_lost_with_redis_data_is_enqueued_again(fake_redis, layout, context, config) -> None:
    spec = _match_spec(layout, config, "zf-test-lost")
    enqueue(fake_redis, spec)
    fake_redis.flushall()            # a Redis restart without persistence
    with pytest.raises(JobsTimeoutError):
        wait_for_jobs(fake_redis, [spec.job_id], timeout_s=0.02, poll_s=0.01, specs={spec.job_id: spec})
    assert _fetch(fake_redis, spec.job_id).get_status() == JobStatus.QUEUED
    run_burst_worker(fake_redis, context)
    assert wait_for_jobs(fake_redis, [spec.job_id], timeout_s=5, poll_s=0.01, specs={spec.job_id: spec})


def test_an_orphaned_job_is_enqueued_again(fake_redis, layout, context, config) -> None:
    """QUEUED in its hash but in no queue list (a restart that lost the last writes): no worker would ever see it."""
    spec = _match_spec(layout, config, "zf-test-orphan-q")
    enqueue(fake_redis, spec)
    fake_redis.delete(Queue(QUEUE_EVAL, connection=fake_redis, serializer=JSONSerializer).key)
    with pytest.raises(JobsTimeoutError):
        wait_for_jobs(fake_redis, [spec.job_id], timeout_s=0.3, poll_s=0.01, specs={spec.job_id: spec},
                      orphan_check_s=0.05)
    assert spec.job_id in Queue(QUEUE_EVAL, connection=fake_redis, serializer=JSONSerializer).get_job_ids()
    run_burst_worker(fake_redis, context)
    assert wait_for_jobs(fake_redis, [spec.job_id], timeout_s=5, poll_s=0.01)


class _Flaky:
    """fn() that fails with a Redis ConnectionError `failures` times, then answers."""

    def __init__(self, failures: int):
        self.failures, self.calls = failures, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise RedisConnectionError("Connection refused")
        return "pong"


def test_a_short_redis_outage_is_ridden_out_with_backoff(fake_redis, caplog) -> None:
    naps: list[float] = []
    patience = RedisPatience(fake_redis, outage_s=60, sleep=naps.append)
    with caplog.at_level("WARNING", logger="services.jobqueue"):
        assert patience.call(_Flaky(5), "testing") == "pong"
    assert naps == [0.5, 1.0, 2.0, 4.0, 8.0] and len(patience.outages) == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "unreachable" in lines[0] and "is back after" in lines[1]


def test_a_long_redis_outage_stops_with_one_line(fake_redis) -> None:
    patience = RedisPatience(fake_redis, outage_s=0.05, sleep=lambda s: time.sleep(0.02))
    with pytest.raises(RedisLostError, match=r"unreachable for \d+ s \(while testing\); the run stopped where it was: "
                                             "start Redis again and rerun the same command to resume"):
        patience.call(_Flaky(10_000), "testing")


def test_wait_for_jobs_rides_out_an_outage(fake_redis, layout, context, config, monkeypatch) -> None:
    spec = _match_spec(layout, config, "zf-test-outage")
    enqueue(fake_redis, spec)
    run_burst_worker(fake_redis, context)
    real = Job.fetch_many
    outage = {"left": 3}

    def flaky_fetch_many(*args, **kwargs):
        if outage["left"]:
            outage["left"] -= 1
            raise RedisConnectionError("Connection refused")
        return real(*args, **kwargs)

    monkeypatch.setattr(Job, "fetch_many", flaky_fetch_many)
    patience = RedisPatience(fake_redis, outage_s=60, sleep=lambda s: None)
    assert wait_for_jobs(fake_redis, [spec.job_id], timeout_s=5, poll_s=0.01, patience=patience)
    assert len(patience.outages) == 1 and patience.in_grace()


def _register(connection, name: str, heartbeat_s: int, last_heartbeat_age_s: float, context) -> ZeroforgeWorker:
    worker = ZeroforgeWorker([QUEUE_EVAL], connection=connection, serializer=JSONSerializer, name=name,
                             context=context, heartbeat_s=heartbeat_s)
    worker.register_birth()
    moment = datetime.now(timezone.utc) - timedelta(seconds=last_heartbeat_age_s)
    connection.hset(worker.key, "last_heartbeat", utcformat(moment))
    return worker


def test_ghost_workers_are_not_counted_as_listening(fake_redis, context) -> None:
    _register(fake_redis, "alive", 5, 3, context)
    _register(fake_redis, "killed-9", 5, heartbeat_ttl(5) + 1, context)   # registered, but no heartbeat for 21 s
    stopped = _register(fake_redis, "stopped", 5, 1, context)
    stopped.register_death()
    assert live_workers(fake_redis, QUEUE_EVAL) == ["alive"]
    assert listening_workers(fake_redis, QUEUE_EVAL) == 1


def test_a_local_worker_of_this_host_whose_process_is_gone_stops_counting_at_once(fake_redis, context) -> None:
    """kill -9 of a run takes its local workers with it; their registrations, still fresh, must not make the
    rerun started at once think workers listen (it would start none and wait for ever)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()                                        # a pid that no process has now
    here = socket.gethostname()
    for name, pid, host in (("zf-local-1-0", gone.pid, here),             # died with its run: not counted
                            ("zf-local-1-1", os.getpid(), here),          # its process lives
                            ("zf-local-2-0", gone.pid, "another-host"),   # another host's: its heartbeat decides
                            ("remote-0", gone.pid, here)):                # not a run's local worker: the same
        worker = _register(fake_redis, name, 5, 1, context)
        fake_redis.hset(worker.key, mapping={"pid": pid, "hostname": host})
    assert live_workers(fake_redis, QUEUE_EVAL) == ["remote-0", "zf-local-1-1", "zf-local-2-0"]


def test_a_running_job_keeps_a_short_execution_entry_fresh(fake_redis, layout, config, context) -> None:
    from services.worker import _JobHeartbeat

    enqueue(fake_redis, _match_spec(layout, config, "zf-test-heartbeat"))
    worker = ZeroforgeWorker([QUEUE_EVAL], connection=fake_redis, serializer=JSONSerializer, context=context,
                             heartbeat_s=1)
    worker.register_birth()
    queue = Queue(QUEUE_EVAL, connection=fake_redis, serializer=JSONSerializer)
    job, _ = Queue.dequeue_any([queue], None, connection=fake_redis, serializer=JSONSerializer)
    execution = worker.prepare_execution(job)
    worker.prepare_job_execution(job)
    registry = StartedJobRegistry(queue=queue)
    first = fake_redis.zrange(registry.key, 0, -1, withscores=True)[0][1]
    assert first - time.time() <= heartbeat_ttl(1) + 1     # rq's SimpleWorker: the job timeout + 60 s
    with _JobHeartbeat(worker, job, execution):
        time.sleep(2.5)
    later = fake_redis.zrange(registry.key, 0, -1, withscores=True)[0][1]
    assert later >= first + 1, "the heartbeat thread did not renew the execution entry"


def test_a_job_id_that_leaves_the_data_directory_is_refused_before_any_file_operation(
        layout, config, initial_version, context, tmp_path) -> None:
    from services.selfplay import selfplay_job

    good = selfplay_payload(layout, config, initial_version, "zf-ok").model_dump(mode="json")
    before = sorted(p for p in tmp_path.rglob("*"))
    for bad in ("../../x", "../x", "/etc/passwd", "a/../../b", ".hidden", "..", "x\x00y", "a" * 200, ""):
        with pytest.raises(ValidationError, match="job_id"):
            selfplay_job({**good, "job_id": bad}, context)
    assert sorted(p for p in tmp_path.rglob("*")) == before, "a refused job touched the file system"


def test_flows_never_take_the_redis_url_as_a_parameter() -> None:
    from flows.gate import gate_flow
    from flows.generation import generation_flow, run_selfplay, run_training
    from flows.pipeline import pipeline_flow
    from flows.promote import decide_flow

    for flow in (pipeline_flow, generation_flow, gate_flow, decide_flow, run_selfplay, run_training):
        assert not any("redis" in name for name in inspect.signature(flow.fn).parameters), flow.name


def test_the_redis_url_comes_from_the_environment() -> None:
    assert redis_url_from_env({"ZEROFORGE_REDIS_URL": "redis://:a@h:1/0", "REDIS_URL": "redis://b:2/0"}) \
        == "redis://:a@h:1/0"
    assert redis_url_from_env({"REDIS_URL": "redis://b:2/0"}) == "redis://b:2/0"
    with pytest.raises(RuntimeError, match="ZEROFORGE_REDIS_URL"):
        redis_url_from_env({})


def test_a_dead_workers_name_can_be_taken_again_but_not_a_live_ones(fake_redis, context) -> None:
    from services.worker import WorkerConfigError, clear_ghost

    _register(fake_redis, "ghost", 5, heartbeat_ttl(5) + 1, context)
    clear_ghost(fake_redis, "ghost")
    assert not fake_redis.exists("rq:worker:ghost")
    _register(fake_redis, "ghost", 5, 0, context)     # registering the name again works
    with pytest.raises(WorkerConfigError, match="a live worker named 'ghost'"):
        clear_ghost(fake_redis, "ghost")
    clear_ghost(fake_redis, "never-seen")
