"""`zeroforge analyze` and shared.players.analysis: JSON fields, tactics, batched --positions, model choice."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cli.analyze import analyze
from shared.search import SearchConfig
from shared.players.analysis import DEFAULT_PV_DEPTH, analyze_states, choose_model_path, load_network_evaluator
from shared.players.timed_analysis import analyze_move_strings
from shared.games import make_game
from shared.players.spec import PlayerSpecError
from tests.cli.conftest import one_line_error

TOP_FIELDS = {"move", "visits", "visit_share", "prior", "q"}


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_fields_and_immediate_win(runner, tiny_models):
    # X holds 1 and 2, O holds 4 and 5: X to move wins on 3 (O threatens 6), even with an untrained network.
    args = ["--game", "tictactoe", "--moves", "1 4 2 5", "--model", str(tiny_models["tictactoe"]),
            "--sims", "200", "--top", "3", "--json"]
    answer = _json(runner.invoke(analyze, args))
    assert answer["moves"] == "1 4 2 5" and answer["move"] == "3"
    assert answer["to_move"] == "first" and answer["colour"] == "X"
    assert answer["value"] > 0.5                                          # winning for the side to move
    assert len(answer["top"]) == 3 and all(TOP_FIELDS <= set(entry) for entry in answer["top"])
    assert answer["top"][0]["move"] == "3" and answer["top"][0]["q"] == pytest.approx(1.0)
    shares = [entry["visit_share"] for entry in answer["top"]]
    assert shares == sorted(shares, reverse=True) and 0 < sum(shares) <= 1.0 + 1e-6
    counts = [entry["visits"] for entry in answer["top"]]
    assert all(isinstance(c, int) for c in counts) and counts[0] > 100              # visit counts, not shares
    assert answer["model"] == str(tiny_models["tictactoe"])
    assert answer["pv"] == "3"                                                       # X wins at once: PV ends


def test_unvisited_moves_have_no_q_and_the_pv_follows_the_search(runner, tiny_models):
    args = ["--game", "gomoku-15", "--moves", "h8", "--model", str(tiny_models["gomoku-15"]), "--sims", "40",
            "--top", "300", "--json"]
    answer = _json(runner.invoke(analyze, args))
    unvisited = [entry for entry in answer["top"] if entry["visits"] == 0]
    assert unvisited and all(entry["q"] is None for entry in unvisited)
    assert all(entry["q"] is not None for entry in answer["top"] if entry["visits"] > 0)
    pv = answer["pv"].split()
    assert pv[0] == answer["move"] and len(pv) >= 2 and len(set(pv)) == len(pv)
    game = make_game("gomoku-15")
    game.play_moves(game.parse_moves("h8 " + answer["pv"]))                        # a legal line


def test_start_position_without_moves_and_errors_in_notation(runner, tiny_models):
    model = str(tiny_models["connect4"])
    answer = _json(runner.invoke(analyze, ["--game", "connect4", "--model", model, "--sims", "8", "--json"]))
    assert answer["moves"] == "" and answer["to_move"] == "first"
    one_line_error(runner.invoke(analyze, ["--game", "connect4", "--moves", "4444444", "--model", model]),
                   "move 7: column 4 is full after move 6")
    gomoku = str(tiny_models["gomoku-15"])
    one_line_error(runner.invoke(analyze, ["--game", "gomoku-15", "--moves", "h8 i9 c3 d4 e5 c3", "--model", gomoku]),
                   "move 6: c3 is occupied after move 5")


@pytest.mark.parametrize("game_name, moves, to_move", [("connect4", "4453", "first"), ("gomoku-15", "h8 i9", "first"),
                                                        ("othello-6x6", "d5", "second")])
def test_other_games_notation(runner, tiny_models, game_name, moves, to_move):
    args = ["--game", game_name, "--moves", moves, "--model", str(tiny_models[game_name]), "--sims", "16", "--json"]
    answer = _json(runner.invoke(analyze, args))
    game = make_game(game_name)
    played = game.play_moves(game.parse_moves(moves))
    chosen = game.parse_action(answer["move"])
    assert game.legal_mask(played)[0, chosen] and answer["to_move"] == to_move
    assert answer["top"][0]["move"] == answer["move"]


def test_text_output(runner, tiny_models):
    args = ["--game", "connect4", "--moves", "", "--model", str(tiny_models["connect4"]), "--sims", "8"]
    result = runner.invoke(analyze, args)
    assert result.exit_code == 0, result.output
    assert "best move for X" in result.stdout and "1  2  3  4  5  6  7" in result.stdout
    assert "principal variation:" in result.stdout and f"(model {tiny_models['connect4']})" in result.stdout


def test_positions_file_keeps_order_and_reports_errors_in_place(runner, tiny_models, tmp_path):
    lines = ["1 4 2 5", "", "1 1", "zz", "1 4 2 5 3", "5"]
    path = tmp_path / "positions.txt"
    path.write_text("\n".join(lines) + "\n")
    args = ["--game", "tictactoe", "--positions", str(path), "--model", str(tiny_models["tictactoe"]), "--sims", "64"]
    result = runner.invoke(analyze, args)
    assert result.exit_code == 0, result.output
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["moves"] for a in answers] == lines
    assert [("error" in a) for a in answers] == [False, False, True, True, True, False]
    assert answers[0]["move"] == "3"
    assert answers[1]["to_move"] == "first" and answers[5]["to_move"] == "second"
    assert "move 2: 1 is occupied after move 1" in answers[2]["error"] and "over" in answers[4]["error"]
    assert all(a["model"] == str(tiny_models["tictactoe"]) for a in answers if "error" not in a)


def test_positions_from_stdin(runner, tiny_models):
    args = ["--game", "connect4", "--positions", "-", "--model", str(tiny_models["connect4"]), "--sims", "4"]
    result = runner.invoke(analyze, args, input="4453\n44444444\n")
    assert result.exit_code == 0, result.output
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["moves"] for a in answers] == ["4453", "44444444"]
    assert "move" in answers[0] and answers[1]["error"] == "move 7: column 4 is full after move 6"


def test_a_time_budget_with_sims_as_the_node_cap(runner, tiny_models, tmp_path):
    model = str(tiny_models["tictactoe"])
    args = ["--game", "tictactoe", "--moves", "1 4 2 5", "--model", model, "--sims", "5000", "--time", "0.5"]
    answer = _json(runner.invoke(analyze, [*args, "--json"]))
    # X wins at once here, so a fast machine may fit the whole cap in the budget: the slicing against the clock is
    # tested with a fake clock (tests/players/test_timed_analysis.py); this checks the option reaches it
    assert answer["move"] == "3" and 1 <= answer["simulations"] <= 5000 and answer["seconds"] <= 5.0
    capped = _json(runner.invoke(analyze, [*args[:-4], "--sims", "20", "--time", "60", "--json"]))
    assert capped["simulations"] == 20                                   # --sims caps a roomy time budget
    text = runner.invoke(analyze, args)
    assert text.exit_code == 0 and "simulations in" in text.output and "time budget 0.5 s, at most 5000" in text.output
    path = tmp_path / "positions.txt"
    path.write_text("1 4 2 5\n1 1\n")
    result = runner.invoke(analyze, ["--game", "tictactoe", "--positions", str(path), "--model", model, "--sims",
                                     "20", "--time", "60"])
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0]["simulations"] == 20 and "seconds" in answers[0] and set(answers[1]) == {"moves", "error"}
    for bad in ("0", "-1", "soon"):                                      # click's usage error, as for --sims
        refused = runner.invoke(analyze, [*args[:-1], bad])
        assert refused.exit_code == 2 and "Invalid value for '--time'" in refused.output


class CountingEvaluator:
    """Wraps an evaluator and records the batch size of every call."""

    def __init__(self, inner):
        self.inner, self.batch_sizes = inner, []

    def __call__(self, states: np.ndarray):
        self.batch_sizes.append(states.shape[0])
        return self.inner(states)


def test_many_positions_share_one_batched_search(tiny_models):
    game = make_game("tictactoe")
    counting = CountingEvaluator(load_network_evaluator(tiny_models["tictactoe"], game))
    lines = ["", "5", "1 5", "zz", "1 5 9", "1 2"]
    answers = analyze_move_strings(game, counting, lines, search=SearchConfig(num_simulations=10), top_k=2)
    assert len(answers) == 6 and "error" in answers[3]
    # One search over the 5 valid positions: 1 root evaluation + 10 steps, each batching every live tree, then
    # at most one batched simulation per principal-variation move (DEFAULT_PV_DEPTH - 1 after the first).
    assert len(counting.batch_sizes) <= 11 + DEFAULT_PV_DEPTH - 1 and counting.batch_sizes[0] == 5
    single = analyze_states(game, CountingEvaluator(counting.inner), game.play_moves([4])[None, 0],
                            search=SearchConfig(num_simulations=10))
    assert single[0].move == answers[1]["move"]                           # batching does not change the answer


def test_model_choice(tiny_models, tictactoe_registry, tmp_path, monkeypatch):
    game = make_game("tictactoe")
    registry_dir = tictactoe_registry / "games" / "tictactoe" / "models"
    assert choose_model_path(game, None, registry_dir).parent.parent.name == "versions"     # the registry's best
    assert choose_model_path(game, str(tiny_models["tictactoe"]), None) == tiny_models["tictactoe"]
    with pytest.raises(PlayerSpecError, match="not a network"):
        choose_model_path(game, "random", registry_dir)
    monkeypatch.setattr("shared.players.spec.shipped_model_path", lambda name: tmp_path / "missing.pt")
    with pytest.raises(ValueError, match="train one"):
        choose_model_path(game, None, tmp_path / "no-registry")


def test_command_errors(runner, tiny_models, tmp_path, monkeypatch):
    model = str(tiny_models["tictactoe"])
    monkeypatch.setattr("shared.players.spec.shipped_model_path", lambda name: tmp_path / "missing.pt")
    no_model = ["--game", "tictactoe", "--moves", "5", "--data-dir", str(tmp_path)]
    one_line_error(runner.invoke(analyze, no_model), "no model is shipped")
    one_line_error(runner.invoke(analyze, ["--game", "tictactoe", "--moves", "1 1", "--model", model]),
                   "move 2: 1 is occupied after move 1")
    one_line_error(runner.invoke(analyze, ["--game", "tictactoe", "--model", model, "--moves", "5",
                                           "--positions", "-"]), "not both")
    one_line_error(runner.invoke(analyze, ["--game", "connect4", "--moves", "4", "--model", model]), "tictactoe")
    one_line_error(runner.invoke(analyze, ["--game", "tictactoe", "--moves", "5", "--model", "random"]), "network")
