"""Fixtures for the service tests: a tiny tic-tac-toe pipeline config, a data dir with an initial model,
an in-memory Redis (fakeredis) and an in-process rq worker that runs queued jobs in burst mode."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.initial_model import ensure_initial_model
from services.payloads import MatchPayload, SelfPlayPayload, TrainPayload, WorkerContext
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
def config() -> PipelineConfig:
    """The tiny pipeline config."""
    return tiny_config()


@pytest.fixture
def data_dir(tmp_path: Path) -> str:
    return str(tmp_path / "data")


@pytest.fixture
def layout(data_dir: str) -> DataLayout:
    layout = DataLayout(Path(data_dir), "tictactoe")
    layout.data_id()            # a zeroforge data directory has its identity from the start (zeroforge run)
    return layout


@pytest.fixture
def context(layout: DataLayout) -> WorkerContext:
    """The WorkerContext of an in-process worker on the test's data directory (CPU)."""
    return WorkerContext(data_dir=layout.root)


@pytest.fixture
def registry(layout: DataLayout) -> ModelRegistry:
    return ModelRegistry(layout.registry_dir)


@pytest.fixture
def initial_version(layout: DataLayout, config: PipelineConfig, registry: ModelRegistry) -> str:
    """A random 1x8 network registered and promoted as version 000001 (what the pipeline's first step does)."""
    version = ensure_initial_model(layout, config.game, config.pipeline.seed)
    assert registry.best().version == version
    return version


@pytest.fixture
def fake_redis():
    """An in-memory Redis that rq accepts (bytes responses, like redis.Redis)."""
    import fakeredis

    connection = fakeredis.FakeRedis()
    yield connection
    connection.flushall()


def run_burst_worker(connection, context: WorkerContext,
                     queues: tuple[str, ...] = ("selfplay", "train", "eval")) -> None:
    """Run every queued job in this process (zeroforge's worker class, JSON serializer), then return.

    rq installs its own SIGINT/SIGTERM handlers; pytest's are put back afterwards."""
    import signal

    from rq.serializers import JSONSerializer

    from services.worker import ZeroforgeWorker

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker = ZeroforgeWorker(list(queues), connection=connection, serializer=JSONSerializer, context=context)
        worker.work(burst=True, logging_level="WARNING")
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def selfplay_payload(layout: DataLayout, config: PipelineConfig, version: str, job_id: str, generation: int = 1,
                     seed: int = 11) -> SelfPlayPayload:
    """The payload of one tiny self-play job."""
    return SelfPlayPayload(data_id=layout.data_id(), config=config.selfplay_service(), generation=generation,
                           model_version=version, job_id=job_id, seed=seed)


def train_payload(layout: DataLayout, config: PipelineConfig, parent: str, generation: int = 1,
                  seed: int = 5) -> dict[str, Any]:
    """The payload of one tiny training job, as the JSON dict a job receives."""
    return TrainPayload(data_id=layout.data_id(), config=config.trainer(), generation=generation,
                        parent_version=parent, seed=seed).model_dump(mode="json")


def match_payload(layout: DataLayout, config: PipelineConfig, player_a: str, player_b: str,
                  opening_indices: list[int], num_openings: int, seed: int = 0) -> dict[str, Any]:
    """The payload of one tiny match chunk, as the JSON dict a job receives."""
    return MatchPayload(data_id=layout.data_id(), config=config.gatekeeper(), player_a=player_a, player_b=player_b,
                        opening_indices=opening_indices, num_openings=num_openings,
                        simulations=config.gate.simulations, seed=seed).model_dump(mode="json")
