"""The models shipped with the package load for their game, carry a training record, and play right after
install: `analyze` and `eval` use them through the `shipped` spec with no registry anywhere."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli import main
from shared.games import make_game
from shared.network import load_model
from shared.layout import SHIPPED_MODELS_DIR, shipped_model_path

SHIPPED = ["tictactoe", "connect4", "gomoku-6x6-4", "gomoku-8x8-5", "gomoku-15", "othello", "go-9x9"]
OPENING = {"tictactoe": "5", "connect4": "44", "gomoku-6x6-4": "c3", "gomoku-8x8-5": "d4 e5", "gomoku-15": "h8 i9",
           "othello": "f5 d6", "go-9x9": "E5"}


@pytest.mark.parametrize("game_name", SHIPPED)
def test_shipped_model_loads_and_has_a_training_record(game_name: str) -> None:
    game = make_game(game_name)
    loaded = load_model(shipped_model_path(game_name), expected_game=game)   # checksum verified on load
    assert loaded.game == game
    record = json.loads((SHIPPED_MODELS_DIR / f"{game_name}.json").read_text())
    for key in ("game", "version", "command", "wall_clock_minutes", "generations", "evaluation"):
        assert key in record, f"{game_name}.json lacks {key}"
    assert record["game"] == game_name and record["checksum"] == loaded.checksum
    assert shipped_model_path(game_name).stat().st_size < 4 * 1024 * 1024


@pytest.mark.parametrize("game_name", SHIPPED)
def test_analyze_uses_the_shipped_model_without_a_registry(game_name: str, tmp_path) -> None:
    result = CliRunner().invoke(main, ["analyze", "--game", game_name, "--moves", OPENING[game_name], "--sims", "16",
                                       "--data-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output.strip().splitlines()[-1])
    game = make_game(game_name)
    assert game.parse_action(answer["move"]) in range(game.num_actions)
    assert -1.0 <= answer["value"] <= 1.0


def test_shipped_tictactoe_model_never_loses_to_minimax(tmp_path) -> None:
    result = CliRunner().invoke(main, ["eval", "shipped", "minimax", "--game", "tictactoe", "--games", "100",
                                       "--sims", "50", "--data-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["games"] == 100 and report["losses"] == 0
