"""A perfect Connect Four solver (weak: win, draw or loss), for labelling positions with their game-theoretic value.

Used by `zeroforge bench tactics --game connect4` to measure how often a player keeps a position's outcome; it is
not a player (from the empty board a solve takes far too long without an opening book).

Representation (one position = three int64 numbers): bit `7 * column + height` is the cell `height` rows above the
bottom of `column` (height 0..5; bit 6 of each column stays empty as a separator, so shifts never carry a line
from one column into the next). `mine` holds the discs of the side to move, `mask` all discs, `moves` the number of
discs. 49 bits fit an int64, so the kernels use signed arithmetic (bits shifted past bit 63 are dropped; every
result is masked to the board before use).

Search: negamax with alpha-beta over values in {-1, 0, +1} (the side to move's view: loss, draw, win). A node first
takes an immediate win, then keeps only the moves that do not hand the opponent an immediate win (a double threat
is a loss at once), orders them by how many winning cells they create (centre first on ties), and remembers
bounds in a transposition table keyed by `mine + mask` (unique per position). The kernels are compiled in each
process on first use (about 5 s; see `shared.search.jit.recursive_kernel`). Every search has a node budget; a
position whose search runs past it is reported as unknown instead of guessed.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import recursive_kernel
from shared.search.solved import DRAW, ILLEGAL, LOSS, UNKNOWN, WIN

WIDTH, HEIGHT = 7, 6
#: Node budget of one search of `move_values` (one per column) when none is given (about 0.12 s of one core: ~40M
#: nodes/s measured).
DEFAULT_MAX_NODES = 5_000_000

_BOTTOM = sum(1 << (7 * c) for c in range(WIDTH))                 # the bottom cell of each column
_BOARD = _BOTTOM * ((1 << HEIGHT) - 1)                            # every playable cell
_ORDER = np.array([3, 2, 4, 1, 5, 0, 6], np.int64)                # centre first
_TABLE_BITS = 22


@recursive_kernel
def _popcount(x):
    count = 0
    while x != 0:
        x &= x - 1
        count += 1
    return count


@recursive_kernel
def _column_bits(column):
    return ((1 << HEIGHT) - 1) << (7 * column)


@recursive_kernel
def _winning_cells(discs, mask):
    """Empty cells where one more disc of `discs` completes four in a row (any of the four directions)."""
    r = (discs << 1) & (discs << 2) & (discs << 3)                # vertical: three below
    for shift in (7, 6, 8):                                       # horizontal, the two diagonals
        pair = (discs << shift) & (discs << (2 * shift))
        r |= pair & (discs << (3 * shift))
        r |= pair & (discs >> shift)
        pair = (discs >> shift) & (discs >> (2 * shift))
        r |= pair & (discs << shift)
        r |= pair & (discs >> (3 * shift))
    return r & (_BOARD ^ mask)


@recursive_kernel
def _playable(mask):
    """The landing cell of every column that is not full."""
    return (mask + _BOTTOM) & _BOARD


@recursive_kernel
def _negamax(mine, mask, moves, alpha, beta, keys, lows, highs, nodes, max_nodes, cand, score):
    """Value of the position for the side to move, in [alpha, beta]-bounded negamax; the side to move has no
    immediate win (the caller checked). nodes[0] counts nodes; past max_nodes nodes[1] is set and the value is
    meaningless. cand, score [43, 7] int64: each ply's move list (row `moves`: one row per frame of the recursion)."""
    nodes[0] += 1
    if nodes[0] > max_nodes:
        nodes[1] = 1
        return 0
    playable = _playable(mask)
    theirs = mine ^ mask
    threats = _winning_cells(theirs, mask)
    forced = playable & threats
    if forced != 0:
        if forced & (forced - 1) != 0:
            return -1                                             # two cells to block at once
        playable = forced
    safe = playable & ~(threats >> 1)                             # never play just below an opponent's winning cell
    if safe == 0:
        return -1
    if moves >= WIDTH * HEIGHT - 2:
        return 0                                                  # no win is left for either side
    key = mine + mask
    slot = key & ((1 << _TABLE_BITS) - 1)
    if keys[slot] == key:
        low, high = lows[slot], highs[slot]
        if low >= beta:
            return low
        if high <= alpha:
            return high
        if low > alpha:
            alpha = low
        if high < beta:
            beta = high
        if alpha >= beta:
            return alpha
    alpha0, beta0 = alpha, beta
    # order the safe moves: most winning cells created first, centre first on ties (insertion sort of <= 7)
    ply_cand, ply_score = cand[moves], score[moves]
    count = 0
    for i in range(WIDTH):
        move = safe & _column_bits(_ORDER[i])
        if move != 0:
            s = _popcount(_winning_cells(mine | move, mask))
            j = count
            while j > 0 and ply_score[j - 1] < s:
                ply_cand[j] = ply_cand[j - 1]
                ply_score[j] = ply_score[j - 1]
                j -= 1
            ply_cand[j] = move
            ply_score[j] = s
            count += 1
    best = -1
    for i in range(count):
        move = ply_cand[i]
        value = -_negamax(theirs, mask | move, moves + 1, -beta, -alpha, keys, lows, highs, nodes, max_nodes, cand,
                          score)
        if nodes[1] != 0:
            return 0
        if value > best:
            best = value
        if value > alpha:
            alpha = value
        if alpha >= beta:
            break
    if keys[slot] != key:
        keys[slot] = key
        lows[slot] = -1
        highs[slot] = 1
    if best <= alpha0:
        highs[slot] = min(highs[slot], best)
    elif best >= beta0:
        lows[slot] = max(lows[slot], best)
    else:
        lows[slot] = best
        highs[slot] = best
    return best


