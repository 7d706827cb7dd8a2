"""Batched "n in a row" detection (tic-tac-toe, Connect Four, Gomoku).

`completes_line`: only lines through the last move can have been completed by it, so the check looks at the
4 line directions through that cell, n - 1 cells each way: O(B * n) work instead of scanning whole boards.
The neighbour cells of every cell are precomputed once per board shape (`_neighbour_table`), so the check is one
gather plus a few whole-batch operations. Runs are counted with a cumulative product, so "n OR MORE"
(freestyle, overlines included) wins.

`completion_cells`: the empty cells where each player would complete n or more in a row by placing a stone there
(its immediate winning cells, ignoring whose turn it is and gravity), found with window sums over the board.
"""
from __future__ import annotations

from functools import lru_cache

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


@lru_cache(maxsize=64)
def _neighbour_table(height: int, width: int, n_in_row: int) -> tuple[np.ndarray, np.ndarray]:
    """For every cell, the cells 1..n-1 steps away along each direction, forwards and backwards.

    Returns (index [H*W, 8, n-1] int64 flat cells, the cell itself where off the board;
    inside [H*W, 8, n-1] bool). Rows 2k and 2k+1 of axis 1 are direction k forwards and backwards.
    """
    steps = np.arange(1, n_in_row, dtype=np.int64)
    rows, cols = np.divmod(np.arange(height * width, dtype=np.int64), width)
    index = np.empty((height * width, 8, n_in_row - 1), np.int64)
    inside = np.empty(index.shape, bool)
    for k, (d_row, d_col) in enumerate(LINE_DIRECTIONS):
        for side, sign in enumerate((1, -1)):
            r = rows[:, None] + sign * d_row * steps[None, :]
            c = cols[:, None] + sign * d_col * steps[None, :]
            ok = (r >= 0) & (r < height) & (c >= 0) & (c < width)
            inside[:, 2 * k + side] = ok
            index[:, 2 * k + side] = np.where(ok, r * width + c, (rows * width + cols)[:, None])
    index.setflags(write=False)
    inside.setflags(write=False)
    return index, inside


def completes_line(cells: np.ndarray, rows: np.ndarray, cols: np.ndarray, height: int, width: int,
                   n_in_row: int) -> np.ndarray:
    """Whether the stone at (row, col) is part of n_in_row or more same-coloured stones in a straight line.

    cells [B, H*W] int16 boards AFTER the move; rows, cols [B] int64 the cell just played.
    Returns [B] bool.
    """
    count = cells.shape[0]
    played = np.asarray(rows, np.int64) * width + np.asarray(cols, np.int64)      # [B] flat cell
    index, inside = _neighbour_table(height, width, n_in_row)
    offset = (np.arange(count, dtype=np.int64) * cells.shape[1])[:, None, None]
    flat = cells.reshape(-1)
    colour = flat[offset[:, 0, 0] + played][:, None, None]                          # [B, 1, 1]
    same = (flat[offset + index[played]] == colour) & inside[played]               # [B, 8, n-1] bool
    runs = np.cumprod(same, axis=2, dtype=np.int8).sum(axis=2, dtype=np.int64)      # [B, 8] run per side
    return ((runs[:, 0::2] + runs[:, 1::2]) >= n_in_row - 1).any(axis=1)


def completion_cells(cells: np.ndarray, height: int, width: int, n_in_row: int) -> tuple[np.ndarray, np.ndarray]:
    """The immediate winning cells of each player: cells [B, H*W] int16 (+1 first player, -1 second, 0 empty).

    Returns (first [B, H*W] bool, second [B, H*W] bool): empty cells where a stone of that player would
    complete n_in_row or more in a line. A window of n cells along a line is "one short" for a player when its
    sum is +-(n - 1): then it holds n - 1 of that player's stones and one empty cell (a stone of the other
    colour would lower the sum by 2). Its empty cell wins; overlines count, as in the rules.
    Only boards with some one-short window are scanned a second time to locate the cells.
    """
    count = cells.shape[0]
    board = cells.reshape(count, height, width).astype(np.int8)
    first = np.zeros((count, height, width), bool)
    second = np.zeros((count, height, width), bool)
    short = n_in_row - 1
    for d_row, d_col in LINE_DIRECTIONS:
        span_r, span_c = (n_in_row - 1) * d_row, (n_in_row - 1) * abs(d_col)
        if span_r >= height or span_c >= width:
            continue
        col0 = span_c if d_col < 0 else 0                 # window starts: rows [0, H - span_r), cols [col0, ...)
        win_h, win_w = height - span_r, width - span_c

        def view(board_part: np.ndarray, k: int) -> np.ndarray:
            r, c = k * d_row, col0 + k * d_col
            return board_part[:, r: r + win_h, c: c + win_w]

        sums = view(board, 0).copy()
        for k in range(1, n_in_row):
            sums += view(board, k)                        # [B, win_h, win_w] int8 window sums
        for target, out in ((short, first), (-short, second)):
            hit = sums == target
            rows_with = np.flatnonzero(hit.reshape(count, -1).any(axis=1))
            if rows_with.size == 0:
                continue
            hit, sub_board = hit[rows_with], board[rows_with]
            marks = out[rows_with]
            for k in range(n_in_row):
                view(marks, k)[...] |= hit & (view(sub_board, k) == 0)
            out[rows_with] = marks
    return first.reshape(count, -1), second.reshape(count, -1)
