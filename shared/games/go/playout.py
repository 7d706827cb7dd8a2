"""Compiled random playouts for Go: the rollout policy of the pure-MCTS baseline (`pure-mcts:N`) on Go boards.

Uniformly random moves make a poor and very slow Go playout: they fill their own eyes, so groups that are alive
die at random and a game only stops at the length cap. Go programs that evaluate by random playouts therefore
use the classic "light playout" policy, and so does this module:

- the side to move plays a uniformly random legal point that is not one of its own eyes (an empty point whose
  on-board neighbours are all its own stones), and passes only when no such point is left;
- a placement is legal when it is not suicide and does not retake a ko at once (simple ko: the point where a
  single stone was just captured by a single stone); positional superko is not checked inside a playout (the
  search tree above the playout follows the full rules, `shared.games.go.rules`);
- the playout ends after two passes in a row or at the game's length cap, and is scored by area with komi
  (the rules of `shared.games.go.rules`: stones plus the empty regions that border only one colour).

One call plays M independent playouts in a compiled loop (no numpy call per move). Boards are flat
[M, N*N] with +1 black, -1 white, 0 empty, row 0 at the top; `nbr` [N*N, 4] gives each cell's 4 neighbours with
N*N meaning off the board (`shared.games.go.board.GoTables.nbr`).
"""
from __future__ import annotations

import numpy as np

from shared.games.compiled import borrowing_jit


@borrowing_jit
def _seed(seed: int) -> None:
    """Seed numba's own generator (separate from numpy's) for the playouts of this thread."""
    np.random.seed(seed)


@borrowing_jit
def _has_liberty_besides(board, nbr, start, skip, stamp, mark, stack) -> bool:
    """Whether the group at `start` touches an empty point other than `skip` (flood fill, stops at the first)."""
    nn = board.shape[0]
    colour = board[start]
    stamp[0] += 1
    tag = stamp[0]
    mark[start] = tag
    stack[0] = start
    top = 1
    while top > 0:
        top -= 1
        cell = stack[top]
        for d in range(4):
            n = nbr[cell, d]
            if n == nn or mark[n] == tag:
                continue
            v = board[n]
            if v == 0:
                if n != skip:
                    return True
            elif v == colour:
                mark[n] = tag
                stack[top] = n
                top += 1
    return False


@borrowing_jit
def _remove_group(board, nbr, start, stack) -> int:
    """Remove the group at `start` from the board; returns the number of stones removed."""
    nn = board.shape[0]
    colour = board[start]
    board[start] = 0
    stack[0] = start
    top, removed = 1, 0
    while top > 0:
        top -= 1
        cell = stack[top]
        removed += 1
        for d in range(4):
            n = nbr[cell, d]
            if n != nn and board[n] == colour:
                board[n] = 0
                stack[top] = n
                top += 1
    return removed


@borrowing_jit
def _is_own_eye(board, nbr, cell, player) -> bool:
    """An empty point whose on-board neighbours are all `player`'s stones."""
    nn = board.shape[0]
    for d in range(4):
        n = nbr[cell, d]
        if n != nn and board[n] != player:
            return False
    return True


@borrowing_jit
def _is_legal(board, nbr, cell, player, ko, stamp, mark, stack) -> bool:
    """Placing `player` at the empty `cell`: not the ko point, and not suicide (a liberty, a capture, or a
    connection to an own group that keeps another liberty)."""
    if cell == ko:
        return False
    nn = board.shape[0]
    for d in range(4):
        n = nbr[cell, d]
        if n == nn:
            continue
        v = board[n]
        if v == 0:
            return True
        if v == player:
            if _has_liberty_besides(board, nbr, n, cell, stamp, mark, stack):
                return True
        elif not _has_liberty_besides(board, nbr, n, cell, stamp, mark, stack):
            return True                                  # captures: the opponent group's last liberty is `cell`
    return False


@borrowing_jit
def _place(board, nbr, cell, player, stamp, mark, stack) -> int:
    """Play a legal placement; returns the new ko point (the single captured stone's cell, else -1)."""
    nn = board.shape[0]
    board[cell] = player
    captured, last = 0, -1
    for d in range(4):
        n = nbr[cell, d]
        if n != nn and board[n] == -player and not _has_liberty_besides(board, nbr, n, -1, stamp, mark, stack):
            captured += _remove_group(board, nbr, n, stack)
            last = n
    if captured != 1:
        return -1
    for d in range(4):                                   # a ko only when the capturing stone stands alone in atari
        n = nbr[cell, d]
        if n != nn and board[n] == player:
            return -1
    return last if not _has_liberty_besides(board, nbr, cell, last, stamp, mark, stack) else -1


