"""Othello's batched move generation and flipping against a plain scalar implementation on random boards."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.games.othello.rules import DIRECTIONS


def scalar_flips(board: np.ndarray, row: int, col: int, colour: int) -> list[tuple[int, int]]:
    """Reference: discs flipped by `colour` playing on empty (row, col) of board [H, W]; [] = illegal."""
    height, width = board.shape
    flipped = []
    for d_row, d_col in DIRECTIONS:
        r, c, line = row + d_row, col + d_col, []
        while 0 <= r < height and 0 <= c < width and board[r, c] == -colour:
            line.append((r, c))
            r, c = r + d_row, c + d_col
        if line and 0 <= r < height and 0 <= c < width and board[r, c] == colour:
            flipped.extend(line)
    return flipped


def random_positions(game, count: int, seed: int) -> np.ndarray:
    """Random (not necessarily reachable) boards with long runs, player to move random: [count, S] int16."""
    rng = np.random.default_rng(seed)
    states = game.initial_states(count)
    fill = rng.uniform(0.3, 0.95, size=(count, 1))
    bias = rng.uniform(0.1, 0.9, size=(count, 1))          # skewed colours give long single-colour runs
    cells = np.where(rng.random((count, game.num_cells)) < fill,
                     np.where(rng.random((count, game.num_cells)) < bias, 1, -1), 0)
    states[:, : game.num_cells] = cells
    states[:, game.num_cells + F_PLAYER] = rng.choice([-1, 1], size=count)
    return states


@pytest.mark.parametrize("name", ["othello", "othello-6x6"])
def test_legal_moves_and_flips_match_the_scalar_rules(name):
    game = make_game(name)
    states = random_positions(game, 150, seed=len(name))
    mask = game.legal_mask(states)
    for state, legal in zip(states, mask):
        board = state[: game.num_cells].reshape(game.height, game.width)
        colour = int(state[game.num_cells + F_PLAYER])
        expected = [r * game.width + c for r in range(game.height) for c in range(game.width)
                    if board[r, c] == 0 and scalar_flips(board, r, c, colour)]
        assert np.flatnonzero(legal[: game.num_cells]).tolist() == expected
        assert legal[game.pass_action] == (not expected)
    parents, actions = np.nonzero(mask[:, : game.num_cells])
    children = game.step(states[parents], actions)
    for parent, action, child in zip(states[parents], actions, children):
        board = parent[: game.num_cells].reshape(game.height, game.width).copy()
        colour = int(parent[game.num_cells + F_PLAYER])
        row, col = divmod(int(action), game.width)
        for r, c in scalar_flips(board, row, col, colour) + [(row, col)]:
            board[r, c] = colour
        assert np.array_equal(child[: game.num_cells], board.reshape(-1))


def test_the_longest_possible_line_flips():
    game = make_game("othello")
    state = game.initial_states(1)
    state[0, :64] = 0
    state[0, 1:7] = -1    # b1..g1 white
    state[0, 7] = 1       # h1 black
    state[0, 8 * 7 + 7] = 1  # h8 black, so that the diagonal a8..h1 is irrelevant and the board is not one line
    assert np.flatnonzero(game.legal_mask(state)[0]).tolist() == [game.parse_action("a1")]
    after = game.step(state, np.array([game.parse_action("a1")]))
    assert (after[0, :8] == 1).all()
