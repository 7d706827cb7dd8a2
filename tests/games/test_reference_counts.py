"""Game-tree counts against published reference numbers (batched breadth-first search, one array per depth)."""
from __future__ import annotations

import numpy as np

from shared.games import make_game
from shared.games.base import F_PLAYER
from tests.games.helpers import expand, unique_boards

# Othello perft from the standard start (leaf nodes of the game tree; a forced pass is a move).
OTHELLO_PERFT = [4, 12, 56, 244, 1396, 8200, 55092, 390216]
# Distinct Connect Four positions after n plies, n = 0..8 (OEIS A212693).
CONNECT4_POSITIONS = [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]


def test_othello_perft_to_depth_8():
    game = make_game("othello")
    level = game.initial_states(1)
    counts = []
    for depth in range(1, len(OTHELLO_PERFT) + 1):
        if depth == len(OTHELLO_PERFT):
            counts.append(int(game.legal_mask(level).sum()))  # the last level's leaves need not be built
        else:
            level = expand(game, level)
            counts.append(len(level))
    assert counts == OTHELLO_PERFT


def test_othello_standard_opening_plays():
    game = make_game("othello")
    moves = game.parse_moves("f5 d6 c3")
    assert moves == game.parse_moves("f5d6c3") == [4 * 8 + 5, 5 * 8 + 3, 2 * 8 + 2]
    state = game.play_moves(moves)[0]
    board = state[:64].reshape(8, 8)
    black = {(int(r), int(c)) for r, c in zip(*np.nonzero(board == 1))}
    white = {(int(r), int(c)) for r, c in zip(*np.nonzero(board == -1))}
    assert black == {(2, 2), (3, 3), (3, 4), (4, 4), (4, 5)}  # c3 d4 e4 e5 f5
    assert white == {(4, 3), (5, 3)}                          # d5 d6
    assert state[64 + F_PLAYER] == -1


def test_othello_start_moves_are_the_standard_four():
    game = make_game("othello")
    legal = np.flatnonzero(game.legal_mask(game.initial_states(1))[0])
    assert sorted(game.action_to_str(a) for a in legal) == ["c4", "d3", "e6", "f5"]


def test_connect4_distinct_positions_by_ply():
    game = make_game("connect4")
    level = game.initial_states(1)
    counts = [1]
    for _ in range(len(CONNECT4_POSITIONS) - 1):
        level = unique_boards(game, expand(game, level))
        counts.append(len(level))
    assert counts == CONNECT4_POSITIONS


def test_tictactoe_games_positions_and_terminal_positions():
    game = make_game("tictactoe")
    level = game.initial_states(1)
    complete_games = 0
    positions = 1            # the empty board
    terminal_boards = set()
    while len(level):
        level = expand(game, level)                 # every move sequence, not deduplicated
        done = game.is_terminal(level)
        complete_games += int(done.sum())
        distinct = unique_boards(game, level)
        positions += len(distinct)
        terminal_boards.update(map(bytes, distinct[game.is_terminal(distinct), :9]))
        level = level[~done]
    assert complete_games == 255168
    assert positions == 5478
    assert len(terminal_boards) == 958
