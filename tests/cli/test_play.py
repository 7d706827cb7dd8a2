"""`zeroforge play` driven through stdin, and cli.play_session."""
from __future__ import annotations

import json

import pytest

from cli.play import play
from shared.players.analysis import load_network_evaluator
from shared.search import SearchConfig
from shared.games import GameError, make_game
from shared.layout import shipped_model_path
from cli.play_session import PlaySession
from tests.cli.conftest import one_line_error

# othello-6x6 after these 31 moves: white (the second player) to move and no legal square, so white must pass.
OTHELLO_WHITE_MUST_PASS = ("d5 c5 b4 e3 e2 e1 f1 d2 c2 b5 a6 d6 f4 b3 c6 e4 a4 b2 f3 b6 c1 e6 a5 d1 b1 e5 f5 a1 "
                           "f6 a3 f2")


def _play(runner, model, *extra: str, stdin: str, game: str = "tictactoe"):
    result = runner.invoke(play, ["--game", game, "--model", str(model), "--sims", "16", *extra], input=stdin)
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception
    return result.stdout


def test_bad_moves_are_refused_then_quit(runner, tiny_models):
    out = _play(runner, tiny_models["tictactoe"], stdin="5\nzz\n5\n0\n12\nhelp\nquit\n")
    assert out.count("not accepted") == 4                    # zz (unreadable), 5 (occupied), 0, 12 (two moves)
    assert "5 is occupied after move 2" in out and "legal moves:" not in out
    assert "'12' is 2 moves (1 2); type one move at a time: a square digit 1-9" in out
    assert "Commands: hint, undo, quit" in out               # help: the move form and the commands, no move dump
    assert out.count("your move (X)") == 7                   # one prompt per input line: refusals and help re-prompt
    assert "game left unfinished" in out and "game over" not in out
    assert out.strip().splitlines()[-1].startswith("game record (2 moves): 5")


def test_connect4_single_move_form_undo_and_hint(runner, tiny_models):
    out = _play(runner, tiny_models["connect4"], stdin="44\n4\nhint\nundo\nundo\nquit\n", game="connect4")
    assert "'44' is 2 moves (4 4); type one move at a time: a column digit 1-7 from the left, e.g. 4" in out
    assert "4453" not in out
    assert "hint:" in out and "value for you" in out
    assert "took back 4 " in out and "nothing to undo" in out
    assert "game record (0 moves)" in out


def test_banner_names_the_model(runner, tiny_models, tictactoe_registry):
    out = _play(runner, tiny_models["tictactoe"], stdin="quit\n")
    assert f"against model file {tiny_models['tictactoe']}" in out
    result = runner.invoke(play, ["--game", "tictactoe", "--sims", "4", "--data-dir", str(tictactoe_registry)],
                           input="quit\n")
    assert "against registry version 000001 (best), generation 0" in result.stdout
    result = runner.invoke(play, ["--game", "connect4", "--sims", "4", "--data-dir", str(tictactoe_registry)],
                           input="quit\n")
    assert "'best' plays the shipped connect4 model" in result.stdout
    record = json.loads(shipped_model_path("connect4").with_suffix(".json").read_text())
    assert (f"against the shipped connect4 model ({record['generations']} generations, "
            f"{record['selfplay_games']:,} self-play games") in result.stdout


def test_winning_line_one_end_message_and_saved_sgf(runner, tiny_models, tmp_path):
    # X (you) has h8 i8 j8 k8; O (the AI) has a1 b1 c1 d1 and is to move... so let O be the human instead:
    # the AI plays first (X) from a position where X has four in a row open at both ends and wins at once.
    opening = "h8 a1 i8 b1 j8 c1 k8 d1"
    save = tmp_path / "game.sgf"
    out = _play(runner, tiny_models["gomoku-15"], "--first", "human", "--moves", opening, "--save", str(save),
                stdin="l8\n", game="gomoku-15")
    assert "game over: you win: h8 i8 j8 k8 l8 in a row" in out
    assert out.count("game over") == 1
    assert "(X)" in out and "[X]" in out                   # the winning stones marked, the last move bracketed
    assert "game record (9 moves): h8 a1 i8 b1 j8 c1 k8 d1 l8" in out
    sgf = save.read_text()
    assert sgf.startswith("(;FF[4]GM[4]") and "SZ[15]" in sgf and "RE[B+]" in sgf
    assert sgf.count(";B[") == 5 and sgf.count(";W[") == 4 and ";B[hh];W[ao]" in sgf


