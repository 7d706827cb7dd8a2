"""Othello's compiled random playouts (shared.games.othello.playout) against the numpy rules of shared.games.othello.rules."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.othello import playout as othello_playout
from shared.games.base import F_DONE, F_PASSES, F_PLAYER, F_WINNER, GameError
from shared.search.rollout import RolloutEvaluator
from tests.games.helpers import random_playout

SIZES = {"othello": 8, "othello-6x6": 6}


def live_positions(game, games: int, seed: int) -> np.ndarray:
    """Every unfinished position of `games` uniformly random games (numpy rules): [K, S] int16."""
    positions = random_playout(game, games, seed).all_positions()
    return positions[~game.is_terminal(positions)]


def kernel_legal_actions(game, state: np.ndarray) -> list[int]:
    """The kernel's legal actions (cells, or only the pass) of one unfinished state [S]."""
    board = state[: game.num_cells].astype(np.int8)
    out = np.empty(game.num_actions, np.int64)
    count = othello_playout.legal_actions(board, game.height, game.width, int(game.to_play(state[None])[0]), out)
    return out[:count].tolist()


def kernel_play(game, state: np.ndarray, action: int) -> tuple[np.ndarray, int, int, bool]:
    """The kernel's move: one unfinished state [S] and a legal action -> (board [H*W] int8, player to move next,
    consecutive passes, game over)."""
    nn = game.num_cells
    board = state[:nn].astype(np.int8)
    player, passes, done = othello_playout.play(board, game.height, game.width, action,
                                                int(state[nn + F_PLAYER]), int(state[nn + F_PASSES]))
    return board, int(player), int(passes), bool(done)


@pytest.mark.parametrize("name", list(SIZES))
def test_legal_actions_and_moves_agree_with_the_numpy_rules(name):
    game = make_game(name)
    nn = game.num_cells
    states = live_positions(game, 40, seed=SIZES[name])
    mask = game.legal_mask(states)
    for state, legal in zip(states, mask):
        assert kernel_legal_actions(game, state) == np.flatnonzero(legal).tolist(), game.render(state)
    parents, actions = np.nonzero(mask)
    children = game.step(states[parents], actions)
    passes_seen = finishes_seen = 0
    for state, action, after in zip(states[parents], actions, children):
        board, player, passes, done = kernel_play(game, state, int(action))
        assert np.array_equal(board, after[:nn]), (game.render(state), action)
        assert player == after[nn + F_PLAYER]
        assert passes == after[nn + F_PASSES]
        assert done == bool(after[nn + F_DONE])
        if done:
            assert othello_playout.disc_winners(board[None])[0] == after[nn + F_WINNER]
            finishes_seen += 1
        passes_seen += action == game.pass_action
    assert passes_seen > 0 and finishes_seen > 0            # the rare branches were exercised too


def test_a_second_pass_in_a_row_ends_the_game_as_in_the_numpy_rules():
    game = make_game("othello-6x6")
    nn = game.num_cells
    state = game.initial_states(1)
    state[0, :nn] = 1
    state[0, [0, 1, 2]] = [0, 1, -1]          # only white can move (a1 flanks b1); black to move must pass
    state[0, nn + F_PASSES] = 1               # ... right after a pass by white (a set-up position)
    assert kernel_legal_actions(game, state[0]) == [game.pass_action]
    after = game.step(state, np.array([game.pass_action]))[0]
    assert after[nn + F_DONE] == 1 and kernel_play(game, state[0], game.pass_action)[3]
    state[0, nn + F_PASSES] = 0
    assert not kernel_play(game, state[0], game.pass_action)[3]    # one pass: white plays on


@pytest.mark.parametrize("name", list(SIZES))
def test_recorded_playouts_replay_legally_and_end_with_the_rules_winner(name):
    game = make_game(name)
    nn = game.num_cells
    starts = live_positions(game, 10, seed=3)[::7]
    boards = starts[:, :nn].astype(np.int8)
    record = np.full((len(starts), 2 * nn + 4), -1, np.int64)
    othello_playout._seed(11)
    othello_playout.play_out(boards, game.to_play(starts).astype(np.int64),
                             starts[:, nn + F_PASSES].astype(np.int64), game.height, game.width, record)
    winners = othello_playout.disc_winners(boards)
    for start, final_board, actions, winner in zip(starts, boards, record, winners):
        state = start[None]
        played = actions[actions >= 0]
        assert played.size > 0 and np.all(actions[played.size:] == -1)
        for action in played:
            assert not game.is_terminal(state)[0]
            game.check_actions(state, np.array([action]))        # every kernel move is legal under the rules
            state = game.step(state, np.array([action]))
        assert game.is_terminal(state)[0]                         # and the game ends exactly where the kernel stopped
        assert np.array_equal(state[0, :nn], final_board)
        assert state[0, nn + F_WINNER] == winner


