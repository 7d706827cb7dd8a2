"""Batched "n in a row" detection through the stone just played (tic-tac-toe, Connect Four, Gomoku).

Only lines through the last move can have been completed by it, so each check looks at the 4 line
directions through that cell, n - 1 cells each way: O(B * n) work instead of scanning whole boards.
Runs are counted with a cumulative product, so "n OR MORE" (freestyle, overlines included) wins.
"""
from __future__ import annotations

import numpy as np

#: (row step, column step) of the four line directions: horizontal, vertical, diagonal, anti-diagonal.
LINE_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def same_colour_run(cells: np.ndarray, rows: np.ndarray, cols: np.ndarray, height: int, width: int,
                    d_row: int, d_col: int, max_steps: int) -> np.ndarray:
    """Length of the run of stones of the colour at (row, col), walking from it in one direction.

    cells [B, H*W] int16 flat boards; rows, cols [B] int64 the start cells (which must hold a stone).
    Counts at most `max_steps` cells beyond the start. Returns [B] int64 (the start cell not included).
    """
    batch = np.arange(cells.shape[0])[:, None]
    colour = cells[batch[:, 0], rows * width + cols][:, None]                  # [B, 1]
    steps = np.arange(1, max_steps + 1, dtype=np.int64)[None, :]              # [1, K]
    r = rows[:, None] + d_row * steps                                          # [B, K]
    c = cols[:, None] + d_col * steps
    inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
    flat = np.where(inside, r * width + c, 0)
    same = inside & (cells[batch, flat] == colour)                             # [B, K] bool
    return np.cumprod(same, axis=1).sum(axis=1)


def completes_line(cells: np.ndarray, rows: np.ndarray, cols: np.ndarray, height: int, width: int,
                   n_in_row: int) -> np.ndarray:
    """Whether the stone at (row, col) is part of n_in_row or more same-coloured stones in a straight line.

    cells [B, H*W] int16 boards AFTER the move; rows, cols [B] int64 the cell just played.
    Returns [B] bool.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    won = np.zeros(cells.shape[0], dtype=bool)
    for d_row, d_col in LINE_DIRECTIONS:
        forward = same_colour_run(cells, rows, cols, height, width, d_row, d_col, n_in_row - 1)
        backward = same_colour_run(cells, rows, cols, height, width, -d_row, -d_col, n_in_row - 1)
        won |= 1 + forward + backward >= n_in_row
    return won
