"""Solved policy targets: the training policy with the MCTS-solver's proofs applied (solved_policy), its rules on
hand-made search results, and in self-play, where every recorded position with a proven win puts all of pi on
winning moves while the games played stay the same."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.search import SearchConfig, SearchResult, SelfPlayConfig, play_selfplay_games
from shared.search.action_selection import solved_policy
from tests.search.helpers import HashEvaluator


def _result(visits, proven, prior=None) -> SearchResult:
    visits = np.asarray(visits, np.float32)
    prior = np.asarray(prior if prior is not None else (visits > 0) | (np.asarray(proven) != 0), np.float32)
    return SearchResult(visits=visits, root_value=np.zeros(len(visits), np.float32), q=np.zeros_like(visits),
                        prior=prior, proven=np.asarray(proven, np.int8))


def test_proofs_move_the_mass_as_the_move_choice_does() -> None:
    result = _result(
        visits=[[6, 2, 2, 0],      # a proven win (action 1): all mass on it
                [6, 2, 2, 0],      # two proven wins, one unvisited: mass on them by visits
                [6, 2, 2, 0],      # action 0 proven lost: its mass goes to the others, by their visits
                [6, 0, 0, 0],      # the only visited move proven lost: uniform over the legal others
                [6, 2, 2, 0],      # every legal move proven lost: unchanged
                [6, 2, 2, 0]],     # no proofs: unchanged
        proven=[[0, 1, 0, 0], [0, 1, 0, 1], [-1, 0, 0, 0], [-1, 0, 0, 0], [-1, -1, -1, 0], [0, 0, 0, 0]],
        prior=[[.4, .2, .2, .2]] * 3 + [[.4, .2, .2, 0]] + [[.5, .25, .25, 0]] + [[.4, .2, .2, .2]])
    got = solved_policy(result)
    assert got.dtype == np.float32 and got.shape == (6, 4)
    np.testing.assert_allclose(got, [[0, 1, 0, 0], [0, 1, 0, 0], [0, .5, .5, 0], [0, .5, .5, 0],
                                     [.6, .2, .2, 0], [.6, .2, .2, 0]], atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)
    # an unvisited proven win still gets the mass when it is the only one
    np.testing.assert_allclose(solved_policy(_result([[5, 5, 0]], [[0, 0, 1]], [[.4, .4, .2]])), [[0, 0, 1]])
    # without proofs the policy is returned as it was (a copy)
    plain = _result([[3, 1]], [[0, 0]])
    out = solved_policy(plain)
    assert out is not plain.policy and np.array_equal(out, plain.policy)


def test_selfplay_records_solved_targets_and_plays_the_same_games() -> None:
    from shared.games.tictactoe.minimax import move_values

    game = make_game("tictactoe")

    def play(option: bool):
        config = SelfPlayConfig(search=SearchConfig(num_simulations=24, solver=True), solved_policy_target=option)
        return play_selfplay_games(game, HashEvaluator(game), 16, config, np.random.default_rng(3))

    plain, solved = play(False), play(True)
    assert np.array_equal(plain.states, solved.states) and np.array_equal(plain.action, solved.action)
    np.testing.assert_allclose(solved.pi.sum(axis=1), 1.0, atol=1e-5)
    changed = np.abs(solved.pi - plain.pi).sum(axis=1) > 1e-6
    assert changed.sum() >= 10
    # the proofs are right (minimax, the mover's view): outside won positions (where the mass may go to the proven
    # wins), every move they took the mass from loses
    values = move_values(game, solved.states[changed])                 # [C, A]: 1 win, 0 draw, -1 loss
    not_won = values.max(axis=1) < 1
    dropped = (plain.pi[changed] > 0) & (solved.pi[changed] == 0)
    assert dropped.any(axis=1).all() and not_won.sum() >= 3 and (values[dropped & not_won[:, None]] == -1).all()
    # and a win in one, always proven, gets all of pi
    wins_now = game.winning_moves(solved.states)
    rows = wins_now.any(axis=1)
    np.testing.assert_allclose(np.where(wins_now[rows], solved.pi[rows], 0).sum(axis=1), 1.0, atol=1e-6)
