"""An exact Othello endgame solver (weak: win, draw or loss), for 8x8 and 6x6 boards.

Used at the root of the match players and of `analyze`/`play` (shared.games.othello.root) once few squares are
empty, and by `zeroforge bench tactics --game othello` to label positions with their game-theoretic value.

Representation: two uint64 bitboards, `own` (the side to move) and `opp`; bit `8 * row + col` is the square at
`row` (from the top) and `col`, on an 8-wide layout whatever the board size (a 6x6 board uses rows and columns 0-5;
`_Board.valid` masks the rest). A disc moved one step along a direction is a shift by `8 * d_row + d_col` bits,
masked to the valid squares and, for a column step, away from the column it would wrap into.

Search: negamax with alpha-beta over values in {-1, 0, +1} (the side to move's view: loss, draw, win; the winner
has more discs, as in shared.games.othello.rules), written as a loop over an explicit stack (numba cannot cache
self-recursive functions, and these kernels run in every worker and `play`). A side without a move passes; the
game ends when neither side can move. Move order: with more than `_FASTEST_FIRST_EMPTIES` empty squares, the moves
that leave the opponent the fewest replies first (corners weighted first); nearer the end, corners, then other
squares, then the squares next to corners. A transposition table keeps proven bounds and the best move of positions
with more than `_TABLE_MIN_EMPTIES` empty squares; its best move is searched first. Every search has a node budget;
a move whose search runs past it is reported as unknown, never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.games.base import F_DONE, F_PLAYER, Game, GameError
from shared.search.jit import borrowing_kernel, inline
from shared.search.solved import ILLEGAL, UNKNOWN

#: Node budget of one `move_values` call when none is given (about a quarter of a second of one core: ~17M nodes/s).
DEFAULT_MAX_NODES = 4_000_000
#: Frames of the explicit stack: 60 moves, each possibly preceded by a pass, and the root.
_STACK = 128
_MAX_MOVES = 32                      # more legal moves than any Othello position has
_FASTEST_FIRST_EMPTIES = 7
_TABLE_MIN_EMPTIES = 6               # positions nearer the end are cheaper to search than to look up
_TABLE_BITS = 19                     # 2^19 entries, about 14 MB per solver
_U1 = np.uint64(1)
_U0 = np.uint64(0)


@inline
def _shift(x, step, mask):
    """x moved `step` bits (positive: towards higher bits), then masked: uint64."""
    if step > 0:
        return (x << np.uint64(step)) & mask
    return (x >> np.uint64(-step)) & mask


@inline
def _moves(own, opp, valid, steps, masks):
    """Squares where the owner of `own` may play (bitboard)."""
    empty = valid & ~(own | opp)
    moves = _U0
    for d in range(8):
        run = _shift(own, steps[d], masks[d]) & opp
        for _ in range(5):
            run |= _shift(run, steps[d], masks[d]) & opp
        moves |= _shift(run, steps[d], masks[d]) & empty
    return moves


@inline
def _flips(own, opp, move, steps, masks):
    """Discs of `opp` that a disc of `own` placed on `move` (one bit) outflanks."""
    flips = _U0
    for d in range(8):
        line = _U0
        x = _shift(move, steps[d], masks[d])
        while x & opp:
            line |= x
            x = _shift(x, steps[d], masks[d])
        if x & own:
            flips |= line
    return flips


@inline
def _count(x):
    """Number of set bits."""
    n = 0
    while x:
        x &= x - _U1
        n += 1
    return n


@inline
def _order(own, opp, moves, empties, valid, steps, masks, priority, out, keys):
    """Write the moves of `moves` (bitboard) into out[:n] in search order (module docstring); returns n.
    keys [_MAX_MOVES] int64: scratch."""
    n = 0
    if empties > _FASTEST_FIRST_EMPTIES:
        rest = moves
        while rest:
            move = rest & (~rest + _U1)
            rest ^= move
            flips = _flips(own, opp, move, steps, masks)
            key = _count(_moves(opp ^ flips, own | move | flips, valid, steps, masks)) * 4
            if move & priority[0]:
                key -= 8
            elif move & priority[2]:
                key += 2
            j = n                                               # insertion sort by key (stable)
            while j > 0 and keys[j - 1] > key:
                keys[j] = keys[j - 1]
                out[j] = out[j - 1]
                j -= 1
            keys[j] = key
            out[j] = move
            n += 1
        return n
    for group in range(3):
        rest = moves & priority[group]
        while rest:
            move = rest & (~rest + _U1)
            rest ^= move
            out[n] = move
            n += 1
    return n


@inline
def _slot(own, opp, shift):
    """Transposition table index of a position: a multiplicative hash of both bitboards, top bits."""
    return np.int64(((own * np.uint64(0x9E3779B97F4A7C15)) ^ (opp * np.uint64(0xC2B2AE3D27D4EB4F))) >> shift)


@borrowing_kernel
def _solve(own, opp, alpha, beta, valid, steps, masks, priority, table_own, table_opp, table_low, table_high,
           table_move, shift, table_min, nodes, max_nodes, stack):
    """Value in {-1, 0, 1} of the position (own to move, not over) for the side to move, alpha-beta bounded by
    [alpha, beta]; nodes[0] counts nodes, and past max_nodes nodes[1] is set and the value is meaningless.

    The transposition table (table_*: [2^bits], index `_slot`, shift = 64 - bits) holds, for positions with more
    than table_min empty squares, proven bounds [low, high] of their value and the best move found; an
    empty entry has own = opp = 0 (no real position). Entries are exact facts, so they are kept between calls.
    stack: `_search_scratch()`, the explicit stack (one entry per frame; searched_low: alpha after the table
    narrowed it, what the stored bound refers to) and the ordering keys; every frame's entries are written before
    they are read."""
    mine, theirs, lows, highs, searched_low, best, best_move, passed, tabled, listed, count, tried, keys = stack
    depth = 0
    mine[0], theirs[0], lows[0], highs[0] = own, opp, alpha, beta
    entering = True
    value = 0                                   # the value of the frame that just finished (its mover's view)
    while True:
        if entering:
            nodes[0] += 1
            if nodes[0] > max_nodes:
                nodes[1] = 1
                return 0
            p, o = mine[depth], theirs[depth]
            moves = _moves(p, o, valid, steps, masks)
            if moves == 0:
                if _moves(o, p, valid, steps, masks) == 0:      # neither side can move: the game is over
                    difference = _count(p) - _count(o)
                    value = 1 if difference > 0 else (-1 if difference < 0 else 0)
                    entering = False
                    continue
                passed[depth] = True                            # a pass: one child, the same position, sides swapped
                mine[depth + 1], theirs[depth + 1] = o, p
                lows[depth + 1], highs[depth + 1] = -highs[depth], -lows[depth]
                depth += 1
                continue
            passed[depth] = False
            empties = _count(valid & ~(p | o))
            hint = _U0
            tabled[depth] = empties > table_min
            if tabled[depth]:
                slot = _slot(p, o, shift)
                if table_own[slot] == p and table_opp[slot] == o:
                    low, high = np.int64(table_low[slot]), np.int64(table_high[slot])
                    if low >= highs[depth] or low == high:
                        value = low
                        entering = False
                        continue
                    if high <= lows[depth]:
                        value = high
                        entering = False
                        continue
                    lows[depth] = max(lows[depth], low)
                    highs[depth] = min(highs[depth], high)
                    hint = table_move[slot]
            searched_low[depth] = lows[depth]
            count[depth] = _order(p, o, moves, empties, valid, steps, masks, priority, listed[depth], keys)
            if hint != _U0:                                     # the table's best move first
                j = 0
                while listed[depth, j] != hint:
                    j += 1
                while j > 0:
                    listed[depth, j] = listed[depth, j - 1]
                    j -= 1
                listed[depth, 0] = hint
            best[depth] = -2
            best_move[depth] = _U0
            tried[depth] = 0
        else:
            if depth == 0:
                return value
            depth -= 1
            child = -value                                      # the child's mover is the opponent: flip the sign
            if passed[depth]:
                value = child
                continue
            if child > best[depth]:
                best[depth] = child
                best_move[depth] = listed[depth, tried[depth] - 1]
            if best[depth] > lows[depth]:
                lows[depth] = best[depth]
            if lows[depth] >= highs[depth] or tried[depth] == count[depth]:
                value = best[depth]
                if tabled[depth]:                               # store what this search proved
                    slot = _slot(mine[depth], theirs[depth], shift)
                    table_own[slot], table_opp[slot] = mine[depth], theirs[depth]
                    table_low[slot] = value if value > searched_low[depth] else -1
                    table_high[slot] = value if value < highs[depth] else 1
                    table_move[slot] = best_move[depth]
                continue
        move = listed[depth, tried[depth]]                      # the next child of this frame
        tried[depth] += 1
        p, o = mine[depth], theirs[depth]
        flips = _flips(p, o, move, steps, masks)
        mine[depth + 1], theirs[depth + 1] = o ^ flips, p | move | flips
        lows[depth + 1], highs[depth + 1] = -highs[depth], -lows[depth]
        depth += 1
        entering = True


def _search_scratch() -> tuple[np.ndarray, ...]:
    """The explicit stack of `_solve` (mine, theirs, lows, highs, searched_low, best, best_move, passed, tabled,
    listed, count, tried: one entry per frame, listed [_STACK, _MAX_MOVES]) and the move-ordering keys."""
    return (np.zeros(_STACK, np.uint64), np.zeros(_STACK, np.uint64), np.zeros(_STACK, np.int64),
            np.zeros(_STACK, np.int64), np.zeros(_STACK, np.int64), np.zeros(_STACK, np.int64),
            np.zeros(_STACK, np.uint64), np.zeros(_STACK, np.bool_), np.zeros(_STACK, np.bool_),
            np.zeros((_STACK, _MAX_MOVES), np.uint64), np.zeros(_STACK, np.int64), np.zeros(_STACK, np.int64),
            np.zeros(_MAX_MOVES, np.int64))


@borrowing_kernel
def _move_values(own, opp, valid, steps, masks, priority, table_own, table_opp, table_low, table_high, table_move,
                 shift, table_min, max_nodes, unknown, out, nodes, stack):
    """out[square] = value of playing on each square of the 8-wide layout and out[64] the pass's value, where that
    is legal (other entries are left as they are); `unknown` where the budget max_nodes, shared by all moves, ran
    out. nodes [2] int64 (zeros on entry): nodes searched, and whether the budget ran out; stack:
    `_search_scratch()`."""
    moves = _moves(own, opp, valid, steps, masks)
    if moves == 0:
        value = _solve(opp, own, -1, 1, valid, steps, masks, priority, table_own, table_opp, table_low, table_high,
                       table_move, shift, table_min, nodes, max_nodes, stack)
        out[64] = unknown if nodes[1] else -value
        return
    rest = moves
    while rest:
        move = rest & (~rest + _U1)
        rest ^= move
        square = 0
        while (_U1 << np.uint64(square)) != move:
            square += 1
        if nodes[1]:
            value = unknown
        else:
            flips = _flips(own, opp, move, steps, masks)
            child = _solve(opp ^ flips, own | move | flips, -1, 1, valid, steps, masks, priority, table_own, table_opp,
                           table_low, table_high, table_move, shift, table_min, nodes, max_nodes, stack)
            value = unknown if nodes[1] else -child
        out[square] = value


@dataclass(frozen=True)
class _Board:
    """Masks of one board size (module docstring): valid squares, per-direction steps and masks, move groups."""

    size: int
    valid: np.uint64
    steps: np.ndarray          # [8] int64
    masks: np.ndarray          # [8] uint64
    priority: np.ndarray       # [3] uint64: corners, ordinary squares, squares next to a corner

    @staticmethod
    def of(size: int) -> "_Board":
        def bits(squares) -> np.uint64:
            return np.uint64(sum(1 << (8 * r + c) for r, c in squares))

        every = [(r, c) for r in range(size) for c in range(size)]
        valid = bits(every)
        steps, masks = [], []
        for d_row in (-1, 0, 1):
            for d_col in (-1, 0, 1):
                if (d_row, d_col) == (0, 0):
                    continue
                steps.append(8 * d_row + d_col)
                # a step towards higher columns must not land in column 0 (wrapped from column 7), and back
                landing = [(r, c) for r, c in every if not (d_col == 1 and c == 0) and not (d_col == -1 and c == 7)]
                masks.append(bits(landing))
        last = size - 1
        corners = {(0, 0), (0, last), (last, 0), (last, last)}
        near = {(r + dr, c + dc) for r, c in corners for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                if 0 <= r + dr < size and 0 <= c + dc < size} - corners
        ordinary = set(every) - corners - near
        return _Board(size, valid, np.array(steps, np.int64), np.array(masks, np.uint64),
                      np.array([bits(corners), bits(ordinary), bits(near)], np.uint64))


class OthelloSolver:
    """Exact win/draw/loss values of the moves of Othello positions (8x8 or 6x6), within a node budget; with its
    own transposition table, kept between calls (its bounds are exact facts about positions)."""

    def __init__(self, game: Game, max_nodes: int = DEFAULT_MAX_NODES,
                 table_min_empties: int = _TABLE_MIN_EMPTIES) -> None:
        """`max_nodes`: the node budget of one `move_values` call; `table_min_empties`: positions with more empty
        squares than this use the transposition table (the default suits play; 0 puts every position in the table
        and 64 none, which the tests use to check the table against plain alpha-beta and a brute force)."""
        if getattr(game, "family", None) != "othello":
            raise GameError(f"the Othello solver solves Othello positions, not {game.name}")
        if max_nodes < 1:
            raise ValueError(f"max_nodes ({max_nodes}) must be >= 1")
        if not 0 <= table_min_empties <= 64:
            raise ValueError(f"table_min_empties ({table_min_empties}) must be within [0, 64]")
        self.game, self.max_nodes = game, int(max_nodes)
        self.table_min_empties = int(table_min_empties)
        #: Nodes searched by the last `move_values` call.
        self.last_nodes = 0
        size = 1 << _TABLE_BITS
        self._table = (np.zeros(size, np.uint64), np.zeros(size, np.uint64), np.zeros(size, np.int8),
                       np.zeros(size, np.int8), np.zeros(size, np.uint64))
        self._board = _Board.of(game.height)
        self._scratch = _search_scratch()
        squares = np.arange(game.num_cells)
        self._bit_of_action = (squares // game.width) * 8 + squares % game.width      # [H*W] int64

    def empties(self, state: np.ndarray) -> int:
        """Empty squares of one state [S] int16."""
        return int(np.count_nonzero(np.asarray(state)[: self.game.num_cells] == 0))

    def move_values(self, state: np.ndarray) -> np.ndarray:
        """Game-theoretic value of every action for the side to move of one non-terminal state [S] int16.

        Returns [A] int64 (A = H*W + 1, the last action is the pass): WIN (1), DRAW (0) or LOSS (-1) with perfect
        play after that move, ILLEGAL (-2) for an action that is not legal, UNKNOWN (-3) for a move whose search
        ran past the node budget (shared by the moves of one call). Raises GameError for a finished game.
        """
        game = self.game
        state = np.asarray(state, np.int16).reshape(game.state_size)
        if state[game.num_cells + F_DONE]:
            raise GameError("the game is over: there is no move to solve")
        cells = state[: game.num_cells]
        player = int(state[game.num_cells + F_PLAYER])
        bits = np.left_shift(np.uint64(1), self._bit_of_action.astype(np.uint64))
        own = np.bitwise_or.reduce(np.where(cells == player, bits, np.uint64(0)))
        opp = np.bitwise_or.reduce(np.where(cells == -player, bits, np.uint64(0)))
        layout = np.full(65, ILLEGAL, np.int64)                  # 64 squares of the 8-wide layout, then the pass
        board = self._board
        nodes = np.zeros(2, np.int64)
        _move_values(np.uint64(own), np.uint64(opp), board.valid, board.steps, board.masks, board.priority,
                     *self._table, np.uint64(64 - _TABLE_BITS), self.table_min_empties, self.max_nodes, UNKNOWN, layout,
                     nodes, self._scratch)
        self.last_nodes = int(nodes[0])
        return np.concatenate([layout[self._bit_of_action], layout[64:]])
