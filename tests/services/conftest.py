"""Fixtures for the service tests: a tiny tic-tac-toe pipeline config, a data dir with an initial model,
an in-memory Redis (fakeredis) and an in-process rq worker that runs queued jobs in burst mode."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared.config import PipelineConfig, load_config
from shared.games import make_game
from shared.layout import DataLayout
from shared.registry import ModelRegistry

#: A 1x8 network, a few games with a few simulations, a few train steps: every job runs in well under a second.
TINY_OVERRIDES: dict[str, Any] = {
    "game.blocks": 1,
    "game.channels": 8,
    "search.simulations": 4,
    "selfplay.games_per_job": 4,
    "selfplay.jobs_per_generation": 1,
    "train.batch_size": 16,
    "train.steps_per_generation": 6,
    "train.checkpoint_every": 2,
    "train.replay_window_positions": 1000,
    "gate.games": 4,
    "gate.simulations": 2,
    "gate.jobs": 1,
    "gate.anchor": "none",
    "pipeline.seed": 3,
}


def tiny_config(**more: Any) -> PipelineConfig:
    """PipelineConfig for tic-tac-toe with TINY_OVERRIDES (plus `more`, keys like "train.steps_per_generation")."""
    return load_config(PipelineConfig, "tictactoe", env=None, overrides={**TINY_OVERRIDES, **more})


@pytest.fixture(scope="session")
def tictactoe():
    return make_game("tictactoe")


@pytest.fixture
def config() -> dict[str, Any]:
    """The tiny config as the JSON dict jobs receive."""
    return tiny_config().model_dump(mode="json")


@pytest.fixture
def data_dir(tmp_path: Path) -> str:
    return str(tmp_path / "data")


@pytest.fixture
def layout(data_dir: str) -> DataLayout:
    return DataLayout(Path(data_dir), "tictactoe")


@pytest.fixture
def registry(layout: DataLayout) -> ModelRegistry:
    return ModelRegistry(layout.registry_dir)


@pytest.fixture
def initial_version(data_dir: str, config: dict[str, Any], registry: ModelRegistry) -> str:
    """A random 1x8 network registered and promoted as version 000001 (the flow's own initial-model task)."""
    from flows.generation import ensure_initial_model

    version = ensure_initial_model.fn(data_dir, config)
    assert registry.best().version == version
    return version


@pytest.fixture
def fake_redis():
    """An in-memory Redis that rq accepts (bytes responses, like redis.Redis)."""
    import fakeredis

    connection = fakeredis.FakeRedis()
    yield connection
    connection.flushall()


def run_burst_worker(connection, queues: tuple[str, ...] = ("selfplay", "train", "eval")) -> None:
    """Run every queued job in this process (rq SimpleWorker, JSON serializer), then return.

    rq installs its own SIGINT/SIGTERM handlers; pytest's are put back afterwards."""
    import signal

    from rq import SimpleWorker
    from rq.serializers import JSONSerializer

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker = SimpleWorker(list(queues), connection=connection, serializer=JSONSerializer)
        worker.work(burst=True, logging_level="WARNING")
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def selfplay_kwargs(data_dir: str, config: dict[str, Any], version: str, job_id: str, generation: int = 1,
                    seed: int = 11) -> dict[str, Any]:
    """Keyword arguments of services.selfplay.selfplay_job for one tiny job."""
    return {"data_dir": data_dir, "config": config, "generation": generation, "job_index": 0,
            "model_version": version, "job_id": job_id, "seed": seed}
