"""opening_set: seeded, deterministic, distinct, non-terminal, per-family lengths, cyclic repetition, any-move
openings of given lengths."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.search import ArenaError, opening_set


def _positions(game, openings):
    return {game.play_moves(o)[0, : game.num_cells + 1].tobytes() for o in openings}


@pytest.mark.parametrize("name, lengths", [("tictactoe", {1, 2}), ("connect4", {2}), ("othello-6x6", {4}),
                                           ("gomoku-15", {2, 3, 4}), ("gomoku-6x6-4", {2, 3, 4})])
def test_openings_are_deterministic_distinct_and_playable(name: str, lengths: set[int]) -> None:
    game = make_game(name)
    first = opening_set(game, 30, seed=11)
    assert first == opening_set(game, 30, seed=11)
    assert first != opening_set(game, 30, seed=12)
    assert len(first) == 30 and len(_positions(game, first)) == 30
    assert {len(o) for o in first} <= lengths
    for opening in first:
        assert not game.is_terminal(game.play_moves(opening))[0]


def test_gomoku_openings_stay_near_the_centre() -> None:
    game = make_game("gomoku-15")
    for opening in opening_set(game, 40, seed=0):
        rows, cols = np.divmod(np.array(opening), 15)
        assert (abs(rows - 7) <= 2).all() and (abs(cols - 7) <= 2).all()


def test_small_spaces_repeat_cyclically() -> None:
    game = make_game("tictactoe")
    openings = opening_set(game, 100, seed=3)      # 9 + 72 = 81 openings, of which 9 + 24 are drawn
    assert len(_positions(game, openings[:33])) == 33
    assert openings[33:66] == openings[:33]
    with pytest.raises(ArenaError):
        opening_set(game, 0, seed=3)


def test_tictactoe_openings_are_all_drawn_with_perfect_play() -> None:
    from shared.games.tictactoe.minimax import board_keys, solve_values

    game = make_game("tictactoe")
    values = solve_values(game)
    openings = opening_set(game, 200, seed=0)
    assert all(values[board_keys(game, game.play_moves(o))[0]] == 0 for o in openings)
    # A forced loss such as X centre, O edge is never used.
    assert [4, 1] not in openings


def test_openings_of_given_plies_use_any_move() -> None:
    """plies=(6, 7, 8): openings of those lengths over the whole board, not the family's central squares."""
    game = make_game("gomoku-8x8-5")
    central = opening_set(game, 100, seed=2024)
    wide = opening_set(game, 100, seed=2024, plies=(6, 7, 8))
    assert wide == opening_set(game, 100, seed=2024, plies=(8, 6, 7))
    assert len(_positions(game, wide)) == 100 and {len(o) for o in wide} == {6, 7, 8}
    assert not any(game.is_terminal(game.play_moves(o))[0] for o in wide)
    rows, cols = np.divmod(np.concatenate(wide), 8)
    assert rows.min() == 0 and cols.min() == 0 and rows.max() == 7 and cols.max() == 7
    rows, cols = np.divmod(np.concatenate(central), 8)
    assert set(rows) == set(cols) == {2, 3, 4, 5}
    with pytest.raises(ArenaError, match="1 or more plies"):
        opening_set(game, 10, seed=0, plies=(0,))
