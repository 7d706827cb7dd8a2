"""The Gumbel AlphaZero root (shared.search.gumbel): the sequential halving schedule, completed Q / sigma / the
improved policy against hand computations, the search's own move on one-move bandits, self-play records and the
config fields."""
from __future__ import annotations

import math

import numpy as np
import pytest

from shared.config import ConfigError, PipelineConfig, load_config
from shared.config.services import GatekeeperConfig
from shared.games import make_game
from shared.search import (BatchedMCTS, SearchConfig, SearchError, SearchResult, SelfPlayConfig, choose_moves,
                           play_selfplay_games)
from shared.search.gumbel import completed_q, considered_visit_sequence, improved_policy, root_logits, sigma
from tests.search.helpers import HashEvaluator, UniformEvaluator, check_tree_invariants


@pytest.mark.parametrize("m, n, expected", [
    (4, 8, [0, 0, 0, 0, 1, 1, 2, 2]),                    # ceil(log2 4) = 2: 8 // 8 = 1 round of 4, then 2 x 2
    (16, 32, [0] * 16 + [1] * 8 + [2, 2, 2, 2, 3, 3, 3, 3]),   # 1 round of 16, 1 of 8, 2 of 4
    (16, 8, [0] * 8),                                    # n < m: a first round that does not finish
    (2, 5, [0, 0, 1, 1, 2]),                             # 5 // 2 = 2 rounds of 2 per phase
    (1, 4, [0, 1, 2, 3]),                                # one action takes every simulation
    (3, 7, [0, 0, 0, 1, 1, 2, 2]),                       # 7 // 6 = 1 round of 3, then 7 // 4 = 1 round of 2 ...
])
def test_halving_schedule_matches_hand_computed_sequences(m: int, n: int, expected: list[int]) -> None:
    sequence = considered_visit_sequence(m, n)
    assert sequence.dtype == np.int32 and sequence.tolist() == expected and len(sequence) == n


@pytest.mark.parametrize("considered, sims, visits", [(4, 8, [3, 3, 1, 1]), (7, 16, [5, 5, 2, 1, 1, 1, 1])])
def test_search_visits_follow_the_schedule_and_total_n(considered: int, sims: int, visits: list[int]) -> None:
    game = make_game("connect4")
    mcts = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=sims, root="gumbel",
                                                                gumbel_considered=considered),
                       np.random.default_rng(1))
    result = mcts.search(game.initial_states(3), add_noise=True)
    assert result.visits.sum(axis=1).tolist() == [sims] * 3
    for row in result.visits:
        assert sorted(row[row > 0].astype(int).tolist(), reverse=True) == visits
    # The move is a survivor: one of the most visited considered actions.
    assert (result.visits[np.arange(3), result.chosen] == result.visits.max(axis=1)).all()
    check_tree_invariants(mcts._tree, 0)


def test_a_reused_tree_halves_over_the_new_visits_only() -> None:
    game = make_game("connect4")
    config = SearchConfig(num_simulations=64, root="gumbel", gumbel_considered=4)
    mcts = BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(2))
    states = game.initial_states(2)
    first = mcts.search(states, add_noise=True)
    mcts.advance(first.chosen)
    states = game.step(states, first.chosen)
    before = mcts._tree.root_statistics(np.arange(2))[0]
    assert (before.sum(axis=1) > 0).all()                                      # the subtree was kept
    second = mcts.search(states, add_noise=True, num_simulations=8)
    added = second.visits - before
    assert added.sum(axis=1).tolist() == [8.0, 8.0]
    for row in added:
        assert sorted(row[row > 0].astype(int).tolist(), reverse=True) == [3, 3, 1, 1]
    check_tree_invariants(mcts._tree, 0)


