"""BatchedMCTS (leaves_per_step=1, no noise) gives exactly the visit counts of a plain recursive PUCT,
with and without the MCTS-solver (the reference applies the same solver rules)."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.search import BatchedMCTS, SearchConfig
from shared.search.puct import GROUP, TOUCH_NODES
from tests.search.helpers import HashEvaluator, check_tree_invariants, reference_search

POSITIONS = {
    "tictactoe": ["", "5", "51", "5193"],
    "connect4": ["", "44", "4453", "443322"],
    # 36 actions: selection walks the child list and the top-prior lists (the two games above scan whole rows).
    "gomoku-6x6-4": ["", "c3 d4", "c3 d4 c4 d3 b2"],
}


@pytest.mark.parametrize("game_name", sorted(POSITIONS))
@pytest.mark.parametrize("fpu_reduction", [0.0, 0.25])
@pytest.mark.parametrize("solver", [False, True])
def test_batched_search_matches_recursive_reference(game_name: str, fpu_reduction: float, solver: bool) -> None:
    game = make_game(game_name)
    states = np.concatenate([game.play_moves(game.parse_moves(m)) for m in POSITIONS[game_name]])
    evaluator = HashEvaluator(game, seed=3)
    config = SearchConfig(num_simulations=60, c_puct=1.5, fpu_reduction=fpu_reduction, reuse_tree=False,
                          solver=solver)
    mcts = BatchedMCTS(game, evaluator, config, np.random.default_rng(0))
    result = mcts.search(states, add_noise=False)
    for row, state in enumerate(states):
        ref_visits, ref_value = reference_search(game, HashEvaluator(game, seed=3), state, 60, 1.5, fpu_reduction,
                                                 solver)
        np.testing.assert_array_equal(result.visits[row], ref_visits)
        assert result.root_value[row] == pytest.approx(ref_value, abs=1e-6)
        check_tree_invariants(mcts._tree, row)
    assert result.visits.sum(axis=1).tolist() == [60.0] * len(states)


def test_batched_search_is_independent_of_batch_composition() -> None:
    """A tree's result does not depend on the other trees searched with it."""
    game = make_game("connect4")
    states = np.concatenate([game.play_moves(game.parse_moves(m)) for m in POSITIONS["connect4"]])
    config = SearchConfig(num_simulations=40, reuse_tree=False)
    together = BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(0)).search(states, False)
    alone = BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(0)).search(states[2:3], False)
    np.testing.assert_array_equal(together.visits[2], alone.visits[0])
    np.testing.assert_allclose(together.q[2], alone.q[0])


@pytest.mark.parametrize("game_name, sims", [("connect4", 40), ("gomoku-6x6-4", 40), ("gomoku-6x6-4", 200)])
def test_a_tree_searched_among_many_gets_what_it_gets_alone(game_name: str, sims: int) -> None:
    """Selection descends the trees in groups of puct.GROUP and first loads the small ones (puct.TOUCH_NODES) whole:
    with more trees than a group, and trees above that size after a reused second search (200 simulations), each
    tree still gets exactly the result it gets searched alone."""
    game = make_game(game_name)
    rng = np.random.default_rng(5)
    states = game.initial_states(2 * GROUP + 3)
    for _ in range(2):                                   # a few random plies, so that the trees differ
        legal = game.legal_mask(states)
        states = game.step(states, (rng.random(legal.shape) * legal).argmax(axis=1))
    config = SearchConfig(num_simulations=sims)

    def search_twice(batch: np.ndarray) -> tuple[BatchedMCTS, object]:
        mcts = BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(0))
        first = mcts.search(batch, add_noise=False)
        actions = first.visits.argmax(axis=1)
        mcts.advance(actions)
        return mcts, mcts.search(game.step(batch, actions), add_noise=False)

    together, result = search_twice(states)
    if sims > 100:
        assert together._tree.num_nodes.max() > TOUCH_NODES
    for row in (0, GROUP - 1, GROUP, 2 * GROUP + 2):
        _, alone = search_twice(states[row:row + 1])
        np.testing.assert_array_equal(result.visits[row], alone.visits[0])
        np.testing.assert_array_equal(result.q[row], alone.q[0])
