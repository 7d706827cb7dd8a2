"""`zeroforge pbrain` as a separate process: a whole game driven by a Gomocup protocol client (the pygomo-lib
package) over pipes, with the time limits respected; the other commands through a scripted session."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from shared.games import make_game
from tests.games.helpers import longest_line_through

pygomo = pytest.importorskip("pygomo")

REPO = Path(__file__).resolve().parents[2]
TURN_MS = 300                     # INFO timeout_turn: the brain must answer each move within this
SLACK_S = 0.6                     # process scheduling and pipe latency on a shared 2-core machine
SIMS = "1000000"                  # far more than fits in TURN_MS: only the clock can stop the search
RANDOM_REPLIES = 8                # the referee plays at random this long, then greedily (so the game ends)


def _brain_args(model: Path, *extra: str) -> list[str]:
    return ["-m", "cli", "pbrain", "--game", "gomoku-15", "--model", str(model), "--sims", SIMS, *extra]


def _greedy_move(game, state: np.ndarray, rng: np.random.Generator) -> int:
    """The referee's greedy player: the empty cell that makes its longest line (ties at random)."""
    me = int(game.to_play(state[None])[0])
    board = state[: game.num_cells].reshape(game.height, game.width)
    best, choices = -1, []
    for action in np.flatnonzero(game.legal_mask(state[None])[0]).tolist():
        longest = longest_line_through(board, *divmod(action, game.width), me)
        if longest > best:
            best, choices = longest, [action]
        elif longest == best:
            choices.append(action)
    return int(rng.choice(choices))


def test_a_whole_game_through_a_gomocup_client_within_the_time_limit(tiny_models, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    game = make_game("gomoku-15")
    rng = np.random.default_rng(3)
    client = pygomo.EngineClient(sys.executable, args=_brain_args(tiny_models["gomoku-15"]),
                                 working_directory=str(tmp_path))
    state, times, match_left = game.initial_states(1)[0], [], 120_000
    with client:
        assert client.start(15, timeout=120)
        client.set_rule(0)
        client.set_time(turn_time_ms=TURN_MS, match_time_ms=120_000, time_left_ms=match_left)
        assert "zeroforge" in (client.about(timeout=30) or "")
        referee_move = None
        while True:
            began = time.monotonic()
            result = client.begin(timeout=30) if referee_move is None else client.turn(referee_move, timeout=30)
            times.append(time.monotonic() - began)
            assert result is not None, "the brain did not answer a move"
            x, y = result.move.col, result.move.row
            action = y * game.width + x
            assert game.legal_mask(state[None])[0, action], f"the brain played an occupied or off-board square {x},{y}"
            state = game.step(state[None], np.array([action]))[0]
            if game.is_terminal(state[None])[0]:
                break
            match_left -= int(1000 * times[-1])
            client.set_time(time_left_ms=max(match_left, 0))
            legal = np.flatnonzero(game.legal_mask(state[None])[0])
            reply = _greedy_move(game, state, rng) if len(times) > RANDOM_REPLIES else int(rng.choice(legal))
            state = game.step(state[None], np.array([reply]))[0]
            if game.is_terminal(state[None])[0]:
                break
            referee_move = (reply % game.width, reply // game.width)
    assert game.is_terminal(state[None])[0] and len(times) > RANDOM_REPLIES
    assert max(times) <= TURN_MS / 1000 + SLACK_S, f"slowest answer {max(times):.3f} s for a {TURN_MS} ms limit"
    assert float(np.median(times)) <= TURN_MS / 1000, f"median answer {np.median(times):.3f} s"


def _session(args: list[str], script: str, tmp_path: Path) -> list[str]:
    result = subprocess.run([sys.executable, *args], input=script, capture_output=True, text=True, timeout=180,
                            cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if not line.startswith("MESSAGE")]


def test_protocol_commands_and_errors(tiny_models, tmp_path):
    script = "\n".join([
        "TURN 7,7",                           # before START
        "START 20",                           # not the model's board
        "INFO timeout_turn 200", "info rule 1", "START 15",
        "BOARD", "7,7,2", "8,8,1", "7,8,2", "DONE",
        "TAKEBACK 7,8", "TAKEBACK 0,0",
        "PLAY 0,0", "TURN 15,3", "TURN 8,8",
        "RECTSTART 15,15", "BEGIN", "RESTART", "SWAP2BOARD", "END", "TURN 1,1",
    ]) + "\n"
    lines = _session(_brain_args(tiny_models["gomoku-15"]), script, tmp_path)
    assert lines[0] == "ERROR no game: send START first"
    assert lines[1].startswith("ERROR unsupported board 20x20: this brain plays gomoku-15 (15x15)")
    assert "--game gomoku-20x20-5" in lines[1]
    assert lines[2] == "OK"
    x, y = map(int, lines[3].split(","))                    # the brain's move after BOARD: on an empty square
    assert (x, y) not in ((7, 7), (8, 8), (7, 8)) and 0 <= x < 15 and 0 <= y < 15
    assert lines[4:9] == ["OK", "ERROR square 0,0 is empty; there is nothing to take back", "0,0",
                          "ERROR 15,3 is off the 15x15 board (x 0..14, y 0..14)", "ERROR square 8,8 is already occupied"]
    assert lines[9] == "OK" and "," in lines[10] and lines[11] == "OK"
    assert lines[12] == "UNKNOWN command SWAP2BOARD" and len(lines) == 13   # nothing after END


def test_no_model_for_the_board_is_said_clearly(tmp_path):
    lines = _session(["-m", "cli", "pbrain", "--game", "gomoku-20x20-5", "--data-dir", str(tmp_path)],
                     "START 20\nEND\n", tmp_path)
    assert lines[0].startswith("ERROR player 'best': no model registry for gomoku-20x20-5")
    assert "no model is shipped for gomoku-20x20-5" in lines[0]
