"""`zeroforge eval A B`: paired matches between player specs, JSON and table output, one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from services.cli import main
from services.cli.eval import eval_command
from shared.evaluation import chunk_openings, evaluate_players, gate_opening_seed, play_paired_games
from shared.games import make_game
from shared.search import RandomPlayer
from shared.search.openings import opening_set
from tests.cli.conftest import one_line_error


def _run_json(runner, args: list[str]) -> dict:
    result = runner.invoke(eval_command, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1, result.stdout        # exactly one JSON object on one line
    return json.loads(result.stdout)


def test_random_vs_random_json_is_consistent(runner):
    report = _run_json(runner, ["random", "random", "--game", "tictactoe", "--games", "40"])
    assert report["games"] == 40 and report["pairs"] == 20
    assert report["wins"] + report["draws"] + report["losses"] == 40
    assert 0.0 <= report["ci_low"] <= report["score"] <= report["ci_high"] <= 1.0
    assert report["elo_low"] <= report["elo"] <= report["elo_high"]
    assert report["score"] == pytest.approx((report["wins"] + 0.5 * report["draws"]) / 40)
    assert report["player_a"] == "random" and report["player_b"] == "random"
    assert report["opening_seed"] == gate_opening_seed() and report["seconds"] >= 0
    assert {"sims", "elo_low", "elo_high"} <= set(report)


def test_minimax_never_loses_to_random(runner):
    report = _run_json(runner, ["minimax", "random", "--game", "tictactoe", "--games", "60", "--seed", "3"])
    assert report["losses"] == 0 and report["wins"] > 0
    assert report["score"] > 0.5 and report["elo"] > 0


def test_table_output_through_the_main_command(runner):
    result = runner.invoke(main, ["eval", "minimax", "random", "--game", "tictactoe", "--games", "10"])
    assert result.exit_code == 0, result.output
    assert "A wins / draws / losses" in result.stdout and "Elo A - B" in result.stdout
    assert "score of A [95% CI]" in result.stdout


def test_model_file_and_registry_best_players(runner, tiny_models, tictactoe_registry):
    args = [str(tiny_models["tictactoe"]), "best", "--game", "tictactoe", "--games", "4", "--sims", "4",
            "--data-dir", str(tictactoe_registry)]
    report = _run_json(runner, args)
    assert report["games"] == 4 and report["sims"] == 4


@pytest.mark.parametrize("args, needle", [
    (["random", "random", "--game", "tictactoe", "--games", "7"], "even"),
    (["random", "random", "--game", "tictactoe", "--games", "0"], "even"),
    (["wizard", "random", "--game", "tictactoe", "--games", "4"], "unknown player 'wizard'"),
    (["random", "pure-mcts", "--game", "tictactoe", "--games", "4"], "pure-mcts:N"),
    (["minimax", "random", "--game", "connect4", "--games", "4"], "tictactoe"),
    (["random", "random", "--game", "chess", "--games", "4"], "unknown game"),
    (["/nonexistent/model.pt", "random", "--game", "tictactoe", "--games", "4"], "does not exist"),
])
def test_bad_input_is_one_line_error(runner, args, needle):
    one_line_error(runner.invoke(eval_command, args), needle)


def test_missing_registry_and_wrong_game_model(runner, tmp_path, tiny_models):
    no_registry = ["best", "random", "--game", "tictactoe", "--games", "4", "--data-dir", str(tmp_path)]
    one_line_error(runner.invoke(eval_command, no_registry), "registry")
    wrong_game = [str(tiny_models["connect4"]), "random", "--game", "tictactoe", "--games", "4"]
    one_line_error(runner.invoke(eval_command, wrong_game), "connect4")


def test_chunked_match_covers_every_opening_in_order():
    game = make_game("tictactoe")
    openings = opening_set(game, 70, seed=gate_opening_seed())          # 70 openings -> chunks of 32, 32, 6
    assert chunk_openings(len(openings)) == 32
    seen = []
    scores, counts = play_paired_games(game, RandomPlayer(game, np.random.default_rng(0)),
                                       RandomPlayer(game, np.random.default_rng(1)), openings,
                                       progress=lambda done, total: seen.append((done, total)))
    assert scores.shape == (70,) and sum(counts) == 140
    assert seen == [(64, 140), (128, 140), (140, 140)]
    assert 2 * counts[0] + counts[1] == pytest.approx(4 * scores.sum())   # the W/D/L agree with the pair scores


def test_evaluate_players_is_reproducible():
    game = make_game("tictactoe")
    first = evaluate_players(game, "random", "pure-mcts:8", games=8, simulations=1, seed=5)
    second = evaluate_players(game, "random", "pure-mcts:8", games=8, simulations=1, seed=5)
    drop = ("seconds",)
    assert {k: v for k, v in first.items() if k not in drop} == {k: v for k, v in second.items() if k not in drop}
