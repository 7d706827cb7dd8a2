"""`zeroforge play` driven through stdin, and cli.play_session."""
from __future__ import annotations

import pytest

from cli.play import play
from shared.players.analysis import load_network_evaluator
from shared.search import SearchConfig
from shared.games import GameError, make_game
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
    out = _play(runner, tiny_models["tictactoe"], stdin="5\nzz\n5\n0\nhelp\nquit\n")
    assert out.count("not accepted") == 3                    # zz (unreadable), 5 (occupied), 0 (not a square)
    assert "5 is not a legal move here" in out and "legal moves:" in out
    assert out.count("your move (X)") == 6                   # one prompt per input line: refusals and help re-prompt
    assert "game left unfinished" in out and "game over" not in out


def test_end_of_input_leaves_cleanly(runner, tiny_models):
    out = _play(runner, tiny_models["connect4"], "--hint", stdin="4\n", game="connect4")
    assert "hint:" in out and "value for you" in out and "AI (O) plays" in out
    assert "game left unfinished" in out


def test_full_game_with_ai_first(runner, tiny_models):
    # Each human turn tries squares 1..9 in order; occupied ones are refused until one is free.
    out = _play(runner, tiny_models["tictactoe"], "--first", "ai", "--hint", stdin="1\n2\n3\n4\n5\n6\n7\n8\n9\n" * 5)
    assert out.startswith("tictactoe: you play second")
    assert "AI (X) plays" in out and "your move (O)" in out and "its value estimate" in out
    last = out.strip().splitlines()[-1]
    assert last in ("game over: you win", "game over: the AI wins", "game over: draw")


def test_othello_forced_pass_is_played_for_the_human(runner, tiny_models):
    out = _play(runner, tiny_models["othello-6x6"], "--first", "ai", "--moves", OTHELLO_WHITE_MUST_PASS,
                stdin="quit\n", game="othello-6x6")
    assert "You have no legal move: you pass." in out and "AI (black) plays" in out


def test_bad_options_are_one_line_errors(runner, tiny_models):
    one_line_error(runner.invoke(play, ["--game", "tictactoe", "--model", str(tiny_models["connect4"])]), "connect4")
    one_line_error(runner.invoke(play, ["--game", "tictactoe", "--model", str(tiny_models["tictactoe"]),
                                        "--moves", "1 1"]), "not legal")


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
    with pytest.raises(GameError, match="not a legal move"):
        session.play_human("3")                               # occupied: refused, nothing changes
    assert session.moves == [0, 3, 1, 2]
    session.start_from("1 4 2 5 3")                           # X completed the top row
    assert session.finished and session.outcome_text() == "you win"
    with pytest.raises(GameError, match="over"):
        session.analyze()