def test_completed_q_sigma_and_improved_policy_match_a_hand_computation() -> None:
    legal = np.array([[True, True, True, False]])
    visits = np.array([[2.0, 1.0, 0.0, 0.0]], np.float32)
    q = np.array([[0.5, -0.5, 0.0, 0.0]], np.float32)
    prior = np.array([[0.5, 0.3, 0.2, 0.0]], np.float32)
    proven = np.zeros((1, 4), np.int8)
    completed = completed_q(q, visits, prior, legal, proven, np.array([0.1], np.float32))
    # v_mix = (0.1 + 3 * (0.5 * 0.5 + 0.3 * -0.5) / 0.8) / 4 = (0.1 + 0.375) / 4
    np.testing.assert_allclose(completed, [[0.5, -0.5, 0.11875, 0.0]], rtol=1e-6)
    sigmas = sigma(completed, visits, legal, c_visit=50.0, c_scale=1.0)
    # rescaled by min -0.5, max 0.5: [1, 0, 0.61875]; times (50 + 2) * 1
    np.testing.assert_allclose(sigmas, [[52.0, 0.0, 0.61875 * 52, 0.0]], rtol=1e-5)
    policy = improved_policy(root_logits(prior, legal), sigmas, legal)
    weights = np.array([0.5 * math.exp(52.0), 0.3, 0.2 * math.exp(0.61875 * 52), 0.0])
    np.testing.assert_allclose(policy, [weights / weights.sum()], rtol=1e-5)
    assert policy[0, 3] == 0.0 and abs(policy.sum() - 1.0) < 1e-6
    # Proven results replace Q by their exact value, visited or not.
    proven[0, 2] = -1
    assert completed_q(q, visits, prior, legal, proven, np.array([0.1], np.float32))[0, 2] == -1.0


def _bandit(moves: str) -> tuple:
    game = make_game("tictactoe")
    return game, game.play_moves(game.parse_moves(moves)), game.parse_action("3")


@pytest.mark.parametrize("solver", [False, True])
def test_one_move_bandit_picks_the_win_and_puts_most_pi_mass_on_it(solver: bool) -> None:
    game, state, win = _bandit("1425")                 # X: 1 2, O: 4 5 -> 3 completes the top row
    config = SearchConfig(num_simulations=8, root="gumbel", solver=solver)
    for seed in range(5):
        result = BatchedMCTS(game, UniformEvaluator(game), config, np.random.default_rng(seed)).search(
            state, add_noise=True)
        assert result.chosen[0] == win
        assert choose_moves(result, 1.0, np.random.default_rng(0))[0] == win      # whatever the temperature
        assert result.policy[0, win] > 0.9
        assert abs(result.policy.sum() - 1.0) < 1e-6 and (result.policy[0, ~game.legal_mask(state)[0]] == 0).all()
        if solver:                                     # a proven win: played, and the whole training policy
            assert result.proven[0, win] == 1 and result.policy[0, win] == 1.0


def test_without_noise_the_gumbel_search_is_deterministic() -> None:
    game = make_game("connect4")
    states = game.play_moves(game.parse_moves("4435"))
    config = SearchConfig(num_simulations=16, root="gumbel", leaves_per_step=2)
    results = [BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(seed)).search(
        states, add_noise=False) for seed in (0, 1)]
    assert results[0].chosen.tolist() == results[1].chosen.tolist()
    np.testing.assert_array_equal(results[0].policy, results[1].policy)
    np.testing.assert_array_equal(results[0].visits, results[1].visits)


