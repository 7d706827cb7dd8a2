"""`Game.step_stored` (the search's in-place step) gives exactly `step`, `is_terminal` and `terminal_value`.

The compiled versions (Connect Four, Gomoku, tic-tac-toe: shared.games.lines.line_step_stored) are checked against
the numpy rules on every legal move of every position of random playouts (every reachable tic-tac-toe position),
the generic default (Othello, Go) on a sample.
"""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import Game
from tests.games.helpers import CONFORMANCE_GAMES, expand, random_playout, sample_rows, unique_boards


def every_move(game: Game, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each legal (position, action) pair of states [B, S], plus one (finished position, action 0) per finished one:
    -> (positions [M, S] int16, actions [M] int64)."""
    rows, actions = np.nonzero(game.legal_mask(states))
    done = np.flatnonzero(game.is_terminal(states))
    return (np.concatenate([states[rows], states[done]]),
            np.concatenate([actions, np.zeros(done.size, np.int64)]).astype(np.int64))


def check_stored_step(game: Game, positions: np.ndarray, actions: np.ndarray, seed: int) -> None:
    """Put positions [M, S] at random rows of a store, step them into other rows, compare with the numpy rules."""
    rng = np.random.default_rng(seed)
    count, trees = positions.shape[0], 7
    per_tree = -(-count // trees)
    store = rng.integers(-2, 3, size=(trees, 2 * per_tree, game.state_size)).astype(np.int16)  # garbage elsewhere
    order = rng.permutation(2 * per_tree)                                  # node rows in a shuffled order
    k = rng.permutation(count)
    slots, parents, children = k % trees, order[2 * (k // trees)], order[2 * (k // trees) + 1]
    store[slots, parents] = positions
    before = store.copy()
    terminal, value = game.step_stored(store, slots.astype(np.int64), parents.astype(np.int64),
                                       children.astype(np.int64), actions)
    expected = game.step(positions, actions)
    np.testing.assert_array_equal(store[slots, children], expected)
    np.testing.assert_array_equal(terminal, game.is_terminal(expected))
    assert value.dtype == np.float32 and terminal.dtype == np.bool_
    np.testing.assert_array_equal(value, game.terminal_value(expected))
    written = np.zeros(store.shape[:2], bool)
    written[slots, children] = True
    np.testing.assert_array_equal(store[~written], before[~written])      # nothing else changed, parents included


def test_every_tictactoe_position_and_move() -> None:
    game = make_game("tictactoe")
    level, seen = game.initial_states(1), [game.initial_states(1)]
    while level.shape[0]:
        level = unique_boards(game, expand(game, level))
        seen.append(level)
    positions, actions = every_move(game, np.concatenate(seen))
    assert positions.shape[0] > 10_000                                     # all 5,478 positions, every move
    check_stored_step(game, positions, actions, seed=0)


@pytest.mark.parametrize("name", ["connect4", "gomoku-6x6-4", "gomoku-7x9-4", "gomoku-8x8-5", "gomoku-15",
                                  "gomoku-5x5-3"])
def test_compiled_step_matches_the_numpy_rules(name: str) -> None:
    game = make_game(name)
    batch = 300 if game.num_actions <= 64 else 40
    positions, actions = every_move(game, random_playout(game, batch, seed=1).all_positions())
    pick = np.sort(np.random.default_rng(2).permutation(positions.shape[0])[:60_000])
    positions, actions = positions[pick], actions[pick]
    assert game.is_terminal(positions).any() and (~game.is_terminal(positions)).any()
    check_stored_step(game, positions, actions, seed=3)


@pytest.mark.parametrize("name", [n for n in CONFORMANCE_GAMES if n.startswith(("othello", "go"))])
def test_generic_stored_step_matches_step(name: str) -> None:
    game = make_game(name)
    positions, actions = every_move(game, sample_rows(random_playout(game, 8, seed=4).all_positions(), 200, seed=5))
    check_stored_step(game, positions, actions, seed=6)


def test_bad_store_is_refused_with_a_clear_error() -> None:
    game = make_game("connect4")
    index = np.zeros(1, np.int64)
    with pytest.raises(ValueError, match=r"store must be \[T, N, S >= 48\] int16"):
        game.step_stored(np.zeros((1, 2, 48), np.int32), index, index, index + 1, index)
    with pytest.raises(ValueError, match="one entry per move"):
        game.step_stored(np.zeros((1, 2, 48), np.int16), index, index, np.zeros(2, np.int64), index)
