"""cli.pbrain's Protocol in process, with a scripted search in place of the network's: what reaches the search
(the position and the move's time budget from INFO) and what the brain answers."""
from __future__ import annotations

import io

import numpy as np
import pytest

from cli.pbrain import Protocol
from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.players.gomocup_time import BUDGET_SHARE, OVERHEAD_S
from shared.players.timed_analysis import TimedAnalysis

GAME = make_game("gomoku-8x8-5")


class ScriptedThink:
    """Plays the lowest empty cell; records (state, seconds) of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, float | None]] = []

    def __call__(self, state: np.ndarray, seconds: float | None) -> TimedAnalysis:
        from shared.players.analysis import PositionAnalysis

        self.calls.append((state.copy(), seconds))
        action = int(np.flatnonzero(state[: GAME.num_cells] == 0)[0])
        move = GAME.action_to_str(action)
        return TimedAnalysis([PositionAnalysis(action, move, 0.25, "first", "X", [], [move], move)], 42, 0.125,
                             seconds, 2)


def _session(script: str, think) -> list[str]:
    said: list[str] = []
    Protocol(GAME, think, said.append, None).run(io.StringIO(script))
    return said


def test_moves_go_through_the_search_with_the_info_budget() -> None:
    think = ScriptedThink()
    said = _session("INFO timeout_turn 1000\nSTART 8\nTURN 0,0\nINFO time_left 5000\nTURN 3,3\nEND\n", think)
    assert said[0] == "OK" and said[1] == "1,0"
    assert said[2] == "MESSAGE zeroforge: 42 simulations in 125 ms (budget 720 ms), value +0.25"
    first_state, first_budget = think.calls[0]
    assert first_budget == pytest.approx(1.0 * BUDGET_SHARE - OVERHEAD_S)        # INFO before START is kept
    assert first_state[0] == 1 and first_state[GAME.num_cells + F_PLAYER] == -1  # the brain moves second
    second_budget = think.calls[1][1]
    assert second_budget == pytest.approx(5.0 / 30 * BUDGET_SHARE - OVERHEAD_S)  # 61 empty squares: 30 moves left
    assert said[3] == "2,0"


def test_without_limits_there_is_no_budget_and_errors_are_one_line() -> None:
    think = ScriptedThink()
    said = _session("START 8\nBEGIN\nINFO timeout_turn soon\nTURN 0,0\nTURN 9,9\nEND\n", think)
    assert said[:2] == ["OK", "0,0"] and "(no time limit)" in said[2]
    assert said[3] == "ERROR INFO timeout_turn needs an integer, got 'soon'"
    assert said[4] == "ERROR square 0,0 is already occupied"
    assert said[5] == "ERROR 9,9 is off the 8x8 board (x 0..7, y 0..7)" and len(think.calls) == 1
