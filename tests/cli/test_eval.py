"""`zeroforge eval A B`: paired matches between player specs, JSON and table output, one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cli import main
from cli.eval import eval_command
from services.gatekeeper import match_job, summarize_match
from services.payloads import MatchPayload, WorkerContext
from shared.config import GatekeeperConfig, load_config
from shared.games import make_game
from shared.layout import DataLayout
from shared.players.match import evaluate_players, split_openings
from tests.cli.conftest import one_line_error

GATE_OPENING_SEED = GatekeeperConfig.model_fields["gate"].annotation.model_fields["opening_seed"].default


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
    assert report["opening_seed"] == GATE_OPENING_SEED and report["seconds"] >= 0
    assert {"sims", "elo_low", "elo_high"} <= set(report)
    assert [a + b for a, b in zip(report["a_first"], report["a_second"])] == [report[k] for k in ("wins", "draws",
                                                                                               "losses")]
    assert sum(report["a_first"]) == sum(report["a_second"]) == 20


def test_minimax_never_loses_to_random(runner):
    report = _run_json(runner, ["minimax", "random", "--game", "tictactoe", "--games", "60", "--seed", "3"])
    assert report["losses"] == 0 and report["wins"] > 0
    assert report["score"] > 0.5 and report["elo"] > 0


def test_table_output_through_the_main_command(runner):
    result = runner.invoke(main, ["eval", "minimax", "random", "--game", "tictactoe", "--games", "10"])
    assert result.exit_code == 0, result.output
    assert "A wins / draws / losses" in result.stdout and "Elo A - B" in result.stdout
    assert "score of A [95% CI]" in result.stdout and "W-D-L as first player / second" in result.stdout


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
    (["random", "random", "--game", "tictactoe", "--games", "4", "--opening-plies", "4-2"], "empty range"),
])
def test_bad_input_is_one_line_error(runner, args, needle):
    one_line_error(runner.invoke(eval_command, args), needle)


def test_missing_registry_and_wrong_game_model(runner, tmp_path, tiny_models):
    no_registry = ["000003", "random", "--game", "tictactoe", "--games", "4", "--data-dir", str(tmp_path)]
    one_line_error(runner.invoke(eval_command, no_registry), "registry")
    wrong_game = [str(tiny_models["connect4"]), "random", "--game", "tictactoe", "--games", "4"]
    one_line_error(runner.invoke(eval_command, wrong_game), "connect4")


def test_evaluate_players_reports_progress_per_chunk_and_is_reproducible():
    game = make_game("tictactoe")
    search = load_config(GatekeeperConfig, "tictactoe", env=None).match_search_config(1)
    seen = []
    first, _ = evaluate_players(game, "random", "pure-mcts:8", games=14, search=search, jobs=3, seed=5,
                                opening_seed=1, progress=lambda done, total, score: seen.append((done, total, score)))
    second, _ = evaluate_players(game, "random", "pure-mcts:8", games=14, search=search, jobs=3, seed=5,
                                 opening_seed=1)
    assert [s[:2] for s in seen] == [(6, 14), (10, 14), (14, 14)]    # 7 openings in chunks of 3, 2, 2
    assert first == second and first.games == 14 and seen[-1][2] == pytest.approx(first.score)
    seen.clear()
    pooled, _ = evaluate_players(game, "random", "pure-mcts:8", games=14, search=search, jobs=3, seed=5,
                                 opening_seed=1, processes=2,
                                 progress=lambda done, total, score: seen.append((done, total, score)))
    assert pooled == first                                           # spawned processes play the same games
    assert len(seen) == 3 and seen[-1][:2] == (14, 14) and seen[-1][2] == pytest.approx(first.score)


@pytest.mark.parametrize("plies", [None, (3, 4)])
def test_the_gate_and_eval_give_the_same_result(runner, tictactoe_registry, plies):
    """The gate's match jobs (run here with a worker context) and `zeroforge eval` play the same games: with the
    family's openings, and with openings of given plies (gate.opening_plies, eval --opening-plies)."""
    cfg = load_config(GatekeeperConfig, "tictactoe", env=None)
    layout = DataLayout(tictactoe_registry, "tictactoe")
    context, data_id, games, seed = WorkerContext(data_dir=tictactoe_registry), layout.data_id(), 12, 11
    chunks = [match_job(MatchPayload(data_id=data_id, config=cfg, player_a="000001", player_b="pure-mcts:8",
                                     opening_indices=chunk, num_openings=games // 2, simulations=cfg.gate.simulations,
                                     seed=seed + i, opening_plies=plies).model_dump(mode="json"), context)
              for i, chunk in enumerate(split_openings(games // 2, cfg.gate.jobs))]
    gate = summarize_match(chunks, cfg.gate.promote_rule, cfg.gate.threshold)
    args = ["1", "pure-mcts:8", "--game", "tictactoe", "--games", str(games), "--seed", str(seed), "--data-dir",
            str(tictactoe_registry)]
    report = _run_json(runner, args + ([] if plies is None else ["--opening-plies", "3-4"]))
    keys = ("games", "pairs", "wins", "draws", "losses", "score", "ci_low", "ci_high", "elo")
    assert {k: report[k] for k in keys} == {k: gate[k] for k in keys}
    assert report["opening_plies"] == (None if plies is None else [3, 4])


def test_best_without_a_registry_plays_the_shipped_model_with_a_note(runner, tmp_path):
    args = ["best", "random", "--game", "tictactoe", "--games", "2", "--sims", "4", "--data-dir", str(tmp_path), "--json"]
    result = runner.invoke(eval_command, args)
    assert result.exit_code == 0, result.output
    assert "note: player A (best): no model registry for tictactoe" in result.stderr
    report = json.loads(result.stdout)
    assert report["games"] == 2 and "'best' plays the shipped tictactoe model" in report["notes"][0]
