"""Tree reuse through advance(), batch subsets through slots, and capacity fallbacks."""
from __future__ import annotations

import numpy as np

from shared.games import make_game
from shared.search import BatchedMCTS, SearchConfig
from shared.search.tree import ROOT, UNVISITED
from tests.search.helpers import HashEvaluator, check_tree_invariants


def _setup(num_states: int = 3, sims: int = 64, **config):
    game = make_game("connect4")
    mcts = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=sims, **config),
                       np.random.default_rng(0))
    states = np.concatenate([game.play_moves(m) for m in ([], [3], [3, 2, 4])][:num_states])
    return game, mcts, states


def test_advance_keeps_the_child_subtree_with_its_visits() -> None:
    game, mcts, states = _setup(leaves_per_step=2)
    first = mcts.search(states, add_noise=True)
    actions = first.visits.argmax(axis=1)
    tree = mcts._tree
    old_child = tree.children[np.arange(3), ROOT, actions]
    child_visits = tree.nodes["visits"][np.arange(3), old_child].copy()
    grandchild_visits = tree.children_visits[np.arange(3), old_child].copy()
    child_value = tree.nodes["value_sum"][np.arange(3), old_child].copy()
    mcts.advance(actions)
    np.testing.assert_array_equal(tree.nodes["visits"][:3, ROOT], child_visits)
    np.testing.assert_array_equal(tree.children_visits[:3, ROOT], grandchild_visits)
    np.testing.assert_allclose(tree.nodes["value_sum"][:3, ROOT], child_value)
    assert (tree.nodes["parent"][:3, ROOT] == -1).all()
    for slot in range(3):
        check_tree_invariants(tree, slot)
        assert tree.num_nodes[slot] <= child_visits[slot]            # compact: only the kept subtree
    second = mcts.search(game.step(states, actions), add_noise=True)
    np.testing.assert_array_equal(second.visits.sum(axis=1), grandchild_visits.sum(axis=1) + 64)
    for slot in range(3):
        check_tree_invariants(tree, slot)


def test_a_different_state_starts_a_fresh_tree() -> None:
    game, mcts, states = _setup()
    result = mcts.search(states, add_noise=False)
    mcts.advance(result.visits.argmax(axis=1))
    other = game.step(states, (result.visits.argmax(axis=1) + 1) % 7)
    again = mcts.search(other, add_noise=False)
    np.testing.assert_array_equal(again.visits.sum(axis=1), 64)


def test_reuse_disabled_always_starts_fresh() -> None:
    game, mcts, states = _setup(reuse_tree=False)
    result = mcts.search(states, add_noise=False)
    actions = result.visits.argmax(axis=1)
    mcts.advance(actions)
    again = mcts.search(game.step(states, actions), add_noise=False)
    np.testing.assert_array_equal(again.visits.sum(axis=1), 64)


def test_searching_a_subset_of_slots_leaves_the_others_alone() -> None:
    game, mcts, states = _setup()
    mcts.search(states, add_noise=False)
    tree = mcts._tree
    arrays = {"visits": lambda: tree.nodes["visits"], "value_sum": lambda: tree.nodes["value_sum"],
              "children": lambda: tree.children, "children_visits": lambda: tree.children_visits,
              "num_nodes": lambda: tree.num_nodes}
    before = {name: array()[[0, 2]].copy() for name, array in arrays.items()}
    result = mcts.search(states[1:2], add_noise=False, slots=np.array([1]))
    assert result.visits.shape == (1, 7) and result.visits.sum() == 128      # reused slot 1: 64 + 64
    for name, values in before.items():
        np.testing.assert_array_equal(arrays[name]()[[0, 2]], values)
    mcts.advance(np.array([3]), slots=np.array([1]))
    for name, values in before.items():
        np.testing.assert_array_equal(arrays[name]()[[0, 2]], values)


def test_a_reused_tree_without_room_starts_fresh() -> None:
    game, mcts, states = _setup(num_states=1, sims=10)
    assert mcts.search(states, False).visits.sum() == 10
    assert mcts.search(states, False).visits.sum() == 20              # 11 nodes + 10 <= capacity 21: reused
    assert mcts.search(states, False).visits.sum() == 10              # 21 nodes + 10 > 21: fresh


def test_advance_to_an_unexplored_or_terminal_child_resets() -> None:
    game = make_game("tictactoe")
    mcts = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=3), np.random.default_rng(0))
    states = game.play_moves([0, 3, 1, 4])                          # X wins with 2
    mcts.search(states, add_noise=False)
    unexplored = int(np.flatnonzero(mcts._tree.children[0, ROOT] == UNVISITED)[0])
    mcts.advance(np.array([unexplored]))
    assert not mcts._tree.valid[0] and mcts._tree.num_nodes[0] == 0


def test_books_stay_consistent_over_many_moves_with_reuse_and_subsets() -> None:
    """Several games (Othello with passes, Gomoku), leaves_per_step > 1, reuse, finished games dropped."""
    for name in ("othello-6x6", "gomoku-6x6-4"):
        game = make_game(name)
        rng = np.random.default_rng(1)
        mcts = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=24, leaves_per_step=3), rng)
        states = game.initial_states(4)
        for _ in range(12):
            idx = np.flatnonzero(~game.is_terminal(states))
            if idx.size == 0:
                break
            result = mcts.search(states[idx], add_noise=True, slots=idx)
            actions = np.array([rng.choice(np.flatnonzero(v == v.max())) for v in result.visits])
            assert game.legal_mask(states[idx])[np.arange(idx.size), actions].all()
            mcts.advance(actions, slots=idx)
            for slot in idx:
                if mcts._tree.valid[slot]:
                    check_tree_invariants(mcts._tree, slot)
            states[idx] = game.step(states[idx], actions)
