"""VCF positions of in-a-row games (for `zeroforge bench tactics --vcf`), labelled by brute force over the rules.

A VCF ("victory by continuous fours") wins by fours alone: each attacker move leaves the attacker a five cell
(a cell completing n in a row) and the defender none, so the defender must block that cell; the attacker wins
when it can make five, or when a four leaves it two five cells (a double four). Within `depth` attacker moves:
five now or a double four now is depth 1, else a four, the forced block, and a VCF within depth - 1.

The labeller shares nothing with the players' threat solver (shared.games.gomoku.vcf): it tries every empty cell at
every attacker turn, and finds five cells with `shared.games.lines.completion_cells` (tested cell by cell against
placing a stone). Kinds of position, for the side to move, none of them with a five cell for either side (those
are the win-in-1 and must-block kinds of `bench tactics`):

- "vcf": the side to move has a VCF within VCF_DEPTH; a move keeps it when it starts one (a four after which,
  with the forced block, a VCF within VCF_DEPTH - 1 remains, or a double four);
- "vcf_defence": the side to move has no VCF and no four of its own, the opponent has a VCF (were it to move),
  and some move stops it; a move keeps the position when the opponent has no VCF within VCF_DEPTH after it.
  Positions where the side to move has a four are left out: a four there "stops" the VCF only in that the
  opponent must block first, and whether that delay defends depends on the moves after it (the players' solver
  counts a four as a defence only when the opponent has no VCF even after its forced block, as if it moved again).

Positions come from random games whose moves are drawn near the stones already placed (within two cells, as in
real games, so that threats build up) and never make five.
"""
from __future__ import annotations

import time

import numpy as np

from shared.games.base import F_PLAYER
from shared.games.inarow import InARowGame
from shared.games.lines import completion_cells

#: Attacker moves of the VCFs looked for (the issue's "VCF to depth 4"; the players' root solver searches as deep).
VCF_DEPTH = 4
#: Kinds of VCF position, in report order.
VCF_KINDS = ("vcf", "vcf_defence")


def five_cells(game: InARowGame, boards: np.ndarray, colour: int) -> np.ndarray:
    """Cells where a stone of `colour` (+1 first player, -1 second) makes n in a row: boards [K, H*W] int16 ->
    [K, H*W] bool."""
    first, second = completion_cells(boards, game.height, game.width, game.n_in_row)
    return first if colour == 1 else second


