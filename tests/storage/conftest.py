"""Fixtures for storage tests: small real games, random-play records, a data layout, tiny model files."""
from __future__ import annotations

from pathlib import Path

import pytest

from shared.games import make_game
from tests.storage.helpers import make_dirs
from shared.layout import DataLayout
from shared.shards import write_shard
from tests.storage.helpers import random_records

BASE_ATTRS = {"model_version": "000001", "seed": 7, "simulations": 16}


@pytest.fixture(scope="session")
def connect4():
    return make_game("connect4")


@pytest.fixture(scope="session")
def tictactoe():
    return make_game("tictactoe")


@pytest.fixture
def layout(tmp_path: Path) -> DataLayout:
    return make_dirs(DataLayout(tmp_path / "data", "connect4"))


@pytest.fixture
def make_shard(layout, connect4):
    """make_shard(generation, job_id, games=4, seed=0, game=connect4) -> Path of a shard in the layout."""

    def make(generation: int, job_id: str, games: int = 4, seed: int = 0, game=None, **attrs) -> Path:
        game = game or connect4
        records = random_records(game, games, seed=seed)
        all_attrs = {**BASE_ATTRS, "generation": generation, **attrs}
        return write_shard(layout.generation_shards_dir(generation), job_id, game, records, all_attrs)

    return make


@pytest.fixture(scope="session")
def model_file(tmp_path_factory, tictactoe) -> Path:
    """A real (tiny) tic-tac-toe model file written by shared.network.modelfile.save_model."""
    from shared.network import NetworkSpec, create_model, save_model

    path = tmp_path_factory.mktemp("models") / "tiny.pt"
    save_model(path, create_model(tictactoe, NetworkSpec(blocks=1, channels=4), seed=0), tictactoe, {"generation": 0})
    return path
