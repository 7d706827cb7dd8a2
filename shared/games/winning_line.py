"""The winning line of a finished n-in-a-row game: the cells of the winner's longest run of at least n stones."""
from __future__ import annotations

import numpy as np

from shared.games.base import F_DONE, F_WINNER, Game
from shared.games.lines import LINE_DIRECTIONS


def winning_line(game: Game, state: np.ndarray) -> list[int] | None:
    """The cells (row * W + col, row 0 at the top) of the winner's longest line of at least n stones in the
    finished state [S] int16 of an n-in-a-row game (tic-tac-toe, Connect Four, Gomoku); None otherwise."""
    n = getattr(game, "n_in_row", None)
    base = game.num_cells
    if n is None or not state[base + F_DONE] or int(state[base + F_WINNER]) == 0:
        return None
    winner = int(state[base + F_WINNER])
    board = np.asarray(state[:base]).reshape(game.height, game.width)       # [H, W] int16
    best: list[int] = []
    for row in range(game.height):
        for col in range(game.width):
            for dr, dc in LINE_DIRECTIONS:
                prev_r, prev_c = row - dr, col - dc                            # start only at a run's first stone
                if 0 <= prev_r < game.height and 0 <= prev_c < game.width and board[prev_r, prev_c] == winner:
                    continue
                run, r, c = [], row, col
                while 0 <= r < game.height and 0 <= c < game.width and board[r, c] == winner:
                    run.append(r * game.width + c)
                    r, c = r + dr, c + dc
                if len(run) >= n and len(run) > len(best):
                    best = run
    return best or None
