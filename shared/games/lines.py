"""Batched "n in a row" detection (tic-tac-toe, Connect Four, Gomoku), compiled with numba.

`completes_line`: only lines through the last move can have been completed by it, so the check walks the
4 line directions through that cell, at most n - 1 cells each way: O(B * n) work instead of scanning whole
boards. "n OR MORE" (freestyle, overlines included) wins.

`completion_cells`: the empty cells where each player would complete n or more in a row by placing a stone there
(its immediate winning cells, ignoring whose turn it is and gravity), found with a sliding window sum along
every line of the board.

`line_step_stored`: Game.step_stored (one move on positions kept in the search's store) for n-in-a-row games,
compiled; the numpy rules of the games stay the reference (tests compare them move for move).

`line_move_outcomes`: Game.move_outcomes for n-in-a-row games, stones placed anywhere (gravity=False) or dropped
into columns (gravity=True, Connect Four), from the completion cells, in one compiled pass.

`same_colour_run` is the plain numpy building block the first version used (kept for reference and tests).
Kernels are compiled on first use and cached on disk.
"""
from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np

from shared.games.base import F_DONE, F_LAST, F_PLAYER, F_PLY, F_WINNER, NUM_FIELDS

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
    played = np.asarray(rows, np.int64) * width + np.asarray(cols, np.int64)
    return _completes_line(np.ascontiguousarray(cells), played, height, width, n_in_row)


@numba.njit(cache=True, nogil=True, inline="always")
def _line_through(board, played, height, width, n_in_row):
    """Whether the stone on cell `played` of one flat board [H*W] is part of n_in_row or more in a line."""
    row, col = played // width, played % width
    colour = board[played]
    for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * d_row, col + sign * d_col
            steps = 0
            while steps < n_in_row - 1 and 0 <= r < height and 0 <= c < width and board[r * width + c] == colour:
                run += 1
                steps += 1
                r, c = r + sign * d_row, c + sign * d_col
        if run >= n_in_row:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _completes_line(cells, played, height, width, n_in_row):
    out = np.zeros(cells.shape[0], np.bool_)
    for b in range(cells.shape[0]):
        out[b] = _line_through(cells[b], played[b], height, width, n_in_row)
    return out


def line_step_stored(store: np.ndarray, slots: np.ndarray, parents: np.ndarray, children: np.ndarray,
                     actions: np.ndarray, height: int, width: int, n_in_row: int,
                     gravity: bool) -> tuple[np.ndarray, np.ndarray]:
    """`Game.step_stored` for n-in-a-row games, compiled: the rules of `InARowGame` (gravity=False, action = cell)
    and `Connect4` (gravity=True, action = column, the disc lands on the lowest empty cell) on positions kept in
    a store [T, N, S] int16. Plays actions[k] in store[slots[k], parents[k]] and writes the new position to
    store[slots[k], children[k]] (a different row). slots, parents, children, actions [K] int64.

    Returns (terminal [K] bool, value [K] float32: the new position's result for ITS side to move, 0 unless
    terminal). A finished parent is copied unchanged, as `GridGame.step` does.
    """
    count = slots.shape[0]
    if store.ndim != 3 or store.dtype != np.int16 or store.shape[2] < height * width + NUM_FIELDS:
        raise ValueError(f"step_stored: store must be [T, N, S >= {height * width + NUM_FIELDS}] int16, got "
                         f"{store.dtype} {store.shape}; pass the search tree's node_states")
    if not parents.shape[0] == children.shape[0] == actions.shape[0] == count:
        raise ValueError(f"step_stored: slots, parents, children and actions need one entry per move, got lengths "
                         f"{count}, {parents.shape[0]}, {children.shape[0]}, {actions.shape[0]}")
    terminal = np.empty(count, np.bool_)
    value = np.empty(count, np.float32)
    _step_stored(store, np.ascontiguousarray(slots, np.int64), np.ascontiguousarray(parents, np.int64),
                 np.ascontiguousarray(children, np.int64), np.ascontiguousarray(actions, np.int64), height, width,
                 n_in_row, gravity, terminal, value)
    return terminal, value


