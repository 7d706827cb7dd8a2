"""Compiled random playouts for Othello: the rollout policy of the pure-MCTS baseline (`pure-mcts:N`).

The policy is the plain uniform one of `shared.search.rollout.RolloutEvaluator.random_playouts`: the side to move
plays a uniformly random legal action, where a pass is the only legal action when it has no placement. The rules
are those of `shared.games.othello.rules`, move for move: a placement outflanks at least one straight line of opponent
discs and flips every outflanked line; the game ends right after a move that leaves neither side a placement
(full board, one colour gone, or both blocked) or after two passes in a row; the side with more discs wins.

One call plays M independent playouts in a compiled loop (no numpy call per move). Boards are flat [M, H*W] with
+1 black (first player), -1 white, 0 empty, row 0 at the top; actions are cell indices row * W + col, and H*W is
the pass, as in the game.
"""
from __future__ import annotations

import numpy as np

from shared.games.compiled import borrowing_jit


@borrowing_jit
def _seed(seed: int) -> None:
    """Seed numba's own generator (separate from numpy's) for the playouts of this thread."""
    np.random.seed(seed)


@borrowing_jit
def _flank_length(board, height, width, row, col, d_row, d_col, player) -> int:
    """Opponent discs outflanked along one direction by `player` playing on (row, col): a run of opponent discs
    that ends in an own disc; 0 when the run is empty or ends in an empty cell or the edge."""
    r, c, run = row + d_row, col + d_col, 0
    while 0 <= r < height and 0 <= c < width:
        value = board[r * width + c]
        if value == -player:
            run += 1
        elif value == player:
            return run
        else:
            return 0
        r += d_row
        c += d_col
    return 0


@borrowing_jit
def _is_placement(board, height, width, cell, player) -> bool:
    """Whether `player` may place on `cell`: empty and outflanking at least one line."""
    if board[cell] != 0:
        return False
    row, col = cell // width, cell % width
    for d_row in range(-1, 2):
        for d_col in range(-1, 2):
            if (d_row != 0 or d_col != 0) and _flank_length(board, height, width, row, col, d_row, d_col, player) > 0:
                return True
    return False


@borrowing_jit
def _can_place(board, height, width, player) -> bool:
    """Whether `player` has any placement on the board."""
    for cell in range(height * width):
        if _is_placement(board, height, width, cell, player):
            return True
    return False


@borrowing_jit
def legal_actions(board, height, width, player, out) -> int:
    """The legal actions of an unfinished position, in increasing order, written to out[:count]; returns count.

    board [H*W] int8, player +1/-1 (to move), out [H*W + 1] int64 (overwritten). The placements, or only the
    pass (H*W) when there is none, as `Othello.legal_mask` gives them.
    """
    count = 0
    for cell in range(height * width):
        if _is_placement(board, height, width, cell, player):
            out[count] = cell
            count += 1
    if count == 0:
        out[0] = height * width
        count = 1
    return count


@borrowing_jit
def play(board, height, width, action, player, passes):
    """One legal action of `player` in an unfinished position, as `Othello.step` plays it; board changed in place.

    board [H*W] int8; action a cell or H*W (pass); player +1/-1; passes the consecutive passes before the move.
    Returns (player to move next, consecutive passes after the move, whether the game is now over).
    """
    if action == height * width:
        passes += 1
    else:
        row, col = action // width, action % width
        for d_row in range(-1, 2):
            for d_col in range(-1, 2):
                if d_row == 0 and d_col == 0:
                    continue
                run = _flank_length(board, height, width, row, col, d_row, d_col, player)
                for k in range(1, run + 1):
                    board[(row + k * d_row) * width + col + k * d_col] = player
        board[action] = player
        passes = 0
    done = passes >= 2 or not (_can_place(board, height, width, -player) or _can_place(board, height, width, player))
    return -player, passes, done


def play_out(boards: np.ndarray, to_move: np.ndarray, passes: np.ndarray, height: int, width: int,
             record: np.ndarray) -> None:
    """Play every unfinished position to its end with uniformly random legal actions, boards changed in place.

    boards [M, H*W] int8, to_move [M] int64 (+1/-1), passes [M] int64 (consecutive passes so far); record
    [M, L] int64: the first L actions of each playout are written there (entries after the end are left as they
    are; L = 0 records nothing). Returns nothing.
    """
    _play_out(boards, to_move, passes, height, width, record, np.empty(height * width + 1, np.int64))


@borrowing_jit
def _play_out(boards, to_move, passes, height, width, record, actions):
    """`play_out`; actions [H*W + 1] int64: scratch."""
    m = boards.shape[0]
    for g in range(m):
        board = boards[g]
        player, passed, done, ply = to_move[g], passes[g], False, 0
        while not done:
            count = legal_actions(board, height, width, player, actions)
            action = actions[np.random.randint(count)]
            if ply < record.shape[1]:
                record[g, ply] = action
            player, passed, done = play(board, height, width, action, player, passed)
            ply += 1


def disc_winners(boards: np.ndarray) -> np.ndarray:
    """Winner by disc count, as the rules score a finished game: boards [M, H*W] int8 -> [M] int64 (+1 black
    has more discs, -1 white, 0 equal)."""
    out = np.empty(boards.shape[0], np.int64)
    _disc_winners(boards, out)
    return out


@borrowing_jit
def _disc_winners(boards, out):
    m, nn = boards.shape
    for g in range(m):
        total = 0
        for c in range(nn):
            total += boards[g, c]
        out[g] = 1 if total > 0 else (-1 if total < 0 else 0)


def random_playout_winners(boards: np.ndarray, to_move: np.ndarray, passes: np.ndarray, height: int, width: int,
                           seed: int) -> np.ndarray:
    """Winner of one uniformly random playout from each unfinished position.

    boards [M, H*W] (any int dtype; not modified), to_move [M] (+1 black / -1 white), passes [M] (consecutive
    passes so far), board height and width, seed of the playouts' generator -> [M] int64 (+1 black, -1 white,
    0 a draw).
    """
    work = np.ascontiguousarray(boards, dtype=np.int8).copy()
    _seed(int(seed))
    play_out(work, np.asarray(to_move, dtype=np.int64), np.asarray(passes, dtype=np.int64), int(height), int(width),
             np.empty((work.shape[0], 0), np.int64))
    return disc_winners(work)
