"""A real worker process on a real redis-server: a gate chunk canceled while it plays (what the gate's early stop
does to the chunks still running) stops within seconds and records no pairs, and its worker takes the next job."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from cli.local_workers import spawn_local_workers, stop_processes
from services.jobqueue import QUEUE_EVAL, JobSpec, connect, enqueue, wait_for_jobs
from services.job_cancel import CHECK_INTERVAL_S
from services.payloads import MatchPayload
from services.redis_server import ensure_redis
from services.worker import live_workers
from shared.config import PipelineConfig, load_config
from shared.layout import DataLayout
from tests.e2e.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]



def _match_spec(cfg: PipelineConfig, data_id: str, job_id: str, player: str, openings: int) -> JobSpec:
    payload = MatchPayload(data_id=data_id, config=cfg.gatekeeper(), player_a=player, player_b=player,
                           opening_indices=list(range(openings)), num_openings=openings,
                           simulations=cfg.gate.simulations, seed=1)
    return JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_EVAL, job_id=job_id,
                   timeout_s=600, retries=0)


def test_a_canceled_running_match_chunk_stops_and_frees_its_worker(tmp_path: Path) -> None:
    cfg = load_config(PipelineConfig, "connect4", env=None, overrides={})
    layout = DataLayout(tmp_path / "data", "connect4")
    data_id = layout.data_id()
    # pure MCTS with 2,000 playouts on 40 Connect Four openings: about a minute of play, uncanceled
    long_chunk = _match_spec(cfg, data_id, "zf-test-long-chunk", "pure-mcts:2000", 40)
    next_job = _match_spec(cfg, data_id, "zf-test-next-chunk", "random", 2)
    with ensure_redis(prefer=("path",)) as redis:
        procs = spawn_local_workers(1, redis.url, [QUEUE_EVAL], layout.root, tmp_path / "logs")
        connection = connect(redis.url)
        try:
            wait_until(lambda: len(live_workers(connection, QUEUE_EVAL)) == 1, 90, "the worker", 0.2)
            enqueue(connection, long_chunk)
            job = Job.fetch(long_chunk.job_id, connection=connection, serializer=JSONSerializer)
            wait_until(lambda: job.get_status(refresh=True) == JobStatus.STARTED, 60, "the chunk to start")
            time.sleep(5.0)                  # let it play a few moves (past its first status read)
            job.cancel()
            canceled_at = time.monotonic()
            wait_until(lambda: job.get_status(refresh=True) == JobStatus.FINISHED, 60, "the chunk to stop", 0.1)
            stopped_s = time.monotonic() - canceled_at
            result = job.return_value(refresh=True)
            enqueue(connection, next_job)    # the freed worker plays the next job
            after = wait_for_jobs(connection, [next_job.job_id], timeout_s=60, poll_s=0.1)[next_job.job_id]
        finally:
            stop_processes(procs)
    print(f"\na running gate chunk canceled: it stopped {stopped_s:.1f} s later, after {result['seconds']:.1f} s "
          f"of play (status read every {CHECK_INTERVAL_S:.0f} s)")
    assert result["stopped"] is True and result["pairs"] == []
    assert stopped_s < 30
    assert [p["opening"] for p in after["pairs"]] == [0, 1] and after["stopped"] is False