@pytest.mark.parametrize("name, moves", [("othello", "f5 f6 e6 f4 e3 c5"), ("othello-6x6", "b3 b2 c2")])
def test_each_legal_action_is_chosen_with_equal_probability(name, moves):
    game = make_game(name)
    nn, n = game.num_cells, 4000
    start = game.play_moves(game.parse_moves(moves))
    legal = np.flatnonzero(game.legal_mask(start)[0])
    boards = np.repeat(start[:, :nn].astype(np.int8), n, axis=0)
    first = np.full((n, 1), -1, np.int64)
    othello_playout._seed(12)
    othello_playout.play_out(boards, np.full(n, int(game.to_play(start)[0]), np.int64), np.zeros(n, np.int64),
                             game.height, game.width, first)
    assert set(first[:, 0].tolist()) == set(legal.tolist())
    p = 1 / legal.size
    for action in legal:
        share = float((first[:, 0] == action).mean())
        assert abs(share - p) <= 4.5 * np.sqrt(p * (1 - p) / n), (game.action_to_str(int(action)), share, p)


def two_proportion_bound(p1: float, p2: float, n: int, sigmas: float = 4.5) -> tuple[float, float]:
    """(|p1 - p2|, `sigmas` standard errors of that difference under the pooled null), both of n trials."""
    pooled = (p1 + p2) / 2
    return abs(p1 - p2), sigmas * np.sqrt(max(pooled * (1 - pooled), 1e-12) * 2 / n)


@pytest.mark.parametrize("name, moves", [("othello", "f5 f6 e6 f4 e3 c5"), ("othello-6x6", "b3 b2 c2")])
def test_playout_results_follow_the_uniform_numpy_playouts(name, moves):
    game = make_game(name)
    n = 4000
    states = np.repeat(game.play_moves(game.parse_moves(moves)), n, axis=0)
    kernel = game.playout_winners(states, np.random.default_rng(5))
    evaluator = RolloutEvaluator(game, np.random.default_rng(6))
    finals = evaluator.random_playouts(states)
    assert game.is_terminal(finals).all()
    numpy_winners = finals[:, game.num_cells + F_WINNER].astype(np.int64)
    assert kernel.dtype == np.int64 and kernel.shape == (n,)
    for outcome in (1, 0, -1):
        shares = float((kernel == outcome).mean()), float((numpy_winners == outcome).mean())
        gap, bound = two_proportion_bound(*shares, n)
        assert gap <= bound, (outcome, gap, bound)


def test_finished_states_give_their_recorded_winner_and_values_follow_the_mover():
    game = make_game("othello")
    nn = game.num_cells
    finals = random_playout(game, 30, seed=4).final
    rng = np.random.default_rng(0)
    assert np.array_equal(game.playout_winners(finals, rng), finals[:, nn + F_WINNER])
    forged = finals.copy()
    forged[:, nn + F_WINNER] = -np.sign(forged[:, :nn].sum(axis=1))   # recorded, not recounted
    assert np.array_equal(game.playout_winners(forged, rng), forged[:, nn + F_WINNER])
    values = RolloutEvaluator(game, rng)(finals)[1]
    assert np.array_equal(values, finals[:, nn + F_WINNER] * finals[:, nn + F_PLAYER])


def test_one_move_from_the_end_the_playout_is_forced():
    # 6x6 filled with black except c1 (empty) and d1 (white), white to move: white must pass, then c1 is black's
    # only move and wins 36-0.
    game = make_game("othello-6x6")
    state = game.initial_states(1)
    state[0, :36] = 1
    state[0, [2, 3]] = [0, -1]
    state[0, 36 + F_PLAYER] = -1                 # white to move must pass (it flanks nothing)
    assert game.legal_mask(state)[0].tolist() == [False] * 36 + [True]
    many = np.repeat(state, 5, axis=0)
    assert np.array_equal(game.playout_winners(many, np.random.default_rng(1)), np.ones(5))
    white_values = RolloutEvaluator(game, np.random.default_rng(2))(many)[1]
    assert np.array_equal(white_values, -np.ones(5))             # the mover's view: white loses


def test_bad_state_shapes_raise_the_game_error():
    game = make_game("othello")
    rng = np.random.default_rng(0)
    with pytest.raises(GameError, match=r"expected states of shape \[B, 70\]"):
        game.playout_winners(np.zeros((2, 69), np.int16), rng)
    with pytest.raises(GameError):
        game.playout_winners(np.zeros(70, np.int16), rng)
    assert game.playout_winners(game.initial_states(0), rng).shape == (0,)
