"""`zeroforge gtp` (cli.gtp): the GTP command set with ids, errors and malformed input, time settings, pass and
resign; the command as a real subprocess in a full game against GNU Go through a small referee; `zeroforge eval`
with gnugo:LEVEL. No GNU Go process may be left running."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli.eval import eval_command
from cli.gtp import GtpEngine, clean_line, gtp
from cli.play_common import game_config
from shared.games import make_game
from shared.games.go.rules import score_text
from shared.network import create_model, save_model
from shared.games.go import gnugo
from shared.players.analysis import load_network_evaluator
from shared.games.go.gnugo import GtpProcess, find_gnugo, gnugo_command
from tests.cli.conftest import TINY_SPEC, one_line_error
from tests.gnugo_helpers import gnugo_children, requires_gnugo

REPO = Path(__file__).resolve().parents[2]
GO9 = make_game("go-9x9")
REQUIRED = {"protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
            "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score", "time_settings", "time_left"}


@pytest.fixture(scope="module")
def go_model(tmp_path_factory) -> Path:
    """An untrained 1x8 go-9x9 model file."""
    path = tmp_path_factory.mktemp("go-model") / "go-9x9.pt"
    save_model(path, create_model(GO9, TINY_SPEC, seed=1), GO9, {"note": "untrained test model"})
    return path


@pytest.fixture(scope="module")
def evaluate(go_model):
    return load_network_evaluator(go_model, GO9)


def make_engine(evaluate, sims: int = 8, **kwargs) -> GtpEngine:
    return GtpEngine(GO9, evaluate, search=game_config("go-9x9").match_search_config(sims), **kwargs)


@pytest.fixture
def engine(evaluate) -> GtpEngine:
    return make_engine(evaluate)


def ok(engine: GtpEngine, line: str) -> str:
    """The result of a command that must succeed."""
    answer = engine.handle(line)
    assert answer is not None and answer.startswith("= ") and answer.endswith("\n\n"), (line, answer)
    return answer[2:-2]


def ply(engine: GtpEngine) -> int:
    return int(engine.state[GO9.num_cells + 2])


# ----- the protocol ----------------------------------------------------------------------------------------------
def test_identity_commands_and_ids(engine):
    assert engine.handle("1 protocol_version\n") == "=1 2\n\n"
    assert engine.handle("name") == "= zeroforge\n\n"
    assert engine.handle("42 version").startswith("=42 ")
    assert engine.handle("2 known_command genmove") == "=2 true\n\n"
    assert engine.handle("3 known_command frobnicate") == "=3 false\n\n"
    listed = engine.handle("4 list_commands")
    assert listed.startswith("=4 ") and REQUIRED <= set(listed[3:].split())
    assert engine.handle("5 quit") == "=5 \n\n" and engine.quit_requested


def test_input_is_cleaned_as_gtp_asks(engine):
    assert clean_line("\tknown_command\x01 play # a comment\r\n") == "known_command play"
    for ignored in ("", "\n", "   \t ", "# only a comment", "\x00\x07"):
        assert engine.handle(ignored) is None
    assert engine.handle("7\tname  # who are you\r\n") == "=7 zeroforge\n\n"


@pytest.mark.parametrize("line, answer", [
    ("frobnicate", "? unknown command"),
    ("8 frobnicate now", "?8 unknown command"),
    ("9", "?9 missing command"),
    ("10 play b", "?10 syntax error: expected play COLOR VERTEX"),
    ("play purple E5", "? syntax error: invalid color 'purple' (b, w, black or white)"),
    ("play b Z9", "? syntax error: 'Z9' is not a point"),
    ("play b I5", "? syntax error: 'I5' is not a point of a 9x9 go board (GTP skips the letter I)"),
    ("play b E5 E6", "? syntax error: expected play COLOR VERTEX"),
    ("genmove", "? syntax error: expected genmove COLOR"),
    ("11 boardsize 13", "?11 unacceptable size"),
    ("boardsize nine", "? syntax error: board size 'nine' is not an integer"),
    ("komi seven", "? syntax error: komi 'seven' is not a number"),
    ("komi 7.25", "? syntax error: go komi 7.25 is not allowed"),
    ("komi nan", "? syntax error: go komi"),
    ("time_settings 300 30", "? syntax error: expected time_settings"),
    ("time_left b -5 0", "? syntax error: time must be a finite number >= 0"),
    ("known_command", "? syntax error: expected known_command COMMAND"),
    ("12 undo", "?12 cannot undo"),
])
def test_malformed_and_failing_commands_get_error_answers(engine, line, answer):
    reply = engine.handle(line)
    assert reply.startswith(answer) and reply.endswith("\n\n") and reply.count("\n\n") == 1, reply
    assert ply(engine) == 0 and engine.handle("name") == "= zeroforge\n\n"       # nothing changed, still serving


def test_play_undo_showboard_final_score_and_komi(engine):
    moves = ["E5", "D4", "pass", "C3"]
    for colour, move in zip("bwbw", moves):
        ok(engine, f"play {colour} {move}")
    expected = GO9.play_moves(GO9.parse_moves(" ".join(moves)))
    assert np.array_equal(engine.state, expected[0])
    assert ok(engine, "final_score") == score_text(float(GO9.area_score(expected)[0]))
    board = ok(engine, "showboard")
    assert board.startswith("\n") and "\n\n" not in board and "[O]" in board and "A  B  C  D  E  F  G  H  J" in board
    assert engine.handle("play b E5") == "? illegal move\n\n"                    # occupied
    ok(engine, "undo")
    assert np.array_equal(engine.state, GO9.play_moves(GO9.parse_moves("E5 D4 pass"))[0])
    assert ok(engine, "final_score") == "W+7.5"                                  # one stone each, komi 7.5
    ok(engine, "clear_board")
    assert ply(engine) == 0 and ok(engine, "final_score") == "W+7.5"
    ok(engine, "komi 0.5")
    assert ok(engine, "final_score") == "W+0.5"
    ok(engine, "komi 0")
    assert ok(engine, "final_score") == "0"
    ok(engine, "komi -3")
    assert ok(engine, "final_score") == "B+3"
    ok(engine, "boardsize 9")
    assert ply(engine) == 0


def test_suicide_and_ko_are_illegal_moves_and_either_colour_may_play(engine):
    for move in ("b A2", "b B1"):                      # two black stones in a row: allowed, no pass inserted
        ok(engine, f"play {move}")
    assert engine.handle("play w A1") == "? illegal move\n\n"                    # suicide
    ok(engine, "clear_board")
    for move in ("b C5", "b B4", "b C3", "w D5", "w C4", "w E4", "w D3", "b D4"):   # black D4 takes C4
        ok(engine, f"play {move}")
    assert engine.state[GO9.parse_action("C4")] == 0
    assert engine.handle("play w C4") == "? illegal move\n\n"                    # the ko: an immediate retake
    ok(engine, "play w pass")
    ok(engine, "play b pass")                                                    # two passes end the game ...
    assert GO9.is_terminal(engine.state[None])[0]
    assert engine.handle("play w C4") == "? illegal move\n\n"                    # (positional superko, still)
    ok(engine, "play w J9")                                                      # ... but a clean-up may go on
    assert engine.state[GO9.parse_action("J9")] == -1
    assert ok(engine, "final_score") == "W+6.5"                                  # 4 stones and C4 against 4 stones


def test_genmove_plays_a_legal_move_for_either_colour(engine):
    first = ok(engine, "genmove w")                                              # white first: no pass inserted
    action = GO9.parse_action(first)
    assert ply(engine) == 1 and (action == GO9.pass_action or engine.state[action] == -1)
    before = engine.state.copy()
    second = ok(engine, "genmove black")
    played = GO9.step(before[None].copy(), np.array([GO9.parse_action(second)]))      # legal for black
    assert ply(engine) == 2 and np.array_equal(engine.state[:GO9.num_cells], played[0, :GO9.num_cells])
    ok(engine, "undo")
    ok(engine, "undo")
    assert ply(engine) == 0
    assert engine.handle("3 genmove b").startswith("=3 ")


def test_pass_when_the_opponent_passed_and_passing_wins(engine):
    ok(engine, "play b E5")
    ok(engine, "play w pass")
    assert ok(engine, "genmove b") == "pass"                                     # 81 - 7.5 for black: pass wins
    assert ok(engine, "final_score") == "B+73.5"
    ok(engine, "clear_board")
    ok(engine, "komi 100")
    ok(engine, "play b E5")
    ok(engine, "play w pass")
    assert ok(engine, "genmove b") != "pass"                                     # passing would lose by 19


def test_resigns_below_the_threshold_but_not_in_the_first_moves(evaluate):
    engine = make_engine(evaluate, resign_threshold=1.0)                         # every value is below 1
    assert ok(engine, "genmove b") != "resign"                                   # never in the first moves
    ok(engine, "undo")
    vertices = [GO9.action_to_str(a) for a in range(0, GO9.num_cells, 4)][:GO9.num_cells // 4]
    for colour, vertex in zip("bw" * 20, vertices):
        ok(engine, f"play {colour} {vertex}")
    before = engine.state.copy()
    assert ok(engine, "genmove b") == "resign"
    assert np.array_equal(engine.state, before)                                  # resigning plays nothing
    never = make_engine(evaluate, resign_threshold=-1.0)
    for colour, vertex in zip("bw" * 20, vertices):
        ok(never, f"play {colour} {vertex}")
    assert ok(never, "genmove b") != "resign"


def test_time_settings_cap_the_search(evaluate):
    engine = make_engine(evaluate, sims=100_000)                                 # minutes without a time limit
    ok(engine, "time_settings 0 1 1")                                            # 1 second per move
    ok(engine, "time_left b 1 1")
    for colour in "bwb":
        start = time.monotonic()
        move = ok(engine, f"genmove {colour}")
        assert time.monotonic() - start < 3.0 and move
    assert ply(engine) == 3 and engine.last_search.budget is not None
    assert 1 <= engine.last_search.simulations < 100_000 and engine.last_search.budget < 1.0


def test_a_failing_search_is_an_answer_not_a_crash(engine):
    def broken(states):
        raise RuntimeError("the network is on fire")

    engine.evaluate = broken
    assert engine.handle("5 genmove b") == "?5 internal error: the network is on fire\n\n"
    assert ply(engine) == 0 and engine.handle("name") == "= zeroforge\n\n"


# ----- the command -----------------------------------------------------------------------------------------------
def gtp_argv(model: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "cli", "gtp", "--game", "go-9x9", "--model", str(model), *extra]


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def test_command_over_pipes(go_model):
    commands = "1 name\n\n2 boardsize 19\nplay b E5\n3 genmove w\nbogus\n4 quit\nname\n"
    done = subprocess.run(gtp_argv(go_model, "--sims", "4"), input=commands, capture_output=True, text=True,
                          cwd=REPO, env=subprocess_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    answers = done.stdout.split("\n\n")
    assert answers[:3] == ["=1 zeroforge", "?2 unacceptable size", "= "]
    assert answers[3].startswith("=3 ") and answers[4:] == ["? unknown command", "=4 ", ""]   # nothing after quit
    assert "zeroforge gtp: go-9x9" in done.stderr


def test_command_errors_are_one_line(runner, go_model, tmp_path):
    one_line_error(runner.invoke(gtp, ["--game", "tictactoe", "--model", str(go_model)]), "plays Go only")
    one_line_error(runner.invoke(gtp, ["--game", "go-7x7", "--data-dir", str(tmp_path)]), "no model is shipped for go-7x7")
    one_line_error(runner.invoke(gtp, ["--game", "go-13x13", "--model", str(go_model)]), "go-9x9")


def referee(black: GtpProcess, white: GtpProcess, size: int, komi: float, max_moves: int) -> tuple[list[str], str]:
    """Alternate genmove/play between two GTP engines from an empty board until two passes in a row, a
    resignation or `max_moves` moves: (the moves, "two passes" | "resign" | "move cap")."""
    engines = {"black": black, "white": white}
    for engine in engines.values():
        engine.command(f"boardsize {size}")
        engine.command("clear_board")
        engine.command(f"komi {komi:g}")
    colour, other = "black", "white"
    moves: list[str] = []
    while len(moves) < max_moves:
        move = engines[colour].command(f"genmove {colour}", timeout=120).strip()
        moves.append(move)
        if move.lower() == "resign":
            return moves, "resign"
        engines[other].command(f"play {colour} {move}")
        if len(moves) >= 2 and moves[-1].lower() == moves[-2].lower() == "pass":
            return moves, "two passes"
        colour, other = other, colour
    return moves, "move cap"


@requires_gnugo
def test_full_game_against_gnugo(go_model):
    zeroforge = GtpProcess(gtp_argv(go_model, "--sims", "8"), timeout=120)    # started through the environment
    opponent = GtpProcess(gnugo_command(find_gnugo(), 0, 9, 7.5))
    try:
        moves, ending = referee(zeroforge, opponent, 9, 7.5, max_moves=GO9.max_moves)
        scores = [engine.command("final_score").strip() for engine in (zeroforge, opponent)]
    finally:
        zeroforge.close()
        opponent.close()
    assert ending in ("two passes", "resign"), (ending, moves)
    played = GO9.play_moves([GO9.parse_action(m) for m in moves if m.lower() != "resign"])   # all legal for zeroforge
    if ending == "two passes":
        assert GO9.is_terminal(played)[0]
        assert scores[0] == scores[1] == score_text(float(GO9.area_score(played)[0])), (scores, moves)
    assert gnugo_children() == []


@requires_gnugo
def test_eval_gnugo_against_random(runner):
    result = runner.invoke(eval_command, ["gnugo:1", "random", "--game", "go-9x9", "--games", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["games"] == 2 and report["wins"] == 2 and report["player_a"] == "gnugo:1"
    assert gnugo_children() == []                                                # the match closed its players


def test_eval_without_gnugo_is_a_one_line_error(runner, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(gnugo, "DEBIAN_GNUGO", tmp_path / "gnugo")
    result = runner.invoke(eval_command, ["gnugo:1", "random", "--game", "go-9x9", "--games", "2"])
    one_line_error(result, "apt-get install gnugo")
