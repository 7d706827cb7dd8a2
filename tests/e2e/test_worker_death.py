"""Real worker processes on a real redis-server: with the default heartbeat, the job of a SIGKILLed worker runs again
within a minute; and kill -9 of the process that started local workers leaves no worker behind, nor one that a
rerun would count as listening."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rq import Worker
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from cli.local_workers import spawn_local_workers, stop_processes
from services.initial_model import ensure_initial_model
from services.jobqueue import QUEUE_SELFPLAY, JobSpec, connect, enqueue, wait_for_jobs
from services.payloads import SelfPlayPayload
from services.redis_server import ensure_redis
from services.worker import DEFAULT_HEARTBEAT_S, heartbeat_ttl, live_workers
from shared.config import PipelineConfig, load_config
from shared.layout import DataLayout
from tests.e2e.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]



def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_workers_job_runs_again_within_a_minute_with_default_settings(tmp_path: Path) -> None:
    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides={
        "game.blocks": 1, "game.channels": 16, "search.simulations": 64, "selfplay.games_per_job": 512})
    layout = DataLayout(tmp_path / "data", "tictactoe")
    best = ensure_initial_model(layout, cfg.game, 0)
    ids = layout.job_ids()
    job_id = ids.selfplay(1, best, 0)
    spec = JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY, job_id=job_id, timeout_s=600,
                   payload=SelfPlayPayload(data_id=ids.data_id, config=cfg.selfplay_service(), generation=1,
                                           model_version=best, job_id=job_id, seed=1))
    with ensure_redis(prefer=("path",)) as redis:
        procs = spawn_local_workers(2, redis.url, [QUEUE_SELFPLAY], layout.root, tmp_path / "logs")  # defaults
        connection = connect(redis.url)
        try:
            wait_until(lambda: len(live_workers(connection, QUEUE_SELFPLAY)) == 2, 90, "two workers", 0.2)
            enqueue(connection, spec)
            entry = wait_until(lambda: connection.zrange(f"rq:wip:{QUEUE_SELFPLAY}", 0, -1), 60, "the job to start")
            # kill it once it runs: rq lists the execution a moment before it marks the job started, and a worker
            # killed in between leaves a QUEUED job that only a waiter with the jobs' specs redoes (wait_for_jobs'
            # orphan check, which the pipeline's waits have and this bare wait has not)
            wait_until(lambda: Job.fetch(job_id, connection=connection, serializer=JSONSerializer).get_status()
                        == JobStatus.STARTED, 60, "the job to be running", 0.05)
            execution = entry[0].decode().rsplit(":", 1)[1]
            worker_name = connection.hget(f"rq:execution:{job_id}:{execution}", "worker_name").decode()
            pid = int(connection.hget(f"rq:worker:{worker_name}", "pid"))
            assert pid in [p.pid for p in procs]
            os.kill(pid, signal.SIGKILL)      # the worker that runs it: one of ours, started above
            killed_at = time.monotonic()
            result = wait_for_jobs(connection, [job_id], timeout_s=120, poll_s=0.2)[job_id]
            recovered_s = time.monotonic() - killed_at
        finally:
            stop_processes(procs)
    ttl = heartbeat_ttl(DEFAULT_HEARTBEAT_S)
    print(f"\ndefault heartbeat {DEFAULT_HEARTBEAT_S} s (execution TTL {ttl} s): the job of the SIGKILLed worker "
          f"finished on another worker {recovered_s:.1f} s after the kill")
    assert result["games"] == 512 and recovered_s < 60


_PARENT = """
import sys, time
from pathlib import Path
from cli.local_workers import spawn_local_workers
procs = spawn_local_workers(2, sys.argv[1], ["selfplay"], Path(sys.argv[2]), Path(sys.argv[3]), heartbeat_s=1)
print(" ".join(str(p.pid) for p in procs), flush=True)
time.sleep(600)
"""


def test_kill_9_of_the_parent_leaves_no_worker_and_no_listening_ghost(tmp_path: Path) -> None:
    layout = DataLayout(tmp_path / "data", "tictactoe")
    layout.data_id()
    with ensure_redis(prefer=("path",)) as redis:
        parent = subprocess.Popen([sys.executable, "-c", _PARENT, redis.url, str(layout.root), str(tmp_path / "logs")],
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ, REDIS_URL=""))
        try:
            pids = [int(p) for p in parent.stdout.readline().split()]
            connection = connect(redis.url)
            wait_until(lambda: len(live_workers(connection, QUEUE_SELFPLAY)) == 2, 90, "two live workers", 0.2)
            parent.kill()          # kill -9 of the parent (a process this test started)
            parent.wait(timeout=10)
            killed_at = time.monotonic()
            wait_until(lambda: not any(_alive(pid) for pid in pids), 10, "the workers to die with their parent")
            gone_s = time.monotonic() - killed_at
            # killed outright, they left their registrations behind: rq still lists them, a rerun must not count them
            assert len(Worker.all(connection=connection)) == 2
            wait_until(lambda: live_workers(connection, QUEUE_SELFPLAY) == [], heartbeat_ttl(1) + 5,
                        "the ghost registrations to stop counting", 0.2)
        finally:
            if parent.poll() is None:
                parent.kill()
                parent.wait()
            for pid in pids if "pids" in locals() else []:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
    print(f"\nkill -9 of the parent: its 2 workers were gone {gone_s:.2f} s later")