def area_scores(boards: np.ndarray, nbr: np.ndarray, komi: float) -> np.ndarray:
    """Area score from Black's view, komi included: boards [M, N*N] int8 -> [M] float64."""
    nn = boards.shape[1]
    out = np.empty(boards.shape[0], np.float64)
    _area_scores(boards, nbr, komi, out, np.empty(nn, np.int64), np.empty(nn, np.bool_))
    return out


@borrowing_jit
def _area_scores(boards, nbr, komi, out, region, seen):
    """`area_scores` into out [M] float64; region [N*N] int64 and seen [N*N] bool: scratch."""
    m, nn = boards.shape
    for g in range(m):
        board = boards[g]
        for c in range(nn):
            seen[c] = False
        score = 0.0
        for c in range(nn):
            if board[c] != 0:
                score += board[c]
            elif not seen[c]:
                seen[c] = True
                region[0] = c
                top, size, touches_black, touches_white = 1, 0, False, False
                while top > 0:
                    top -= 1
                    cell = region[top]
                    size += 1
                    for d in range(4):
                        n = nbr[cell, d]
                        if n == nn:
                            continue
                        if board[n] == 1:
                            touches_black = True
                        elif board[n] == -1:
                            touches_white = True
                        elif not seen[n]:
                            seen[n] = True
                            region[top] = n
                            top += 1
                if touches_black and not touches_white:
                    score += size
                elif touches_white and not touches_black:
                    score -= size
        out[g] = score - komi


def play_out(boards: np.ndarray, to_move: np.ndarray, passes: np.ndarray, plies: np.ndarray, nbr: np.ndarray,
             max_moves: int) -> None:
    """Play every board to its end in place (policy in the module docstring).

    boards [M, N*N] int8 (modified), to_move [M] int8 (+1/-1), passes [M] int64 (consecutive passes so far),
    plies [M] int64 (moves played so far; the playout stops at `max_moves`). Returns nothing.
    """
    nn = boards.shape[1]
    _play_out(boards, to_move, passes, plies, nbr, max_moves, np.zeros(1, np.int64), np.zeros(nn, np.int64),
              np.empty(nn, np.int64), np.empty(nn, np.int64))


@borrowing_jit
def _play_out(boards, to_move, passes, plies, nbr, max_moves, stamp, mark, stack, candidates):
    """`play_out`; stamp [1] and mark [N*N] int64 (zeros on entry), stack and candidates [N*N] int64: scratch."""
    m, nn = boards.shape
    for g in range(m):
        board = boards[g]
        player = np.int8(to_move[g])
        passed, ply, ko = passes[g], plies[g], -1
        while passed < 2 and ply < max_moves:
            count = 0
            for c in range(nn):
                if board[c] == 0:
                    candidates[count] = c
                    count += 1
            move = -1
            while count > 0:                             # random order without repeats: swap-remove
                k = np.random.randint(count)
                cell = candidates[k]
                count -= 1
                candidates[k] = candidates[count]
                if not _is_own_eye(board, nbr, cell, player) and _is_legal(board, nbr, cell, player, ko,
                                                                           stamp, mark, stack):
                    move = cell
                    break
            if move < 0:
                passed += 1
                ko = -1
            else:
                passed = 0
                ko = _place(board, nbr, move, player, stamp, mark, stack)
            ply += 1
            player = -player


def random_playout_scores(boards: np.ndarray, to_move: np.ndarray, passes: np.ndarray, plies: np.ndarray,
                          nbr: np.ndarray, max_moves: int, komi: float, seed: int) -> np.ndarray:
    """Final area scores (Black's view, komi included) of one light playout from each position.

    boards [M, N*N] (any int dtype; not modified), to_move [M] (+1 black / -1 white), passes [M] and plies [M]
    (consecutive passes and moves so far), nbr [N*N, 4] int64, max_moves the length cap, komi, seed of the
    playouts' generator -> [M] float64.
    """
    work = np.ascontiguousarray(boards, dtype=np.int8).copy()
    _seed(int(seed))
    play_out(work, np.ascontiguousarray(to_move, dtype=np.int8), np.asarray(passes, dtype=np.int64),
             np.asarray(plies, dtype=np.int64), nbr, int(max_moves))
    return area_scores(work, nbr, float(komi))
