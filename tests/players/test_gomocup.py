"""shared.players.gomocup_board and gomocup_time: the stones of a Gomocup brain and the position they make, the
INFO limits and the seconds of each move."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_LAST, F_PLAYER, F_PLY
from shared.players.gomocup_board import OPPONENT, OWN, GomocupBoard, GomocupBoardError
from shared.players.gomocup_time import BUDGET_SHARE, OVERHEAD_S, GomocupLimits

GAME = make_game("gomoku-6x6-4")


def test_the_board_makes_the_position_with_the_brain_to_move():
    board = GomocupBoard(GAME)
    state = board.state()
    assert state[GAME.num_cells + F_PLAYER] == 1 and state[GAME.num_cells + F_LAST] == -1
    board.place(2, 1, OPPONENT)                                      # x = column 2, y = row 1
    board.place(3, 4, OWN)
    board.place(0, 5, OPPONENT)
    state = board.state()
    base = GAME.num_cells
    assert state[base + F_PLAYER] == -1 and state[base + F_PLY] == 3 and state[base + F_LAST] == 5 * 6 + 0
    assert state[1 * 6 + 2] == 1 and state[5 * 6 + 0] == 1 and state[4 * 6 + 3] == -1    # own stones are -1 here
    assert board.place_action(7, OWN) == (1, 1) and board.empty_cells == 32
    np.testing.assert_array_equal(np.flatnonzero(board.state()[:base]), [7, 8, 27, 30])


def test_bad_requests_are_board_errors():
    board = GomocupBoard(GAME)
    board.place(0, 0, OWN)
    with pytest.raises(GomocupBoardError, match="already occupied"):
        board.place(0, 0, OPPONENT)
    with pytest.raises(GomocupBoardError, match=r"6,0 is off the 6x6 board \(x 0..5, y 0..5\)"):
        board.place(6, 0, OWN)
    with pytest.raises(GomocupBoardError, match="nothing to take back"):
        board.take_back(1, 1)
    board.take_back(0, 0)
    assert board.stones == []
    for cell in range(GAME.num_cells):
        board.place(cell % 6, cell // 6, OWN if cell % 2 else OPPONENT)
    with pytest.raises(GomocupBoardError, match="board is full"):
        board.state()
    board.reset()
    assert board.empty_cells == GAME.num_cells


def test_move_budget_from_the_info_limits():
    limits = GomocupLimits()
    assert limits.move_budget(225) is None                           # no limit sent
    limits.note("timeout_turn", "5000")
    assert limits.move_budget(225) == pytest.approx(5.0 * BUDGET_SHARE - OVERHEAD_S)
    limits.note("time_left", "20000")                                # 20 s over 112 moves is the smaller share
    assert limits.move_budget(225) == pytest.approx(20.0 / 112 * BUDGET_SHARE - OVERHEAD_S)
    assert limits.move_budget(8) == pytest.approx(20.0 / 10 * BUDGET_SHARE - OVERHEAD_S)   # at least 10 moves
    limits.note("timeout_match", "0")                                # no match limit: time_left does not count
    assert limits.move_budget(225) == pytest.approx(5.0 * BUDGET_SHARE - OVERHEAD_S)
    limits.note("timeout_turn", "0")                                 # as fast as possible
    assert limits.move_budget(225) == 0.0
    limits.note("folder", "/tmp/x")
    assert limits.other == {"folder": "/tmp/x"}
    with pytest.raises(ValueError):
        limits.note("rule", "freestyle")