def _fours(game: InARowGame, board: np.ndarray, me: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The attacker's fours on one board [H*W] int16: -> (cells [F] int64 of the four moves, their five cells
    counts [F] int64, blocks [F] int64: the one five cell of each single four, -1 for a double four)."""
    empties = np.flatnonzero(board == 0)
    kids = np.repeat(board[None], empties.size, axis=0)
    kids[np.arange(empties.size), empties] = me
    mine = five_cells(game, kids, me)
    four = mine.any(axis=1) & ~five_cells(game, kids, -me).any(axis=1)   # and the defender has no five left
    counts = mine.sum(axis=1)[four]
    blocks = np.where(counts == 1, mine[four].argmax(axis=1), -1)
    return empties[four], counts, blocks


def _four_wins(game: InARowGame, board: np.ndarray, me: int, cell: int, count: int, block: int, depth: int,
               failed: set) -> bool:
    """Whether the four of `me` on `cell` (with `count` five cells; `block`, the one of a single four) wins within
    `depth` attacker moves: a double four wins, a single four when, after the forced block, a VCF within depth - 1
    remains."""
    if count >= 2:
        return True
    if depth < 2:
        return False
    after = board.copy()
    after[cell], after[block] = me, -me
    key = (after.tobytes(), depth - 1)
    if key in failed:
        return False
    if vcf_wins(game, after, me, depth - 1, failed):
        return True
    failed.add(key)
    return False


def vcf_wins(game: InARowGame, board: np.ndarray, me: int, depth: int, failed: set | None = None) -> bool:
    """Whether `me` (+1 / -1, the side to move) wins by continuous fours within `depth` attacker moves on the board
    [H*W] int16 (module docstring). `failed` caches (board, depth) pairs already refuted."""
    failed = set() if failed is None else failed
    if five_cells(game, board[None], me)[0].any():
        return True
    cells, counts, blocks = _fours(game, board, me)
    if (counts >= 2).any():                                            # a double four now: no search needed
        return True
    return any(_four_wins(game, board, me, cell, count, block, depth, failed)
               for cell, count, block in zip(cells, counts, blocks))


def vcf_start_moves(game: InARowGame, board: np.ndarray, me: int, depth: int = VCF_DEPTH) -> np.ndarray:
    """The moves of `me` that start a VCF within `depth` on board [H*W] int16 (no five cell for either side):
    [H*W] bool."""
    good = np.zeros(board.size, bool)
    failed: set = set()
    for cell, count, block in zip(*_fours(game, board, me)):
        good[cell] = _four_wins(game, board, me, cell, count, block, depth, failed)
    return good


def vcf_defence_moves(game: InARowGame, board: np.ndarray, me: int, depth: int = VCF_DEPTH) -> np.ndarray:
    """The moves of `me` after which the opponent has no VCF within `depth`, on board [H*W] int16: [H*W] bool
    (False on occupied cells)."""
    good = np.zeros(board.size, bool)
    failed: set = set()
    for cell in np.flatnonzero(board == 0):
        after = board.copy()
        after[cell] = me
        good[cell] = not vcf_wins(game, after, -me, depth, failed)
    return good


def label_vcf_position(game: InARowGame, state: np.ndarray) -> tuple[int, np.ndarray] | None:
    """(kind index into VCF_KINDS, good moves [A] bool) of one state [S] int16, or None when it is of neither kind."""
    board = np.ascontiguousarray(state[: game.num_cells])
    me = int(state[game.num_cells + F_PLAYER])
    if five_cells(game, board[None], me)[0].any() or five_cells(game, board[None], -me)[0].any():
        return None                                                    # win in 1 or must block
    if vcf_wins(game, board, me, VCF_DEPTH):
        return 0, vcf_start_moves(game, board, me)
    if not vcf_wins(game, board, -me, VCF_DEPTH) or _fours(game, board, me)[0].size:
        return None
    good = vcf_defence_moves(game, board, me)
    return (1, good) if good.any() else None


def vcf_tactic_positions(game: InARowGame, count: int, rng: np.random.Generator, max_plies: int | None = None,
                         max_seconds: float = 3600.0,
                         max_games: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Up to `count` positions of each VCF kind from random near-stone games (module docstring), each game stopped
    after a ply count drawn from [4, max_plies] (default: half the board) and labelled there.

    Returns (states [N, S] int16, kinds [N] int64 (index into VCF_KINDS), good [N, A] bool, positions labelled);
    stops early, with fewer positions, after `max_seconds` or `max_games` games (default 200 per position asked
    for: a board too small for a kind, such as tic-tac-toe's, yields few or none)."""
    max_plies = max(5, game.num_cells // 2) if max_plies is None else max_plies
    found: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {0: [], 1: []}
    labelled, started, games = 0, time.perf_counter(), 0
    max_games = 200 * count if max_games is None else max_games
    rows, cols = np.divmod(np.arange(game.num_cells), game.width)
    near = (np.abs(rows[:, None] - rows[None]) <= 2) & (np.abs(cols[:, None] - cols[None]) <= 2)   # [A, A]
    while (min(len(v) for v in found.values()) < count and time.perf_counter() - started < max_seconds
           and games < max_games):
        games += 1
        state = game.initial_states(1)[0]
        state = game.step(state[None], np.array([game.num_cells // 2]))[0]             # the centre first
        for _ in range(int(rng.integers(3, max_plies))):
            board = state[: game.num_cells]
            me = int(state[game.num_cells + F_PLAYER])
            choices = (board == 0) & near[board != 0].any(axis=0) & ~five_cells(game, board[None], me)[0]
            if not choices.any():
                break
            state = game.step(state[None], np.array([rng.choice(np.flatnonzero(choices))]))[0]
        if game.is_terminal(state[None])[0]:
            continue
        labelled += 1
        label = label_vcf_position(game, state)
        if label is not None and len(found[label[0]]) < count:
            found[label[0]].append((state, label[1]))
    rows_out = [(state, kind, good) for kind in (0, 1) for state, good in found[kind]]
    if not rows_out:
        return (np.zeros((0, game.state_size), np.int16), np.zeros(0, np.int64),
                np.zeros((0, game.num_actions), bool), labelled)
    return (np.stack([r[0] for r in rows_out]), np.array([r[1] for r in rows_out], np.int64),
            np.stack([r[2] for r in rows_out]), labelled)
