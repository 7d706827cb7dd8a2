"""Go's compiled light playouts (shared.games.go.playout) against the full rules of shared.games.go.rules."""
from __future__ import annotations

import numpy as np

from shared.games import make_game
from shared.games.go import board as go_rules
from shared.games.go import playout as go_playout
from shared.games.base import F_PASSES, F_PLY
from shared.search.rollout import RolloutEvaluator


def random_positions(size: int, count: int, seed: int) -> np.ndarray:
    """States reached by uniformly random legal placements (full rules), at random lengths: [count, S] int16."""
    game = make_game(f"go-{size}x{size}")
    rng = np.random.default_rng(seed)
    states = game.initial_states(count)
    stop = rng.integers(0, 2 * size * size - 2, count)
    for ply in range(int(stop.max())):
        live = np.flatnonzero((stop > ply) & ~game.is_terminal(states))
        if live.size == 0:
            break
        legal = game.legal_mask(states[live])
        legal[:, game.pass_action] = legal[:, : game.pass_action].sum(axis=1) == 0   # pass only when stuck
        scores = np.where(legal, rng.random(legal.shape), -1.0)
        states[live] = game.step(states[live], scores.argmax(axis=1))
    return states[~game.is_terminal(states)]


def test_playout_legality_and_placement_agree_with_the_full_rules():
    game = make_game("go-7x7")
    nn, nbr = game.num_cells, go_rules.tables(7).nbr
    states = random_positions(7, 60, seed=1)
    stamp, mark, stack = np.zeros(1, np.int64), np.zeros(nn, np.int64), np.empty(nn, np.int64)
    checked = 0
    for state in states:
        legal = game.legal_mask(state[None])[0]
        player = int(game.to_play(state[None])[0])
        for cell in np.flatnonzero(state[:nn] == 0):
            board = state[:nn].astype(np.int8)
            light = go_playout._is_legal(board, nbr, cell, player, -1, stamp, mark, stack)
            if legal[cell]:
                assert light, (state[:nn].reshape(7, 7), cell)              # full-rules legal -> legal here
                go_playout._place(board, nbr, cell, player, stamp, mark, stack)
                after = game.step(state[None], np.array([cell]))[0, :nn]
                assert np.array_equal(board, after)                         # same stones captured
                checked += 1
            elif light:                          # refused by the full rules for a repetition only, never suicide
                go_playout._place(board, nbr, cell, player, stamp, mark, stack)
                assert go_rules.group_liberties(board[None].astype(np.int16), go_rules.tables(7))[1][0, cell] > 0
    assert checked > 500


def test_simple_ko_is_not_retaken_at_once_inside_a_playout():
    #   . X O .
    #   X O . O     black captures at the empty middle point of row 1: white may not retake at once
    #   . X O .
    game = make_game("go-5x5")
    nbr = go_rules.tables(5).nbr
    board = np.zeros(25, np.int8)
    for r, c, v in [(0, 1, 1), (0, 2, -1), (1, 0, 1), (1, 1, -1), (1, 3, -1), (2, 1, 1), (2, 2, -1)]:
        board[r * 5 + c] = v
    stamp, mark, stack = np.zeros(1, np.int64), np.zeros(25, np.int64), np.empty(25, np.int64)
    ko = go_playout._place(board, nbr, 7, 1, stamp, mark, stack)           # black at (1, 2) captures (1, 1)
    assert board[6] == 0 and ko == 6
    assert not go_playout._is_legal(board, nbr, 6, -1, ko, stamp, mark, stack)
    assert go_playout._is_legal(board, nbr, 6, -1, -1, stamp, mark, stack)   # legal again after another move
    assert game.num_cells == 25


def test_finished_playouts_leave_no_group_without_liberties_and_no_fillable_point():
    game = make_game("go-9x9")
    t = go_rules.tables(9)
    states = random_positions(9, 40, seed=2)
    boards = states[:, :81].astype(np.int8).copy()
    go_playout._seed(7)
    go_playout.play_out(boards, game.to_play(states).astype(np.int8), states[:, 81 + F_PASSES].astype(np.int64),
                        states[:, 81 + F_PLY].astype(np.int64), t.nbr, game.max_moves)
    _, liberties = go_rules.group_liberties(boards.astype(np.int16), t)
    assert np.all(liberties[boards != 0] > 0)
    assert np.allclose(go_playout.area_scores(boards, t.nbr, 7.5),
                       game.area_score(np.concatenate([boards, np.zeros((len(boards), 6), np.int8)], 1)))


def test_pure_mcts_on_go_uses_the_light_playouts_and_values_follow_the_mover():
    game = make_game("go-5x5")
    rng = np.random.default_rng(0)
    evaluator = RolloutEvaluator(game, rng)
    alive = np.ones((1, 25), np.int16)                      # black everywhere but two eyes: white cannot play
    alive[0, [6, 18]] = 0
    black_to_move = game.states_from_boards(np.repeat(alive, 8, 0), 1)
    white_to_move = game.states_from_boards(np.repeat(alive, 8, 0), -1)
    assert np.array_equal(evaluator(black_to_move)[1], np.ones(8))      # black passes (no eye filling) and wins
    assert np.array_equal(evaluator(white_to_move)[1], -np.ones(8))     # the mover's view: white loses
    start = game.initial_states(3)
    done = game.step(game.step(start[:3], np.full(3, game.pass_action)), np.full(3, game.pass_action))
    assert np.array_equal(game.playout_winners(done, rng), np.full(3, -1))     # empty board: white by komi



def _after_white_pass(game, stone: int) -> np.ndarray:
    """A 5x5 board holding one stone (+1 black / -1 white at |stone| - 1), black to move right after white passed."""
    board = np.zeros((1, 25), np.int16)
    board[0, abs(stone) - 1] = 1 if stone > 0 else -1
    return game.step(game.states_from_boards(board, -1), np.array([game.pass_action]))


def test_match_players_pass_to_end_a_won_game_and_play_on_in_a_lost_one():
    from shared.players.player import MCTSPlayer, PureMCTSPlayer
    from shared.search import SearchConfig
    from tests.search.helpers import HashEvaluator

    game = make_game("go-5x5")
    won, lost = _after_white_pass(game, +13), _after_white_pass(game, -13)   # all 25 points are black's / white's
    assert game.area_score(won)[0] > 0 > game.area_score(lost)[0]
    players = [MCTSPlayer(game, HashEvaluator(game), SearchConfig(num_simulations=16)),
               PureMCTSPlayer(game, 64, np.random.default_rng(0))]
    for player in players:
        assert player.select_actions(won)[0] == game.pass_action, player.name       # passing wins at once
        assert player.select_actions(lost)[0] != game.pass_action, player.name      # passing would lose at once
