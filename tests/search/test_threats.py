"""The VCF threat solver at the root of match players and analysis: VCF wins and defences whatever the network says."""
from __future__ import annotations

import numpy as np
import pytest

from shared.players.analysis import analyze_states
from shared.players.player import MCTSPlayer, PureMCTSPlayer
from shared.search import SearchConfig
from shared.search.root_solver import root_solver_moves
from shared.games.gomoku.vcf import find_vcf, find_vcf_defence
from tests.search.test_vcf import CHAINS, GOMOKU_8, GOMOKU_15, TRIPLE_POINT_8, TRIPLE_POINT_15, cell, position


class UniformEvaluator:
    """A network that knows nothing: flat priors, value 0."""

    def __init__(self, game):
        self.game = game

    def __call__(self, states):
        return np.zeros((states.shape[0], self.game.num_actions), np.float32), np.zeros(states.shape[0], np.float32)


@pytest.mark.parametrize("game,text,depth", CHAINS)
def test_players_and_analysis_play_the_vcf_first_move(game, text, depth):
    state = position(game, text)
    expected = find_vcf(game, state, max_depth=4, max_nodes=2000)
    if not expected.found:
        pytest.skip("this chain needs more than the root budget")
    search = SearchConfig(num_simulations=4)
    player = MCTSPlayer(game, UniformEvaluator(game), search)
    assert player.select_actions(state[None]).tolist() == [expected.first_move]
    assert analyze_states(game, UniformEvaluator(game), state[None], search=search)[0].action == expected.first_move


@pytest.mark.parametrize("game,text,key", [(GOMOKU_15, TRIPLE_POINT_15, (7, 7)), (GOMOKU_8, TRIPLE_POINT_8, (4, 4))],
                         ids=["15x15", "8x8"])
def test_players_stop_the_opponents_vcf(game, text, key):
    state = position(game, text)
    assert find_vcf_defence(game, state).defences == (cell(game, *key),)
    player = MCTSPlayer(game, UniformEvaluator(game), SearchConfig(num_simulations=4))
    assert player.select_actions(state[None]).tolist() == [cell(game, *key)]


def test_the_pure_mcts_baseline_stays_pure_and_other_games_pass_through():
    game, text = GOMOKU_8, TRIPLE_POINT_8
    pure = PureMCTSPlayer(game, 4, np.random.default_rng(0))
    assert pure.root_solver is False
    from shared.games import make_game

    connect4 = make_game("connect4")
    states = connect4.initial_states(2)
    actions = np.array([3, 4])
    assert root_solver_moves(connect4, states, actions, np.zeros((2, 7), np.float32)).tolist() == [3, 4]
