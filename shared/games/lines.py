"""Batched "n in a row" detection (tic-tac-toe, Connect Four, Gomoku), compiled with numba.

`completes_line`: only lines through the last move can have been completed by it, so the check walks the
4 line directions through that cell, at most n - 1 cells each way: O(B * n) work instead of scanning whole
boards. "n OR MORE" (freestyle, overlines included) wins.

`completion_cells`: the empty cells where each player would complete n or more in a row by placing a stone there
(its immediate winning cells, ignoring whose turn it is and gravity), found on row bit masks: one uint64 per
board row and player, shifted and ANDed along the four line directions (a few hundred word operations per board,
whatever the number of stones).

`line_step_stored`: Game.step_stored (one move on positions kept in the search's store) for n-in-a-row games,
compiled; the numpy rules of the games stay the reference (tests compare them move for move).

`line_move_outcomes`: Game.move_outcomes for n-in-a-row games, stones placed anywhere (gravity=False) or dropped
into columns (gravity=True, Connect Four), from the completion cells, in one compiled pass.

`same_colour_run` is the plain numpy building block the first version used (kept for reference and tests).
Kernels are compiled on first use and cached on disk.
"""
from __future__ import annotations

import numba
import numpy as np

from shared.games.base import F_DONE, F_LAST, F_PLAYER, F_PLY, F_WINNER, NUM_FIELDS
from shared.games.compiled import borrowing_jit

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
    out = np.zeros(played.shape[0], np.bool_)
    _completes_line(np.ascontiguousarray(cells), played, height, width, n_in_row, out)
    return out


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


@borrowing_jit
def _completes_line(cells, played, height, width, n_in_row, out):
    for b in range(cells.shape[0]):
        out[b] = _line_through(cells[b], played[b], height, width, n_in_row)


def empty_cells(states: np.ndarray, num_cells: int, count: int) -> np.ndarray:
    """The legal moves of the grid games whose moves are empty cells: states [B, S] int16 of boards of `num_cells`
    cells -> [B, count] bool, whether each of the first `count` cells is empty (all False once the game is over).
    In-a-row games ask for every cell, Connect Four for its top row. One compiled pass (numpy's comparison of a
    strided slice and the mask of finished games cost about 60 us for 1024 8x8 boards, this about 5)."""
    states = np.ascontiguousarray(states, np.int16)
    out = np.empty((states.shape[0], count), np.bool_)
    _empty_cells(states, num_cells, out)
    return out


@borrowing_jit
def _empty_cells(states, num_cells, out):
    for b in range(states.shape[0]):
        live = states[b, num_cells + F_DONE] == 0
        for c in range(out.shape[1]):
            out[b, c] = live and states[b, c] == 0


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