@numba.njit(cache=True, nogil=True)
def _step_stored(store, slots, parents, children, actions, height, width, n_in_row, gravity, terminal, value):
    num_cells = height * width
    last = store.shape[2] - 1
    touched = 0
    for k in range(slots.shape[0]):
        # First touch every row in a tight loop of independent loads (the rows are usually out of cache: their
        # misses overlap here instead of one by one behind each row's rules below).
        touched += store[slots[k], parents[k], 0] + store[slots[k], parents[k], last]
        touched += store[slots[k], children[k], 0] + store[slots[k], children[k], last]
    for k in range(slots.shape[0]):
        old, new = store[slots[k], parents[k]], store[slots[k], children[k]]
        for i in range(old.shape[0]):
            new[i] = old[i]
        if old[num_cells + F_DONE] == 0:
            mover, action = old[num_cells + F_PLAYER], actions[k]
            cell = action
            if gravity:                                                # the lowest empty cell of the column
                empty = 0
                for row in range(height):
                    empty += old[row * width + action] == 0
                cell = (empty - 1) * width + action
            new[cell] = mover
            won = _line_through(new, cell, height, width, n_in_row)
            new[num_cells + F_LAST] = action
            new[num_cells + F_PLY] = old[num_cells + F_PLY] + 1
            new[num_cells + F_PLAYER] = -mover                         # the opponent moves next
            new[num_cells + F_DONE] = won or old[num_cells + F_PLY] + 1 >= num_cells
            new[num_cells + F_WINNER] = mover if won else 0
        done = new[num_cells + F_DONE] != 0
        terminal[k] = done
        # Result for the new side to move: winner * player (a win of the mover is a loss for the side to move).
        value[k] = np.float32(new[num_cells + F_WINNER]) * np.float32(new[num_cells + F_PLAYER]) if done else 0.0
    return touched                                                     # returned so the touches are not removed


def completion_cells(cells: np.ndarray, height: int, width: int, n_in_row: int) -> tuple[np.ndarray, np.ndarray]:
    """The immediate winning cells of each player: cells [B, H*W] int16 (+1 first player, -1 second, 0 empty).

    Returns (first [B, H*W] bool, second [B, H*W] bool): empty cells where a stone of that player would
    complete n_in_row or more in a line. A window of n cells along a line is "one short" for a player when its
    sum is +-(n - 1): then it holds n - 1 of that player's stones and one empty cell (a stone of the other
    colour would lower the sum by 2). Its empty cell wins; overlines count, as in the rules.
    """
    cells = np.ascontiguousarray(cells)
    first = np.zeros(cells.shape, bool)
    second = np.zeros(cells.shape, bool)
    _completion_cells(cells, _line_table(height, width, n_in_row), height, width, n_in_row, first, second)
    return first, second


def line_move_outcomes(states: np.ndarray, height: int, width: int, n_in_row: int, gravity: bool) -> np.ndarray:
    """Move outcomes for the side to move (see Game.move_outcomes): states [B, S] int16 -> [B, A] int8, with
    A = H*W cells (gravity=False) or W columns (gravity=True).

    +1: the move completes n in a row. -1: it does not, and the opponent then has a winning cell: another of its
    current winning cells (a stone never removes one except by filling it), or, with gravity, the cell just above
    the disc (whose lines the disc below does not touch). Exact for freestyle n-in-a-row rules.
    """
    cells = np.ascontiguousarray(states[:, : height * width])
    first_to_move = states[:, height * width + F_PLAYER] == 1
    live = states[:, height * width + F_DONE] == 0
    first = np.zeros(cells.shape, bool)
    second = np.zeros(cells.shape, bool)
    _completion_cells(cells, _line_table(height, width, n_in_row), height, width, n_in_row, first, second)
    num_actions = width if gravity else height * width
    out = np.zeros((cells.shape[0], num_actions), np.int8)
    _outcomes_from_completions(cells, first_to_move, live, first, second, height, width, gravity, out)
    return out


