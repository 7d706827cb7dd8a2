"""Go on random games: move-by-move agreement with the plain reference referee, and invariants (hypothesis)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games import make_game
from shared.games.base import F_PASSES, F_WINNER
from shared.games.go.rules import Go
from tests.games.go_reference import ReferenceGo


def random_actions(mask: np.ndarray, rng: np.random.Generator, pass_weight: float) -> np.ndarray:
    """One random legal action per row of mask [B, A] (passes down-weighted); 0 for rows with none."""
    weights = rng.random(mask.shape)
    weights[:, -1] *= pass_weight
    return np.where(mask, weights, -1.0).argmax(axis=1)


def compare_with_reference(size: int, games: int, seed: int, pass_weight: float,
                           komi: float = 7.5) -> tuple[int, int, np.ndarray]:
    """Play `games` random games in one batch and check legal moves, boards and results against ReferenceGo.

    Returns how many moves the superko rule refused on the way, how many of them would have recreated a
    position older than two moves back (beyond a simple ko), and the winners [games]."""
    game = Go(size, komi=komi)
    rng = np.random.default_rng(seed)
    states = game.initial_states(games)
    refs = [ReferenceGo(size, komi) for _ in range(games)]
    boards = [[tuple(ref.board)] for ref in refs]
    refused = older = 0
    while not game.is_terminal(states).all():
        mask = game.legal_mask(states)
        for row, ref in enumerate(refs):
            expected = np.zeros(game.num_actions, dtype=bool)
            expected[ref.legal_actions()] = True
            assert np.array_equal(mask[row], expected), (size, seed, row, ref.moves)
            if not ref.over:
                for cell in range(size * size):
                    after = ref.result_of(cell)
                    if after is not None and tuple(after) in ref.seen:
                        refused += 1
                        older += tuple(after) != boards[row][-2]
        actions = random_actions(mask, rng, pass_weight)
        for row, ref in enumerate(refs):
            if not ref.over:
                ref.play(int(actions[row]))
                boards[row].append(tuple(ref.board))
        states = game.step(states, actions)
        for row, ref in enumerate(refs):
            assert states[row, : size * size].tolist() == ref.board, (size, seed, row, ref.moves)
    scores, owners = game.area_score(states), game.ownership(states)
    for row, ref in enumerate(refs):
        assert scores[row] == ref.score()
        assert owners[row].tolist() == ref.ownership(), (size, seed, row)
        assert states[row, game.num_cells + F_WINNER] == np.sign(ref.score())
    return refused, older, states[:, game.num_cells + F_WINNER]


def test_random_games_agree_with_the_reference_move_by_move():
    refused = older = 0
    for size, games, seed, pass_weight in ((5, 150, 1, 0.05), (5, 30, 2, 1.0), (6, 20, 3, 0.05), (7, 12, 4, 0.02),
                                           (9, 6, 5, 0.02)):
        counts = compare_with_reference(size, games, seed, pass_weight)
        refused, older = refused + counts[0], older + counts[1]
    assert refused > 20 and older > 0, "the games must have met ko and longer superko cycles to test them"


def test_integer_komi_games_agree_including_draws():
    winners = compare_with_reference(5, 40, 3, 1.0, komi=0)[2]
    assert (winners == 0).any() and (winners == 1).any() and (winners == -1).any()


@pytest.mark.integration   # random games on the full 19x19 board
def test_19x19_plays_legal_games():
    game = make_game("go-19x19")
    rng = np.random.default_rng(0)
    states = game.initial_states(2)
    ref = ReferenceGo(19)
    ply = 0
    while not game.is_terminal(states).all():
        mask = game.legal_mask(states)
        if ply < 60 or ply % 97 == 0:   # the reference is slow on 19x19: check part of the game
            expected = np.zeros(game.num_actions, dtype=bool)
            expected[ref.legal_actions()] = True
            assert np.array_equal(mask[0], expected)
        actions = random_actions(mask, rng, 0.002)
        ref.play(int(actions[0]))
        states = game.step(states, actions)
        assert states[0, :361].tolist() == ref.board
        ply += 1
    assert game.area_score(states)[0] == ref.score()


def liberties_of_every_stone(board: list[int], size: int) -> bool:
    ref = ReferenceGo(size, board=board)
    return all(ref.group(board, cell)[1] for cell in range(size * size) if board[cell] != 0)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([5, 6, 7, 9]), pass_weight=st.sampled_from([0.0, 0.05]))
def test_random_games_keep_liberties_and_distinct_position_keys(seed, size, pass_weight):
    """Along a long random game no group lies on the board without a liberty, and the superko keys of the
    positions are equal exactly when the boards are (no stone play ever recreates an earlier board)."""
    game = Go(size)
    rng = np.random.default_rng(seed)
    state = game.initial_states(1)
    boards = [state[0, : game.num_cells].copy()]
    while not game.is_terminal(state)[0]:
        action = random_actions(game.legal_mask(state), rng, pass_weight)
        state = game.step(state, action)
        board = state[0, : game.num_cells].copy()
        assert liberties_of_every_stone(board.tolist(), size)
        if action[0] != game.pass_action:
            assert not any(np.array_equal(board, old) for old in boards), "a stone play repeated a position"
        boards.append(board)
    keys, masks, valid = game.stored_keys(state)
    count = int(valid[0].sum())
    assert count == len(boards)
    pairs = list(zip(keys[0, :count].tolist(), masks[0, :count].tolist()))
    for i in range(count):
        for j in range(i):
            assert (pairs[i] == pairs[j]) == np.array_equal(boards[i], boards[j]), (i, j)
    assert state[0, game.num_cells + F_PASSES] == 2 or count == game.max_moves + 1


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 7))
def test_transformed_games_stay_transformed(seed, k):
    """Playing the mapped moves from the transformed start gives the transformed states, superko keys included."""
    game = Go(5)
    rng = np.random.default_rng(seed)
    state = game.initial_states(1)
    moved = game.transform_states(state, k)
    action_map = game.symmetry_action_map(k)
    while not game.is_terminal(state)[0]:
        mask = game.legal_mask(state)
        assert np.array_equal(game.legal_mask(moved), game.transform_policy(mask, k))
        action = random_actions(mask, rng, 0.05)
        state = game.step(state, action)
        moved = game.step(moved, action_map[action])
        assert np.array_equal(moved, game.transform_states(state, k))