@borrowing_jit
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
    complete n_in_row or more in a line (overlines count, as in the rules): some window of n cells along a line
    through the cell holds n - 1 of that player's stones and the cell itself. Computed on row bit masks.
    """
    _check_board(height, width, n_in_row)
    cells = np.ascontiguousarray(cells, np.int16)
    first = np.zeros(cells.shape, bool)
    second = np.zeros(cells.shape, bool)
    _completion_cells(cells, height, width, n_in_row, first, second, *_row_scratch(height, n_in_row))
    return first, second


def line_move_outcomes(states: np.ndarray, height: int, width: int, n_in_row: int, gravity: bool) -> np.ndarray:
    """Move outcomes for the side to move (see Game.move_outcomes): states [B, S] int16 -> [B, A] int8, with
    A = H*W cells (gravity=False) or W columns (gravity=True, boards of at most 64 cells).

    +1: the move completes n in a row. -1: it does not, and the opponent then has a winning cell: another of its
    current winning cells (a stone never removes one except by filling it), or, with gravity, the cell just above
    the disc (whose lines the disc below does not touch). Exact for freestyle n-in-a-row rules. One compiled pass
    per position: boards of at most 64 cells on one uint64 bitboard per player, larger ones on row bit masks.
    """
    _check_board(height, width, n_in_row)
    if gravity and height * width > 64:
        raise ValueError(f"line_move_outcomes: gravity boards of at most 64 cells, got {height}x{width}")
    num_actions = width if gravity else height * width
    out = np.zeros((states.shape[0], num_actions), np.int8)
    states = np.ascontiguousarray(states, np.int16)
    if height * width <= 64:
        words = [np.empty(1, np.uint64) for _ in range(3)]
        _bitboard_outcomes(states, height, width, n_in_row, gravity, out, np.zeros(2 * n_in_row - 1, np.uint64),
                           np.empty(n_in_row, np.uint64), np.empty(n_in_row, np.uint64), *words)
    else:
        _row_mask_outcomes(states, height, width, n_in_row, out, *_row_scratch(height, n_in_row))
    return out


#: Widest board the row bit masks hold (one uint64 per row, with room for the shifts), and the longest line.
MAX_MASK_WIDTH = 56
MAX_MASK_LINE = 8


def _check_board(height: int, width: int, n_in_row: int) -> None:
    if not (1 <= width <= MAX_MASK_WIDTH and height >= 1 and 2 <= n_in_row <= MAX_MASK_LINE):
        raise ValueError(f"line masks: board {height}x{width} with {n_in_row} in a row is out of range (width 1 to "
                         f"{MAX_MASK_WIDTH}, 2 to {MAX_MASK_LINE} in a row)")


# ----- bit-mask kernels --------------------------------------------------------------------------------------
# Two layouts, the same rule. A player's winning cells are the empty cells c such that, along one of the four
# line directions and for some j in [0, n), the j cells before c and the n - 1 - j cells after c hold that
# player's stones: runs after[j] (before[j]) = the cells whose next j neighbours after (before) them are the
# player's, built as ANDs of shifted stone masks, then OR over j of before[j] AND after[n - 1 - j].
# - Bitboards (boards of at most 64 cells): bit i = cell i; the k-th neighbour along (d_row, d_col) is a shift by
#   k * (d_row * W + d_col), masked to the cells whose neighbour's column is on the board.
# - Row masks (larger boards): one uint64 per row, bit c = column c, between n - 1 zero rows above and below
#   (neighbours off the board read 0 without a test); the neighbour is a row offset and a bit shift.

@numba.njit(cache=True, nogil=True, inline="always")
def _popcount(m):
    """Set bits of a uint64 (SWAR)."""
    m = m - ((m >> np.uint64(1)) & np.uint64(0x5555555555555555))
    m = (m & np.uint64(0x3333333333333333)) + ((m >> np.uint64(2)) & np.uint64(0x3333333333333333))
    m = (m + (m >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((m * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True, inline="always")
def _lowest_bit(m):
    """Index of the lowest set bit of a non-zero uint64."""
    return _popcount((m & (~m + np.uint64(1))) - np.uint64(1))


@numba.njit(cache=True, nogil=True, inline="always")
def _write_outcomes(own, opponent, empty, word_bits, out_row):
    """Move outcomes of a board without gravity into out_row [H*W] int8 (zeros on entry), from the winning cells
    of the side to move (`own`) and of the opponent, and the empty cells: words [K] uint64, cell = word *
    word_bits + bit. +1 on own winning cells; -1 on the other empty cells when the opponent keeps a winning cell
    after the move (it has two, or one elsewhere); else 0."""
    one = np.uint64(1)
    threats = 0
    for w in range(opponent.shape[0]):
        threats += _popcount(opponent[w])
    if threats > 0:
        for w in range(empty.shape[0]):
            for c in range(word_bits):                                 # branch-free: -1 on every empty cell
                out_row[w * word_bits + c] = -np.int8((empty[w] >> np.uint64(c)) & one)
        if threats == 1:
            for w in range(opponent.shape[0]):
                if opponent[w]:
                    out_row[w * word_bits + _lowest_bit(opponent[w])] = 0   # blocks the only threat
    for w in range(own.shape[0]):
        rest = own[w]
        while rest:
            out_row[w * word_bits + _lowest_bit(rest)] = 1
            rest &= rest - one


@numba.njit(cache=True, nogil=True, inline="always")
def _load_bitboard(board, num_cells):
    """One flat board [H*W] (H*W <= 64) as bitboards (bit i = cell i): -> (first player's, second player's)."""
    first, second = np.uint64(0), np.uint64(0)
    for i in range(num_cells):                                         # branch-free: one cell at a time
        v = board[i]
        first |= np.uint64(v == 1) << np.uint64(i)
        second |= np.uint64(v == -1) << np.uint64(i)
    return first, second


@numba.njit(cache=True, nogil=True, inline="always")
def _neighbour_bits(stones, k, d_row, d_col, width, column_masks, pad):
    """The cells whose k-th neighbour along (d_row, d_col) holds a stone of the bitboard `stones`: a shift by
    k * (d_row * W + d_col), keeping the cells whose neighbour's column c + k*d_col is on the board
    (column_masks[pad + k*d_col]); a neighbour above the first or below the last row is shifted out."""
    delta = k * (d_row * width + d_col)
    if delta >= 64 or -delta >= 64:
        return np.uint64(0)
    moved = stones >> np.uint64(delta) if delta >= 0 else stones << np.uint64(-delta)
    return moved & column_masks[pad + k * d_col]


@numba.njit(cache=True, nogil=True, inline="always")
def _bitboard_wins(stones, empty, width, n_in_row, column_masks, after, before):
    """The winning cells (bitboard) of the player of the bitboard `stones`; after, before [n] uint64 scratch."""
    pad, short = n_in_row - 1, n_in_row - 1
    found = np.uint64(0)
    for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
        after[0], before[0] = ~np.uint64(0), ~np.uint64(0)
        for j in range(1, n_in_row):
            after[j] = after[j - 1] & _neighbour_bits(stones, j, d_row, d_col, width, column_masks, pad)
            before[j] = before[j - 1] & _neighbour_bits(stones, -j, d_row, d_col, width, column_masks, pad)
        for j in range(n_in_row):
            found |= before[j] & after[short - j]
    return found & empty


@borrowing_jit
def _bitboard_outcomes(states, height, width, n_in_row, gravity, out, column_masks, after, before, own, opponent,
                       empty):
    """out[b] = the move outcomes of states[b], boards of at most 64 cells (rules in `line_move_outcomes`); rows of
    finished games, and of boards where neither player has n - 1 stones, stay 0. Scratch: column_masks
    [2n - 1] uint64 (zeros on entry), after, before [n] uint64, own, opponent, empty [1] uint64.

    The common line lengths get a copy of the loop each, with the length a constant: the compiler then unrolls the
    line loops and keeps the runs in registers (measured, 1024 positions 10-14 plies in, ns a position: gomoku-8x8-5
    159-204 -> 124-136, Connect Four 86-152 -> 76-102, tic-tac-toe 98-114 -> 63-71; the row masks of gomoku-15
    1,858-2,510 -> 861-983)."""
    if n_in_row == 5:
        _bitboard_outcome_rows(states, height, width, 5, gravity, out, column_masks, after, before, own, opponent,
                               empty)
    elif n_in_row == 4:
        _bitboard_outcome_rows(states, height, width, 4, gravity, out, column_masks, after, before, own, opponent,
                               empty)
    elif n_in_row == 3:
        _bitboard_outcome_rows(states, height, width, 3, gravity, out, column_masks, after, before, own, opponent,
                               empty)
    else:
        _bitboard_outcome_rows(states, height, width, n_in_row, gravity, out, column_masks, after, before, own,
                               opponent, empty)


@numba.njit(cache=True, nogil=True, inline="always")
def _bitboard_outcome_rows(states, height, width, n_in_row, gravity, out, column_masks, after, before, own, opponent,
                           empty):
    """The body of `_bitboard_outcomes`."""
    num_cells = height * width
    pad, one = n_in_row - 1, np.uint64(1)
    board_bits = ~np.uint64(0) if num_cells == 64 else (one << np.uint64(num_cells)) - one
    for o in range(-pad, pad + 1):                                     # [pad + o]: cells with 0 <= c + o < W
        for i in range(num_cells):
            if 0 <= i % width + o < width:
                column_masks[pad + o] |= one << np.uint64(i)
    bottom_row = board_bits ^ ((one << np.uint64(num_cells - width)) - one)
    for b in range(states.shape[0]):
        board = states[b]
        if board[num_cells + F_DONE] != 0:
            continue
        first, second = _load_bitboard(board, num_cells)
        if max(_popcount(first), _popcount(second)) < n_in_row - 1:
            continue                                                   # too few stones for any winning cell
        empty[0] = board_bits & ~(first | second)
        wins_first = _bitboard_wins(first, empty[0], width, n_in_row, column_masks, after, before)
        wins_second = _bitboard_wins(second, empty[0], width, n_in_row, column_masks, after, before)
        own[0], opponent[0] = (wins_first, wins_second) if board[num_cells + F_PLAYER] == 1 else (wins_second,
                                                                                                 wins_first)
        if not gravity:
            _write_outcomes(own, opponent, empty, num_cells, out[b])
            continue
        # Gravity: a disc lands on an empty cell of the bottom row or above a disc (the cell W further on); after a
        # non-winning disc the opponent wins at another landing cell or at the cell just above it (W before).
        landing = empty[0] & (((~empty[0] & board_bits) >> np.uint64(width)) | bottom_row)
        threats = _popcount(opponent[0] & landing)
        rest = landing
        while rest:
            cell = _lowest_bit(rest)
            rest &= rest - one
            bit = one << np.uint64(cell)
            if own[0] & bit:
                out[b, cell % width] = 1
            elif threats - (1 if opponent[0] & bit else 0) > 0 or (opponent[0] & (bit >> np.uint64(width))):
                out[b, cell % width] = -1


@numba.njit(cache=True, nogil=True, inline="always")
def _load_rows(board, height, width, pad, stones, empty):
    """Row masks of one flat board [H*W] into stones[0] (first player), stones[1] (second) at padded rows pad..pad+H-1,
    and empty [H]. Returns (the larger of the players' stone counts, first and last row holding a stone)."""
    full = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    count_first, count_second, row_lo, row_hi = 0, 0, height, -1
    for r in range(height):
        m1, m2 = np.uint64(0), np.uint64(0)
        for c in range(width):                                         # branch-free: one cell at a time
            v = board[r * width + c]
            m1 |= np.uint64(v == 1) << np.uint64(c)
            m2 |= np.uint64(v == -1) << np.uint64(c)
        stones[0, pad + r], stones[1, pad + r] = m1, m2
        empty[r] = full & ~(m1 | m2)
        count_first += _popcount(m1)
        count_second += _popcount(m2)
        if m1 | m2:
            row_lo, row_hi = min(row_lo, r), r
    return max(count_first, count_second), row_lo, row_hi


@numba.njit(cache=True, nogil=True, inline="always")
def _row_neighbours(stones, row, shift, full):
    """The cells of a row whose neighbour in padded row `row`, column c + shift, holds a stone of `stones`."""
    if shift > 0:
        return stones[row] >> np.uint64(shift)
    if shift < 0:
        return (stones[row] << np.uint64(-shift)) & full
    return stones[row]


@numba.njit(cache=True, nogil=True, inline="always")
def _line_wins(stones, row, d_row, d_col, short, full, after):
    """The cells of padded row `row` that complete short + 1 or more in a line along (d_row, d_col) for the player
    of `stones` (empty or not): j stones before them and short - j after, for some j. after [short + 1] scratch."""
    run = full
    after[0] = full
    for j in range(1, short + 1):
        run &= _row_neighbours(stones, row + j * d_row, j * d_col, full)
        after[j] = run
    found = np.uint64(0)
    run = full                                                         # now the runs before the cell
    for j in range(short + 1):
        found |= run & after[short - j]
        if j < short:
            run &= _row_neighbours(stones, row - (j + 1) * d_row, -(j + 1) * d_col, full)
    return found


@numba.njit(cache=True, nogil=True, inline="always")
def _row_wins(stones, pad, empty, height, width, n_in_row, lo, hi, after, wins):
    """wins [H] = the winning cells (row masks) of the player of the padded row masks `stones` [H + 2 * pad];
    only rows lo <= r < hi can hold one (the others get 0). after [n] uint64 scratch."""
    full = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    short = n_in_row - 1
    for r in range(height):
        wins[r] = np.uint64(0)
    for r in range(lo, hi):
        found = _line_wins(stones, pad + r, 0, 1, short, full, after)           # the four directions, spelt out so
        found |= _line_wins(stones, pad + r, 1, 0, short, full, after)          # that their shifts are constants
        found |= _line_wins(stones, pad + r, 1, 1, short, full, after)
        found |= _line_wins(stones, pad + r, 1, -1, short, full, after)
        wins[r] = found & empty[r]


@numba.njit(cache=True, nogil=True, inline="always")
def _board_row_wins(board, height, width, n_in_row, stones, empty, wins, after):
    """Both players' winning cells of one flat board [H*W] into wins[0] (first player), wins[1] (second), row
    masks; fills stones and empty. Returns False when neither player has n - 1 stones (wins not written)."""
    pad = n_in_row - 1
    most, row_lo, row_hi = _load_rows(board, height, width, pad, stones, empty)
    if most < n_in_row - 1:
        return False
    lo, hi = max(row_lo - pad, 0), min(row_hi + pad + 1, height)       # a winning cell is near a stone's row
    _row_wins(stones[0], pad, empty, height, width, n_in_row, lo, hi, after, wins[0])
    _row_wins(stones[1], pad, empty, height, width, n_in_row, lo, hi, after, wins[1])
    return True


def _row_scratch(height: int, n_in_row: int) -> tuple[np.ndarray, ...]:
    """Scratch of the row-mask kernels: (stones [2, H + 2 * (n - 1)] with zero padding rows, empty [H], wins [2, H],
    after [n]) uint64."""
    pad = n_in_row - 1
    return (np.zeros((2, height + 2 * pad), np.uint64), np.empty(height, np.uint64), np.empty((2, height), np.uint64),
            np.empty(n_in_row, np.uint64))


@borrowing_jit
def _completion_cells(cells, height, width, n_in_row, first_out, second_out, stones, empty, wins, after):
    for b in range(cells.shape[0]):
        if not _board_row_wins(cells[b], height, width, n_in_row, stones, empty, wins, after):
            continue
        for r in range(height):
            for c in range(width):
                first_out[b, r * width + c] = (wins[0, r] >> np.uint64(c)) & np.uint64(1)
                second_out[b, r * width + c] = (wins[1, r] >> np.uint64(c)) & np.uint64(1)


@borrowing_jit
def _row_mask_outcomes(states, height, width, n_in_row, out, stones, empty, wins, after):
    """`_bitboard_outcomes` without gravity for boards of any size, on row masks (scratch from `_row_scratch`); a
    copy of the loop for each common line length, as there."""
    if n_in_row == 5:
        _row_mask_outcome_rows(states, height, width, 5, out, stones, empty, wins, after)
    elif n_in_row == 4:
        _row_mask_outcome_rows(states, height, width, 4, out, stones, empty, wins, after)
    else:
        _row_mask_outcome_rows(states, height, width, n_in_row, out, stones, empty, wins, after)


@numba.njit(cache=True, nogil=True, inline="always")
def _row_mask_outcome_rows(states, height, width, n_in_row, out, stones, empty, wins, after):
    """The body of `_row_mask_outcomes`."""
    num_cells = height * width
    for b in range(states.shape[0]):
        board = states[b]
        if board[num_cells + F_DONE] != 0:
            continue
        if not _board_row_wins(board, height, width, n_in_row, stones, empty, wins, after):
            continue                                                   # too few stones for any winning cell
        mover = 0 if board[num_cells + F_PLAYER] == 1 else 1
        _write_outcomes(wins[mover], wins[1 - mover], empty, width, out[b])
