"""Fixtures for the user-facing command tests: tiny untrained models, a tiny registry, a CliRunner."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shared.games import make_game
from shared.layout import DataLayout
from shared.network import NetworkSpec, create_model, save_model
from shared.registry import ModelRegistry

TINY_SPEC = NetworkSpec(blocks=1, channels=8, value_hidden=8)


def one_line_error(result, needle: str) -> None:
    """The command failed with exit code 2 and exactly one stderr line `error: ...` containing `needle`."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """An untrained 1x8 model file per game used by the tests: {game name: path}."""
    folder = tmp_path_factory.mktemp("models")
    paths = {}
    for name in ("tictactoe", "connect4", "gomoku-15", "othello-6x6"):
        game = make_game(name)
        paths[name] = folder / f"{name}.pt"
        save_model(paths[name], create_model(game, TINY_SPEC, seed=1), game, {"note": "untrained test model"})
    return paths


@pytest.fixture
def tictactoe_registry(tmp_path, tiny_models) -> Path:
    """A data root whose tic-tac-toe registry holds one promoted (best) version; returns the data root."""
    registry = ModelRegistry(DataLayout(tmp_path, "tictactoe").registry_dir, game_name="tictactoe")
    version = registry.register(tiny_models["tictactoe"], generation=0).version
    registry.promote(version, reason="initial")
    return tmp_path
