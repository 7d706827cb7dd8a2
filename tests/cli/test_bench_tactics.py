"""`zeroforge bench tactics`: the command end to end on a few late positions with the shipped Connect Four model,
Othello endgames and in-a-row tactics (the scores and positions are tested in tests/players/test_tactics_scores.py
and tests/games/test_inarow_tactics.py)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli import main


def test_bench_tactics_plays_each_model_on_the_same_solved_positions(tmp_path) -> None:
    from shared.games import make_game
    from shared.network.modelfile import create_model, save_model
    from shared.network.spec import NetworkSpec

    untrained = tmp_path / "untrained.pt"
    game = make_game("connect4")
    save_model(untrained, create_model(game, NetworkSpec(1, 8, 16), seed=0), game)
    result = CliRunner().invoke(main, ["bench", "tactics", "--game", "connect4", "--model", "shipped", "--model",
                                       str(untrained), "--positions", "6", "--plies", "26-30", "--sims", "16",
                                       "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["positions"] == 6 and report["simulations"] == 16 and report["sampled"] >= 6
    assert [m["model"] for m in report["models"]] == ["shipped", str(untrained)]
    assert all(m["all"]["total"] == 6 for m in report["models"]) and 0 <= report["random_move"] <= 1
    text = CliRunner().invoke(main, ["bench", "tactics", "--game", "connect4", "--model", "shipped", "--positions",
                                     "2", "--plies", "28-30", "--sims", "8"])
    assert text.exit_code == 0 and "keeps the solved outcome" in text.output and "a random legal move" in text.output


@pytest.mark.parametrize("args, message", [
    (["--game", "go-9x9"], "in-a-row games"),
    (["--game", "othello", "--empties", "0-70"], "at most 60 empty squares"),
    (["--game", "connect4", "--plies", "30"], "LO-HI"),
    (["--game", "connect4", "--plies", "20-50"], "at most 42 plies"),
])
def test_bench_tactics_refuses_what_it_cannot_measure(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["bench", "tactics", *args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_bench_tactics_on_othello_endgames_measures_the_search_with_and_without_the_root_solver() -> None:
    result = CliRunner().invoke(main, ["bench", "tactics", "--game", "othello", "--model", "shipped", "--positions",
                                       "5", "--empties", "8-10", "--sims", "8", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["positions"] == 5 and report["empties"] == [8, 10] and report["skipped_over_budget"] == 0
    with_solver, alone = report["models"]
    assert (with_solver["root_solver"], alone["root_solver"]) == (True, False)
    assert with_solver["all"]["hits"] == 5          # at 8-10 empty squares the root solver settles every position
    assert alone["all"]["total"] == 5
    text = CliRunner().invoke(main, ["bench", "tactics", "--game", "othello", "--model", "shipped", "--positions",
                                     "2", "--empties", "6-8", "--sims", "4"])
    assert text.exit_code == 0, text.output
    assert "(its search alone)" in text.output and "with 6-8 empty squares" in text.output


def test_bench_tactics_on_an_in_a_row_game_reports_both_kinds() -> None:
    result = CliRunner().invoke(main, ["bench", "tactics", "--game", "gomoku-6x6-4", "--model", "shipped",
                                       "--positions", "5", "--sims", "32", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    model = report["models"][0]
    assert report["positions"] == 10 and model["win_in_1"]["total"] == 5 and model["must_block"]["total"] == 5
    assert model["win_in_1"]["hits"] == 5 and model["must_block"]["hits"] == 5     # the solver's guarantees
    assert 0 < report["random_move_win_in_1"] < 1