def test_end_of_input_leaves_cleanly(runner, tiny_models):
    out = _play(runner, tiny_models["connect4"], "--hint", stdin="4\n", game="connect4")
    assert "hint:" in out and "value for you" in out and "AI (O) plays" in out
    assert "game left unfinished" in out


def test_full_game_with_ai_first(runner, tiny_models):
    # Each human turn tries squares 1..9 in order; occupied ones are refused until one is free.
    out = _play(runner, tiny_models["tictactoe"], "--first", "ai", "--hint", stdin="1\n2\n3\n4\n5\n6\n7\n8\n9\n" * 5)
    assert out.startswith("tictactoe: you play second")
    assert "AI (X) plays" in out and "your move (O)" in out and "its value estimate" in out
    end, record = out.strip().splitlines()[-2:]
    assert end.startswith(("game over: you win", "game over: the AI wins", "game over: draw"))
    assert out.count("game over") == 1 and record.startswith("game record (")


def test_othello_forced_pass_is_played_for_the_human(runner, tiny_models):
    out = _play(runner, tiny_models["othello-6x6"], "--first", "ai", "--moves", OTHELLO_WHITE_MUST_PASS,
                stdin="quit\n", game="othello-6x6")
    assert "You have no legal move: you pass." in out and "AI (black) plays" in out


def test_bad_options_are_one_line_errors(runner, tiny_models):
    one_line_error(runner.invoke(play, ["--game", "tictactoe", "--model", str(tiny_models["connect4"])]), "connect4")
    one_line_error(runner.invoke(play, ["--game", "tictactoe", "--model", str(tiny_models["tictactoe"]),
                                        "--moves", "1 1"]), "move 2: 1 is occupied after move 1")


def test_session_turns_and_result(tiny_models):
    game = make_game("tictactoe")
    evaluate = load_network_evaluator(tiny_models["tictactoe"], game)
    session = PlaySession(game, evaluate, search=SearchConfig(num_simulations=64), human_first=True)
    session.start_from("1 4 2")                               # X threatens 3; O (the AI) is to move
    assert not session.human_to_move and session.forced_pass() is None
    with pytest.raises(GameError, match="not your turn"):
        session.play_human("5")
    analysis = session.play_ai()
    assert analysis.move == "3" and analysis.colour == "O"    # the AI blocks the immediate loss
    assert session.moves == [0, 3, 1, 2] and session.human_to_move
    with pytest.raises(GameError, match="3 is occupied after move 4"):
        session.play_human("3")                               # occupied: refused, nothing changes
    assert session.moves == [0, 3, 1, 2]
    session.play_human("5")
    assert session.undo() == [4] and session.moves == [0, 3, 1, 2]   # --moves "1 4 2" then the AI's 3 stay
    with pytest.raises(GameError, match="no move of yours"):
        session.undo()
    session.start_from("1 4 2 5 3")                           # X completed the top row
    assert session.finished and session.outcome_text() == "you win"
    with pytest.raises(GameError, match="over"):
        session.analyze()


def test_connect4_win_names_its_column_and_rows(runner, tiny_models):
    out = _play(runner, tiny_models["connect4"], "--moves", "121212", stdin="1\n", game="connect4")
    assert "game over: you win: 4 in a row in column 1, rows 1 2 3 4 (from the bottom)" in out
    assert "game record (7 moves): 1212121" in out