def test_a_lost_gumbel_root_still_blocks() -> None:
    """The position of test_solver's test_a_lost_side_still_blocks_what_it_can (gomoku-6x6-4, O to move, every
    move lost, only b4 not at once): the proven losses are not considered, the search proves b4 lost too (after
    that PUCT spends the rest: the root is decided), and the move is still the block."""
    game = make_game("gomoku-6x6-4")
    state = game.play_moves(game.parse_moves("c4 f4 d4 a6 e4 a5 c2 f6 d2"))
    block = game.parse_action("b4")
    config = SearchConfig(num_simulations=3000, root="gumbel")
    result = BatchedMCTS(game, HashEvaluator(game), config, np.random.default_rng(0)).search(state, True)
    assert result.proven_value[0] == -1 and result.chosen[0] == block
    assert result.visits[0].sum() == 3000 and result.visits[0, block] > 0
    np.testing.assert_allclose(result.policy.sum(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("game_name, leaves", [("tictactoe", 1), ("gomoku-6x6-4", 4)])
@pytest.mark.parametrize("options", [{}, {"full_search_fraction": 0.5}])
@pytest.mark.parametrize("reuse", [True, False])
def test_gumbel_selfplay_records_valid_policies(game_name: str, leaves: int, options: dict, reuse: bool) -> None:
    game = make_game(game_name)
    search = SearchConfig(num_simulations=12, root="gumbel", reuse_tree=reuse, gumbel_considered=4,
                          leaves_per_step=leaves)
    records = play_selfplay_games(game, HashEvaluator(game), 6, SelfPlayConfig(search=search, **options),
                                  np.random.default_rng(3))
    assert records.pi.shape[0] == records.states.shape[0] > 0
    legal = game.legal_mask(records.states)
    np.testing.assert_allclose(records.pi.sum(axis=1), 1.0, atol=1e-5)
    assert (records.pi[~legal] == 0).all() and (records.pi >= 0).all()
    assert legal[np.arange(len(legal)), records.action].all()


def test_puct_results_keep_the_normalised_visits_as_policy_and_no_own_move() -> None:
    game = make_game("connect4")
    result = BatchedMCTS(game, HashEvaluator(game), SearchConfig(num_simulations=10),
                         np.random.default_rng(0)).search(game.initial_states(2), add_noise=True)
    np.testing.assert_array_equal(result.policy, result.visits / result.visits.sum(axis=1, keepdims=True))
    assert (result.chosen == -1).all()


def test_search_config_rejects_bad_gumbel_values_naming_the_field() -> None:
    for kwargs, field in [({"root": "alphazero"}, "root"), ({"gumbel_considered": 0}, "gumbel_considered"),
                          ({"gumbel_c_visit": -1.0}, "gumbel_c_visit"), ({"gumbel_c_scale": 0.0}, "gumbel_c_scale")]:
        with pytest.raises(SearchError, match=f"^invalid SearchConfig: {field} must"):
            SearchConfig(**kwargs)


def test_config_section_builds_the_gumbel_search_and_rejects_bad_values() -> None:
    cfg = load_config(PipelineConfig, "connect4", env=None,
                      overrides={"search.root": "gumbel", "search.gumbel_considered": "8"})
    search = cfg.search.search_config()
    assert (search.root, search.gumbel_considered, search.gumbel_c_visit, search.gumbel_c_scale) == (
        "gumbel", 8, 50.0, 0.1)
    gate = load_config(GatekeeperConfig, "connect4", env=None, overrides={"search.root": "gumbel"})
    assert gate.match_search_config().root == "puct"                 # match players keep the PUCT root
    for key, value in [("search.root", "bandit"), ("search.gumbel_considered", "0"),
                       ("search.gumbel_c_scale", "0")]:
        with pytest.raises(ConfigError) as info:
            load_config(PipelineConfig, "connect4", env=None, overrides={key: value})
        assert str(info.value).startswith(key + ":")


def test_choose_moves_keeps_the_searchs_own_moves_and_chooses_the_others() -> None:
    visits = np.array([[1.0, 5.0, 2.0], [1.0, 5.0, 2.0]], np.float32)
    result = SearchResult(visits, np.zeros(2, np.float32), np.zeros_like(visits), visits / 8,
                          chosen=np.array([2, -1]))
    assert choose_moves(result, 0.0, np.random.default_rng(0)).tolist() == [2, 1]