@numba.njit(cache=True, nogil=True)
def _outcomes_from_completions(cells, first_to_move, live, first, second, height, width, gravity, out):
    for b in range(cells.shape[0]):
        if not live[b]:
            continue
        own, opponent = (first[b], second[b]) if first_to_move[b] else (second[b], first[b])
        if not gravity:
            threats = 0
            for cell in range(height * width):
                threats += opponent[cell]
            for cell in range(height * width):
                if cells[b, cell] != 0:
                    continue                                           # occupied: illegal
                if own[cell]:
                    out[b, cell] = 1
                elif threats - opponent[cell] > 0:
                    out[b, cell] = -1                                  # the opponent still has a winning cell
            continue
        threats = 0
        for col in range(width):                                       # opponent wins at the landing cells
            row = height - 1
            while row >= 0 and cells[b, row * width + col] != 0:
                row -= 1
            if row >= 0:
                threats += opponent[row * width + col]
        for col in range(width):
            row = height - 1
            while row >= 0 and cells[b, row * width + col] != 0:
                row -= 1
            if row < 0:
                continue                                               # full column: illegal
            landing = row * width + col
            if own[landing]:
                out[b, col] = 1
            elif threats - opponent[landing] > 0 or (row >= 1 and opponent[landing - width]):
                out[b, col] = -1


@lru_cache(maxsize=64)
def _line_table(height: int, width: int, n_in_row: int) -> np.ndarray:
    """Every line of the board long enough for n in a row: [L, 5] int64 rows (first row, first column, row step,
    column step, length): rows, columns, and the diagonals and anti-diagonals starting on the top row or on a
    side column."""
    lines = [(r, 0, 0, 1, width) for r in range(height)] + [(0, c, 1, 0, height) for c in range(width)]
    for c in range(width):
        lines += [(0, c, 1, 1, min(height, width - c)), (0, c, 1, -1, min(height, c + 1))]
    for r in range(1, height):
        lines += [(r, 0, 1, 1, min(height - r, width)), (r, width - 1, 1, -1, min(height - r, width))]
    table = np.array([line for line in lines if line[4] >= n_in_row], np.int64).reshape(-1, 5)
    table.setflags(write=False)
    return table


@numba.njit(cache=True, nogil=True)
def _completion_cells(cells, lines, height, width, n_in_row, first, second):
    """Slide a window of n cells along every line; mark the empty cell of every window that is one short:
    sum +(n - 1) in first, -(n - 1) in second. A one-short window holds n - 1 stones, so only the part of a line
    within one cell of the stones' bounding box is scanned (sparse boards are cheap)."""
    short = n_in_row - 1
    for b in range(cells.shape[0]):
        board = cells[b]
        stones_first, stones_second = 0, 0
        row_lo, row_hi, col_lo, col_hi = height, -1, width, -1
        for cell in range(board.shape[0]):
            if board[cell] != 0:
                stones_first += board[cell] == 1
                stones_second += board[cell] == -1
                r, c = cell // width, cell % width
                row_lo, row_hi = min(row_lo, r), max(row_hi, r)
                col_lo, col_hi = min(col_lo, c), max(col_hi, c)
        if max(stones_first, stones_second) < short:
            continue                                                   # too few stones for any winning cell
        for line in range(lines.shape[0]):
            r0, c0, d_row, d_col, length = lines[line, 0], lines[line, 1], lines[line, 2], lines[line, 3], lines[line, 4]
            # Steps k of this line inside the bounding box.
            k_lo, k_hi = 0, length - 1
            if d_row == 0:
                if r0 < row_lo or r0 > row_hi:
                    continue
            else:
                k_lo, k_hi = max(k_lo, row_lo - r0), min(k_hi, row_hi - r0)
            if d_col == 0:
                if c0 < col_lo or c0 > col_hi:
                    continue
            elif d_col == 1:
                k_lo, k_hi = max(k_lo, col_lo - c0), min(k_hi, col_hi - c0)
            else:
                k_lo, k_hi = max(k_lo, c0 - col_hi), min(k_hi, c0 - col_lo)
            k_lo, k_hi = max(k_lo - 1, 0), min(k_hi + 1, length - 1)  # a window may reach one cell beyond
            if k_hi - k_lo + 1 < n_in_row:
                continue
            start, step = (r0 + k_lo * d_row) * width + c0 + k_lo * d_col, d_row * width + d_col
            total = 0
            for k in range(k_hi - k_lo + 1):
                total += board[start + k * step]
                if k >= n_in_row:
                    total -= board[start + (k - n_in_row) * step]     # the cell that left the window
                if k >= short and (total == short or total == -short):
                    for back in range(n_in_row):                       # mark the window's empty cell
                        cell = start + (k - back) * step
                        if board[cell] == 0:
                            if total == short:
                                first[b, cell] = True
                            else:
                                second[b, cell] = True