@recursive_kernel
def _solve(mine, mask, moves, keys, lows, highs, nodes, max_nodes, cand, score):
    """Exact value of a position without an immediate win for the side to move: two null-window searches."""
    if _negamax(mine, mask, moves, 0, 1, keys, lows, highs, nodes, max_nodes, cand, score) >= 1:
        return 1
    if nodes[1] != 0:
        return 0
    return 0 if _negamax(mine, mask, moves, -1, 0, keys, lows, highs, nodes, max_nodes, cand, score) >= 0 else -1


@recursive_kernel
def _move_values(mine, mask, moves, keys, lows, highs, max_nodes, out, nodes, cand, score):
    """Value of each of the 7 columns for the side to move into out [7] int64 (ILLEGAL on entry; see
    `move_values`); nodes [2] int64, cand and score [43, 7] int64: scratch."""
    playable = _playable(mask)
    wins = _winning_cells(mine, mask)
    for column in range(WIDTH):
        move = playable & _column_bits(column)
        if move == 0:
            continue
        if move & wins != 0:
            out[column] = WIN
            continue
        if moves + 1 == WIDTH * HEIGHT:
            out[column] = DRAW                                    # the last cell, no line completed
            continue
        theirs = mine ^ mask
        child_mask = mask | move
        if _playable(child_mask) & _winning_cells(theirs, child_mask) != 0:
            out[column] = LOSS                                    # the opponent wins at once
            continue
        nodes[0] = 0
        nodes[1] = 0
        value = _solve(theirs, child_mask, moves + 1, keys, lows, highs, nodes, max_nodes, cand, score)
        out[column] = UNKNOWN if nodes[1] != 0 else -value


class Connect4Solver:
    """A solver with its own transposition table (2^22 entries, about 40 MB), kept between calls: the bounds it
    stores are exact facts about positions, so later solves reuse them."""

    def __init__(self, max_nodes: int = DEFAULT_MAX_NODES) -> None:
        if max_nodes < 1:
            raise ValueError(f"max_nodes ({max_nodes}) must be >= 1")
        self.max_nodes = int(max_nodes)
        size = 1 << _TABLE_BITS
        self._keys = np.full(size, -1, np.int64)
        self._lows = np.zeros(size, np.int64)
        self._highs = np.zeros(size, np.int64)
        #: each ply's move list and scores while searching (the kernels allocate nothing)
        self._plies = (np.zeros((WIDTH * HEIGHT + 1, WIDTH), np.int64), np.zeros((WIDTH * HEIGHT + 1, WIDTH), np.int64))

    def move_values(self, board: np.ndarray) -> np.ndarray:
        """Game-theoretic value of every column for the side to move.

        board: [6, 7] int (row 0 at the TOP, as in `shared.games.connect4`): +1 first player, -1 second player,
        0 empty; the side to move follows from the disc counts; the position must not be over.
        Returns [7] int64: WIN (1), DRAW (0) or LOSS (-1) with perfect play after that move, ILLEGAL (-2) for a full
        column, UNKNOWN (-3) when its search ran past the node budget. Raises ValueError for an impossible board.
        """
        mine, mask, moves = encode(board)
        out = np.full(WIDTH, ILLEGAL, np.int64)
        _move_values(mine, mask, moves, self._keys, self._lows, self._highs, self.max_nodes, out,
                     np.zeros(2, np.int64), *self._plies)
        return out

    def state_values(self, state: np.ndarray) -> np.ndarray:
        """`move_values` of one `shared.games.connect4` state [S] int16 (its first 42 entries are the board, row 0
        at the top) -> [7] int64."""
        return self.move_values(np.asarray(state)[: WIDTH * HEIGHT].reshape(HEIGHT, WIDTH))


def encode(board: np.ndarray) -> tuple[int, int, int]:
    """board [6, 7] int (row 0 at the top) -> (mine, mask, moves) bitboards of the side to move (module docstring).
    ValueError if the disc counts are impossible, a disc floats, or the board is full."""
    board = np.asarray(board)
    if board.shape != (HEIGHT, WIDTH):
        raise ValueError(f"a Connect Four board is {HEIGHT}x{WIDTH}, got shape {board.shape}")
    first, second = int((board == 1).sum()), int((board == -1).sum())
    if first - second not in (0, 1):
        raise ValueError(f"impossible disc counts: {first} of the first player, {second} of the second")
    to_move = 1 if first == second else -1
    mine = mask = 0
    for column in range(WIDTH):
        cells = board[::-1, column]                                # bottom first
        height = int(np.count_nonzero(cells))
        if np.any(cells[height:] != 0):
            raise ValueError(f"column {column + 1} has a disc above an empty cell")
        for row in range(height):
            bit = 1 << (7 * column + row)
            mask |= bit
            if cells[row] == to_move:
                mine |= bit
    if first + second == WIDTH * HEIGHT:
        raise ValueError("the board is full")
    return mine, mask, first + second
