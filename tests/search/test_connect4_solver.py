"""The Connect Four solver against an independent brute force over the game's own numpy rules, on late positions
of random games (where brute force is affordable), plus positions whose value is known by construction."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from shared.games.random_positions import random_position
from shared.games import make_game
from shared.games.connect4.solver import DRAW, ILLEGAL, LOSS, UNKNOWN, WIN, Connect4Solver, encode

GAME = make_game("connect4")


def _random_position(rng: np.random.Generator, plies: int) -> np.ndarray:
    return random_position(GAME, rng, plies)


@lru_cache(maxsize=None)
def _brute_value(key: bytes) -> int:
    """Negamax over shared.games.connect4.rules' step: value for the side to move of the state in `key`."""
    state = np.frombuffer(key, dtype=np.int16).reshape(1, -1)
    best = -2
    for action in np.flatnonzero(GAME.legal_mask(state)[0]):
        child = GAME.step(state, np.array([action]))
        if GAME.is_terminal(child)[0]:
            value = int(round(float(-GAME.terminal_value(child)[0])))   # terminal value is the child mover's view
        else:
            value = -_brute_value(child.tobytes())
        best = max(best, value)
    return best


def _brute_move_values(state: np.ndarray) -> np.ndarray:
    out = np.full(7, ILLEGAL, np.int64)
    for action in np.flatnonzero(GAME.legal_mask(state[None])[0]):
        child = GAME.step(state[None], np.array([action]))
        out[action] = (int(round(float(-GAME.terminal_value(child)[0]))) if GAME.is_terminal(child)[0]
                       else -_brute_value(child.tobytes()))
    return out


def test_move_values_equal_brute_force_on_late_positions() -> None:
    rng = np.random.default_rng(7)
    solver = Connect4Solver()
    seen = set()
    for plies in [34] * 20 + [32] * 20:
        state = _random_position(rng, plies)
        values = solver.move_values(state[: GAME.num_cells].reshape(6, 7))
        assert np.array_equal(values, _brute_move_values(state)), GAME.render(state)
        seen.update(values.tolist())
    assert {WIN, LOSS, ILLEGAL} <= seen          # the sample covers every kind of answer


def test_immediate_wins_and_forced_blocks_by_construction() -> None:
    solver = Connect4Solver(max_nodes=1_000)      # the rest of the board may stay unknown
    board = np.zeros((6, 7), np.int64)
    board[5, 0:3] = 1                             # X: three on the bottom row, column 4 open
    board[5, 4:6] = -1
    board[4, 4] = -1                              # X to move (3 discs each)
    values = solver.move_values(board)
    assert values[3] == WIN and set(values.tolist()) <= {WIN, DRAW, LOSS, UNKNOWN}
    board[4, 4] = board[5, 5] = 0
    board[4, 0] = -1                              # O to move (X 3, O 2): every column but 4 lets X win at once
    values = solver.move_values(board)
    assert values[3] != LOSS and np.all(values[[0, 1, 2, 4, 5, 6]] == LOSS)


def test_a_position_with_a_known_value() -> None:
    """The mirror of a position has the mirrored values."""
    rng = np.random.default_rng(3)
    solver = Connect4Solver()
    for _ in range(10):
        board = _random_position(rng, 30)[: GAME.num_cells].reshape(6, 7)
        assert np.array_equal(solver.move_values(board[:, ::-1]), solver.move_values(board)[::-1])


def test_a_tiny_budget_says_unknown_instead_of_guessing() -> None:
    values = Connect4Solver(max_nodes=10).move_values(np.zeros((6, 7), np.int64))
    assert set(values.tolist()) == {UNKNOWN}


@pytest.mark.parametrize("board, message", [
    (np.ones((6, 7)), "disc counts"),
    (np.pad(np.array([[1]]), ((0, 5), (0, 6))), "above an empty cell"),
    (np.zeros((7, 6)), "6x7"),
])
def test_impossible_boards_are_refused(board: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        encode(board)
