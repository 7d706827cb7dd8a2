"""BatchedMCTS behaviour: exact terminal scoring, signs, masking, noise, virtual loss, call counts, errors."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.search import BatchedMCTS, EvaluatorError, SearchConfig, SearchError, masked_softmax
from shared.search.tree import ROOT
from tests.search.helpers import HashEvaluator, UniformEvaluator, check_tree_invariants


def _search(game, evaluator, moves: str, **config):
    mcts = BatchedMCTS(game, evaluator, SearchConfig(**config), np.random.default_rng(0))
    result = mcts.search(game.play_moves(game.parse_moves(moves)), add_noise=False)
    return mcts, result


@pytest.mark.parametrize("leaves_per_step", [1, 4])
def test_one_move_win_gets_most_visits_with_a_uniform_evaluator(leaves_per_step: int) -> None:
    game = make_game("tictactoe")
    # X on 1 and 2, O on 4 and 5, X to move: square 3 wins at once (O threatens 6).
    mcts, result = _search(game, UniformEvaluator(game), "1425", num_simulations=200,
                           leaves_per_step=leaves_per_step)
    assert result.visits[0].argmax() == 2
    assert result.visits[0, 2] > 0.6 * result.visits[0].sum()
    assert result.q[0, 2] == pytest.approx(1.0)                    # an exact win, root player's view
    check_tree_invariants(mcts._tree, 0)


def test_connect4_immediate_win_found() -> None:
    game = make_game("connect4")
    _, result = _search(game, UniformEvaluator(game), "443322", num_simulations=150, leaves_per_step=2)
    assert result.visits[0, [0, 4]].sum() > 0.7 * result.visits[0].sum()


@pytest.mark.parametrize("moves, sign", [("", 1.0), ("4", -1.0), ("44", 1.0)])
def test_values_are_from_the_side_to_move(moves: str, sign: float) -> None:
    """An evaluator saying 'the first player wins' (value +1 for X to move, -1 for O to move)."""
    game = make_game("connect4")

    def first_player_wins(states):
        values = game.to_play(states).astype(np.float32)        # +1 when X is to move: X wins
        return np.zeros((states.shape[0], game.num_actions), np.float32), values

    _, result = _search(game, first_player_wins, moves, num_simulations=30)
    assert result.root_value[0] == pytest.approx(sign)
    visited = result.visits[0] > 0
    np.testing.assert_allclose(result.q[0][visited], sign)


def test_illegal_actions_get_no_visits_and_no_prior() -> None:
    game = make_game("connect4")

    def loves_column_one(states):
        logits = np.zeros((states.shape[0], game.num_actions), np.float32)
        logits[:, 0] = 50.0                                         # column 1 is full in the test position
        return logits, np.zeros(states.shape[0], np.float32)

    mcts, result = _search(game, loves_column_one, "111111", num_simulations=40, leaves_per_step=3)
    assert result.visits[0, 0] == 0 and result.prior[0, 0] == 0 and result.q[0, 0] == 0
    assert result.prior[0].sum() == pytest.approx(1.0)
    tree = mcts._tree
    used = np.arange(tree.num_nodes[0])
    expanded = used[tree.nodes["expanded"][0, used]]
    assert (tree.children_visits[0, expanded, 0] == 0).all()


def test_noise_only_at_the_root_and_only_on_legal_moves() -> None:
    game = make_game("tictactoe")
    evaluator = HashEvaluator(game)
    mcts = BatchedMCTS(game, evaluator, SearchConfig(num_simulations=50, dirichlet_alpha=0.5),
                       np.random.default_rng(1))
    state = game.play_moves([4, 0])
    clean = masked_softmax(evaluator(state)[0], game.legal_mask(state))[0]
    noisy = mcts.search(state, add_noise=True)
    assert not np.allclose(noisy.prior[0], clean)
    assert noisy.prior[0][~game.legal_mask(state)[0]].sum() == 0
    assert noisy.prior[0].sum() == pytest.approx(1.0, abs=1e-5)
    tree = mcts._tree
    nodes = np.flatnonzero(tree.nodes["expanded"][0, : tree.num_nodes[0]])
    nodes = nodes[nodes != ROOT]
    assert nodes.size > 5
    expected = masked_softmax(evaluator(tree.node_states[0, nodes])[0], game.legal_mask(tree.node_states[0, nodes]))
    stored = np.where(np.isfinite(tree.prior[0, nodes]), tree.prior[0, nodes], 0.0)
    np.testing.assert_array_equal(stored, expected)
    # The noise does not stick: the next search without noise uses the clean prior again (same root reused).
    again = mcts.search(state, add_noise=False)
    np.testing.assert_array_equal(again.prior[0], clean)


def test_virtual_loss_spreads_one_step_over_distinct_leaves() -> None:
    game = make_game("connect4")
    evaluator = UniformEvaluator(game)
    _, result = _search(game, evaluator, "", num_simulations=4, leaves_per_step=4)
    assert sorted(result.visits[0].tolist()) == [0, 0, 0, 1, 1, 1, 1]


def test_collisions_are_dropped_without_virtual_loss() -> None:
    """virtual_loss=0: the 4 selections of the step all reach the same new leaf; it is evaluated and counted once."""
    game = make_game("connect4")
    evaluator = HashEvaluator(game)
    mcts, result = _search(game, evaluator, "", num_simulations=4, leaves_per_step=4, virtual_loss=0.0)
    assert result.visits[0].sum() == 1
    assert evaluator.positions == 2                                   # the root and one leaf
    assert mcts._tree.nodes["visits"][0, ROOT] == 2
    check_tree_invariants(mcts._tree, 0)


@pytest.mark.parametrize("sims, per_step, steps", [(10, 1, 10), (10, 4, 3), (9, 3, 3)])
def test_one_evaluator_call_per_step(sims: int, per_step: int, steps: int) -> None:
    game = make_game("connect4")
    evaluator = HashEvaluator(game)
    states = game.play_moves([3, 3])
    mcts = BatchedMCTS(game, evaluator, SearchConfig(num_simulations=sims, leaves_per_step=per_step),
                       np.random.default_rng(0))
    mcts.search(np.repeat(states, 5, axis=0), add_noise=True)
    assert evaluator.calls == 1 + steps                               # roots, then one call per step
    assert evaluator.positions <= 5 * (1 + sims)


def test_many_leaves_per_step_keep_the_books_consistent() -> None:
    game = make_game("tictactoe")
    states = np.concatenate([game.play_moves(game.parse_moves(m)) for m in ["", "5", "1425", "51", "5193"]])
    mcts = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=300, leaves_per_step=8),
                       np.random.default_rng(0))
    result = mcts.search(states, add_noise=True)
    for row in range(len(states)):
        check_tree_invariants(mcts._tree, row)
    assert (result.visits.sum(axis=1) <= 300).all() and (result.visits.sum(axis=1) >= 250).all()


def test_bad_inputs_raise_clear_errors() -> None:
    game = make_game("tictactoe")
    mcts = BatchedMCTS(game, UniformEvaluator(game), SearchConfig(num_simulations=5), np.random.default_rng(0))
    with pytest.raises(SearchError, match="finished"):
        mcts.search(game.play_moves([0, 3, 1, 4, 2]), add_noise=False)
    with pytest.raises(SearchError, match="states must be"):
        mcts.search(np.zeros((2, 3), np.int16), add_noise=False)
    with pytest.raises(SearchError, match="distinct"):
        mcts.search(game.initial_states(2), add_noise=False, slots=np.array([1, 1]))
    with pytest.raises(SearchError, match="c_puct"):
        SearchConfig(c_puct=0.0)
    with pytest.raises(SearchError, match="leaves_per_step"):
        SearchConfig(leaves_per_step=0)

    def wrong_shape(states):
        return np.zeros((states.shape[0], 3), np.float32), np.zeros(states.shape[0], np.float32)

    def nan_values(states):
        return np.zeros((states.shape[0], 9), np.float32), np.full(states.shape[0], np.nan, np.float32)

    def one_nan(states):
        values = np.zeros(states.shape[0], np.float32)
        values[-1] = np.nan                                             # one bad value among good ones
        return np.zeros((states.shape[0], 9), np.float32), values

    def infinite_values(states):
        return np.zeros((states.shape[0], 9), np.float32), np.full(states.shape[0], -np.inf, np.float32)

    for evaluator in (wrong_shape, nan_values, one_nan, infinite_values):
        with pytest.raises(EvaluatorError):
            BatchedMCTS(game, evaluator, SearchConfig(), np.random.default_rng(0)).search(game.initial_states(3), False)


def test_values_out_of_range_are_clipped() -> None:
    game = make_game("tictactoe")

    def too_large(states):
        return np.zeros((states.shape[0], 9), np.float32), np.full(states.shape[0], 3.0, np.float32)

    mcts = BatchedMCTS(game, too_large, SearchConfig(num_simulations=20, solver=False), np.random.default_rng(0))
    result = mcts.search(game.initial_states(2), add_noise=False)
    # Every value backed up was clipped to [-1, 1]: no node's value sum exceeds its visits (3 per visit unclipped).
    tree = mcts._tree
    for slot in range(2):
        nodes = tree.nodes_in_use(slot)
        assert (np.abs(tree.nodes["value_sum"][slot, nodes]) <= tree.nodes["visits"][slot, nodes]).all()
    assert (np.abs(result.root_value) <= 1.0).all() and (np.abs(result.q) <= 1.0).all()


def test_masked_softmax_handles_masks_and_missing_mass() -> None:
    legal = np.array([[True, False, True], [True, True, False], [False, True, True]])
    logits = np.array([[0.0, 100.0, np.log(3.0)], [-np.inf, -np.inf, 5.0], [1.0, np.nan, np.nan]], np.float32)
    priors = masked_softmax(logits, legal)
    np.testing.assert_allclose(priors[0], [0.25, 0.0, 0.75], rtol=1e-6)
    np.testing.assert_allclose(priors[1], [0.5, 0.5, 0.0])            # no mass on legal moves: uniform
    np.testing.assert_allclose(priors[2], [0.0, 0.5, 0.5])            # NaN counts as -inf
    assert priors.dtype == np.float32


def test_tree_storage_refuses_more_actions_than_a_node_record_holds() -> None:
    from shared.search.tree import MAX_ACTIONS, TreeStorage

    TreeStorage(1, 3, MAX_ACTIONS, 4)
    with pytest.raises(ValueError, match="actions"):
        TreeStorage(1, 3, MAX_ACTIONS + 1, 4)
