"""Line windows and an incrementally updated threat board for the VCF solver (`shared.games.gomoku.vcf`).

A *window* is a run of n consecutive cells in one of the 4 line directions (n = the game's n in a row). Every
line of n or more stones contains a window of n stones, so threats are read off per-window stone counts:

    five cell  an empty cell in a window holding n - 1 stones of one colour and none of the other
               (playing it makes n or more in a row: a win in freestyle, overlines included)
    four move  an empty cell in a window holding n - 2 stones of one colour and none of the other: playing it
               leaves n - 1 stones and one empty cell in that window, i.e. a four whose five cell is the
               window's other empty cell (its "partner")

`ThreatBoard` keeps the per-window counts of both colours and updates only the (at most 4 * n) windows through
a cell when a stone is played or taken back, so a search pays O(n) per move instead of rescanning the board.
Colours on a ThreatBoard are relative: +1 is the attacker of the search, -1 the defender.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from shared.games.lines import LINE_DIRECTIONS

ATTACKER, DEFENDER = 1, -1

#: Count given to the padding window in both colours, so that no threat test ever matches it.
_PAD_COUNT = 1000


@dataclass(frozen=True)
class LineTables:
    """The windows of one board shape (built once per (height, width, n) and cached).

    windows       [Nw, n] int64  cell indices of each window, in line order
    cell_windows  [C, K] int64   the windows through each cell, padded with Nw (a dummy window index)
    zobrist       [2][C] int     random 64-bit keys per (colour, cell), index 0 attacker, 1 defender
    """

    height: int
    width: int
    n_in_row: int
    windows: np.ndarray
    cell_windows: np.ndarray
    zobrist: tuple[tuple[int, ...], tuple[int, ...]]

    @property
    def num_windows(self) -> int:
        return int(self.windows.shape[0])


def _build_windows(height: int, width: int, n: int) -> np.ndarray:
    """All windows of n cells in the 4 directions: -> [Nw, n] int64 cell indices."""
    rows, cols = np.indices((height, width))
    steps = np.arange(n)
    parts = [np.zeros((0, n), dtype=np.int64)]
    for d_row, d_col in LINE_DIRECTIONS:
        end_r, end_c = rows + (n - 1) * d_row, cols + (n - 1) * d_col
        inside = (end_r >= 0) & (end_r < height) & (end_c >= 0) & (end_c < width)
        start_r, start_c = rows[inside], cols[inside]
        parts.append((start_r[:, None] + d_row * steps) * width + start_c[:, None] + d_col * steps)
    return np.concatenate(parts).astype(np.int64)


def _build_cell_windows(windows: np.ndarray, num_cells: int) -> np.ndarray:
    """Windows through each cell: windows [Nw, n] -> [C, K] int64, rows padded with Nw."""
    lists: list[list[int]] = [[] for _ in range(num_cells)]
    for index, cells in enumerate(windows.tolist()):
        for cell in cells:
            lists[cell].append(index)
    width = max((len(x) for x in lists), default=0) or 1
    table = np.full((num_cells, width), windows.shape[0], dtype=np.int64)
    for cell, ids in enumerate(lists):
        table[cell, : len(ids)] = ids
    return table


@lru_cache(maxsize=32)
def line_tables(height: int, width: int, n_in_row: int) -> LineTables:
    """The cached `LineTables` of an height x width board with n in a row."""
    windows = _build_windows(height, width, n_in_row)
    rng = np.random.default_rng(0x5EED_0F_5)
    keys = rng.integers(1, 2**63 - 1, size=(2, height * width), dtype=np.int64)
    zobrist = (tuple(keys[0].tolist()), tuple(keys[1].tolist()))
    return LineTables(height, width, n_in_row, windows, _build_cell_windows(windows, height * width), zobrist)


class ThreatBoard:
    """A board with per-window stone counts of both colours, updated by `play` / `undo`.

    board  [C] int8   +1 attacker, -1 defender, 0 empty (colours relative to the search's attacker)
    att    [Nw+1] int16  attacker stones per window (last entry: the padding window, never matching)
    dfn    [Nw+1] int16  defender stones per window
    key    int        Zobrist hash of the stones played since construction (0 at construction)
    """

    def __init__(self, tables: LineTables, cells: np.ndarray, attacker: int) -> None:
        """cells [C] int (+1 / -1 / 0 in the game's colours); attacker: the game colour (+1 or -1) that attacks."""
        self.tables = tables
        self.n = tables.n_in_row
        self.windows = tables.windows
        self.cell_windows = tables.cell_windows
        self.board = (np.asarray(cells, dtype=np.int64) * int(attacker)).astype(np.int8)
        pad = np.array([_PAD_COUNT], dtype=np.int16)
        stones = self.board[self.windows]                                         # [Nw, n]
        self.att = np.concatenate([(stones == ATTACKER).sum(axis=1).astype(np.int16), pad])
        self.dfn = np.concatenate([(stones == DEFENDER).sum(axis=1).astype(np.int16), pad])
        self.key = 0

    def _counts(self, who: int) -> tuple[np.ndarray, np.ndarray]:
        """(own counts, other counts) for colour `who` (+1 attacker, -1 defender)."""
        return (self.att, self.dfn) if who == ATTACKER else (self.dfn, self.att)

    def play(self, cell: int, who: int) -> None:
        """Put a stone of `who` (+1 / -1) on the empty `cell`."""
        self.board[cell] = who
        self._counts(who)[0][self.cell_windows[cell]] += 1
        self.key ^= self.tables.zobrist[0 if who == ATTACKER else 1][cell]

    def undo(self, cell: int, who: int) -> None:
        """Take back the stone of `who` on `cell` (the inverse of `play`)."""
        self.board[cell] = 0
        self._counts(who)[0][self.cell_windows[cell]] -= 1
        self.key ^= self.tables.zobrist[0 if who == ATTACKER else 1][cell]

    def five_cells(self, who: int) -> np.ndarray:
        """Cells where `who` would make n in a row now: -> sorted unique [K] int64 (whole-board scan)."""
        own, other = self._counts(who)
        ids = np.flatnonzero((own == self.n - 1) & (other == 0))
        return self._empty_cells_of(ids)

    def five_cells_through(self, cell: int, who: int) -> np.ndarray:
        """Five cells of `who` in the windows through `cell` only: -> sorted unique [K] int64."""
        own, other = self._counts(who)
        ids = self.cell_windows[cell]
        ids = ids[(own[ids] == self.n - 1) & (other[ids] == 0)]
        return self._empty_cells_of(ids)

    def _empty_cells_of(self, ids: np.ndarray) -> np.ndarray:
        if ids.size == 0:
            return ids.astype(np.int64)
        cells = self.windows[ids]
        return np.unique(cells[self.board[cells] == 0])

    def four_pairs(self, who: int) -> tuple[np.ndarray, np.ndarray]:
        """Every four move of `who` with the five cell it creates: -> (moves [K] int64, partners [K] int64).

        A move appears once per window it makes a four in, so a move with two different partners makes a
        double four. Moves repeat; pairs may repeat (the same two cells in overlapping windows).
        """
        own, other = self._counts(who)
        ids = np.flatnonzero((own == self.n - 2) & (other == 0))
        if ids.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        cells = self.windows[ids]                                          # [k, n]
        pairs = cells[self.board[cells] == 0].reshape(-1, 2)               # exactly 2 empty cells per window
        return np.concatenate([pairs[:, 0], pairs[:, 1]]), np.concatenate([pairs[:, 1], pairs[:, 0]])

    def potential(self, cells: np.ndarray, who: int) -> np.ndarray:
        """Move-ordering score: live windows through each cell where `who` has >= n - 3 stones: [K] -> [K] int64."""
        own, other = self._counts(who)
        live = (own >= max(self.n - 3, 0)) & (other == 0)
        return live[self.cell_windows[cells]].sum(axis=1)
