"""Batched board analysis for Go (`shared.games.go.rules`): groups, liberties, area, Zobrist keys of positions.

Everything here works on flat boards `cells` [B, N*N] int16 (+1 black, -1 white, 0 empty, row 0 at the
TOP, cell = row * N + col), for a whole batch at once, without a Python loop over boards.

Groups and empty regions are labelled by `scipy.ndimage.label` on the whole batch at once ([B, N, N]
masks with a structuring element that links the 4 neighbours inside a board and never across boards);
liberties are counted with one `np.bincount` over (group, adjacent empty cell) pairs.

Position keys for positional superko (see `position_keys`): a 64-bit Zobrist hash is taken of each of the
8 dihedral images of a position; the key of the position is (C, M) with C the smallest of the 8 hashes
and M the 8-bit mask of the images reaching it. Two positions are equal exactly when their keys are
equal (up to 64-bit hash collisions), and the key of a transformed position follows from the key alone
(C stays, the bits of M are permuted), so symmetries can transform states without the old boards.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import ndimage

from shared.games.symmetry import GridSymmetries

#: Value of the off-board sentinel cell appended after the N*N cells in gathered neighbourhoods.
OFF_BOARD = 2
#: Four orthogonal neighbours: (row step, column step).
_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
_WORD_SHIFTS = np.array([0, 16, 32, 48], dtype=np.uint64)
_ZOBRIST_SEED = 0x5A0F_60  # fixed: keys are part of the stored state format, never change it


@lru_cache(maxsize=None)
def tables(size: int) -> "GoTables":
    """The precomputed tables of one board size (shared by every game object of that size)."""
    return GoTables(size)


class GoTables:
    """Per-size constants: neighbour indices, symmetries, Zobrist keys and the tables of the key transforms.

    nbr [N*N, 4] int64: the 4 neighbours of each cell, N*N (the sentinel) where off the board.
    keys [2, N*N] uint64: Zobrist keys, row 0 black stones, row 1 white stones (low 16 bits distinct, non-zero);
    flat_keys [2*N*N] uint64 the same flattened and key_slot [65536] int64 its index by the low 16 bits (-1: none).
    image_keys [3, N*N, 8] uint64: image_keys[v + 1, c, r] = key of value v at cell c in the image under
        symmetry r (0 for v = 0), so the hash of image r of a board is XOR_c image_keys[cells[c] + 1, c, r].
    mask_transform [8, 256] int16: mask_transform[g, M] = the mask M of a position after symmetry g.
    lowest_bit [256] int64: the index of the lowest set bit (0 for 0).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        nn = size * size
        self.num_cells = nn
        rows, cols = np.divmod(np.arange(nn), size)
        nbr = np.full((nn, 4), nn, dtype=np.int64)
        for d, (dr, dc) in enumerate(_STEPS):
            r, c = rows + dr, cols + dc
            inside = (r >= 0) & (r < size) & (c >= 0) & (c < size)
            nbr[inside, d] = r[inside] * size + c[inside]
        self.nbr = nbr
        self.symmetries = GridSymmetries(size, size, "dihedral")
        self.keys = _zobrist_keys(size)
        targets = np.stack(self.symmetries.cell_target)                  # [8, N*N]
        image_keys = np.zeros((3, nn, 8), dtype=np.uint64)
        image_keys[2] = self.keys[0][targets].T                          # black (+1) -> index 2
        image_keys[0] = self.keys[1][targets].T                          # white (-1) -> index 0
        self.image_keys = image_keys
        self.flat_image_keys = image_keys.reshape(3 * nn, 8)                # row (v + 1) * N*N + c
        self.flat_keys = self.keys.reshape(-1)                               # [2*N*N]: black cells, then white
        self.key_slot = np.full(1 << 16, -1, dtype=np.int64)                # low 16 bits -> index in flat_keys
        self.key_slot[(self.flat_keys & np.uint64(0xFFFF)).astype(np.int64)] = np.arange(2 * nn)
        self.cell_source = np.stack(self.symmetries.cell_source)           # [8, N*N]
        self.mask_transform = self._mask_transform_table()
        self.lowest_bit = np.array([(m & -m).bit_length() - 1 if m else 0 for m in range(256)], dtype=np.int64)

    def _mask_transform_table(self) -> np.ndarray:
        """[8, 256] int16: after symmetry g, bit k of a mask is old bit compose[k, g], since image k of the moved
        position is image compose[k, g] of the old one."""
        sources = [tuple(s) for s in self.symmetries.cell_source]
        compose = np.zeros((8, 8), dtype=np.int64)          # compose[k, g]: "apply g, then k" as one symmetry
        for k in range(8):
            for g in range(8):
                compose[k, g] = sources.index(tuple(self.cell_source[g][self.cell_source[k]]))
        masks = np.arange(256)
        table = np.zeros((8, 256), dtype=np.int16)
        for g in range(8):
            for k in range(8):
                table[g] |= (((masks >> compose[k, g]) & 1) << k).astype(np.int16)
        return table


def _zobrist_keys(size: int) -> np.ndarray:
    """[2, N*N] uint64 keys: the splitmix64 sequence from a fixed seed, skipping values whose low 16 bits are 0
    or already used, so a key is found by a direct table look-up. Written out here (not numpy's generators,
    whose streams may change between versions) because the keys are part of the stored state format."""
    mask = (1 << 64) - 1
    state = (_ZOBRIST_SEED * 1_000_003 + size) & mask
    keys: list[int] = []
    used_low = {0}
    while len(keys) < 2 * size * size:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        if z & 0xFFFF not in used_low:
            used_low.add(z & 0xFFFF)
            keys.append(z)
    return np.array(keys, dtype=np.uint64).reshape(2, size * size)


# ----- neighbourhoods, groups and liberties ---------------------------------------------------------
def padded(values: np.ndarray, fill: int) -> np.ndarray:
    """values [B, N*N] -> [B, N*N + 1] with `fill` in the sentinel column (the off-board neighbour)."""
    out = np.empty((values.shape[0], values.shape[1] + 1), dtype=values.dtype)
    out[:, :-1] = values
    out[:, -1] = fill
    return out


_CROSS = np.zeros((3, 3, 3), dtype=bool)
_CROSS[1, :, 1] = _CROSS[1, 1, :] = True     # 4-neighbours inside one board, never across the batch axis


def _label(masks: np.ndarray) -> tuple[np.ndarray, int]:
    """Label 4-connected regions of each board separately: masks [B, H, W] bool -> (labels [B, H, W] int32, count).

    Labels are 1..count, unique over the whole batch (0 outside the masks); one C call for the whole batch."""
    labels, count = ndimage.label(masks, structure=_CROSS)
    return labels, int(count)


def group_liberties(cells: np.ndarray, t: GoTables) -> tuple[np.ndarray, np.ndarray]:
    """Stone groups and their liberty counts.

    cells [B, N*N] int16 -> (labels [B, N*N] int32: a number > 0 per group, unique over the batch, 0 on empty
    cells; liberties [B, N*N] int64: the number of distinct empty cells next to the stone's group, 0 on empty).
    """
    batch, nn = cells.shape
    size = t.size
    boards = cells.reshape(batch, size, size)
    side_by_side = np.zeros((batch, size, 2 * size + 1), dtype=bool)                     # black | gap | white
    side_by_side[:, :, :size] = boards == 1
    side_by_side[:, :, size + 1:] = boards == -1
    both, count = _label(side_by_side)
    labels = (both[:, :, :size] + both[:, :, size + 1:]).reshape(batch, nn)              # colours are disjoint
    empty = cells == 0
    around = padded(labels, 0)[:, t.nbr]                                                 # [B, N*N, 4]
    counted = (around > 0) & empty[:, :, None]
    for d in range(1, 4):                                                                # once per group and cell
        for e in range(d):
            counted[:, :, d] &= around[:, :, d] != around[:, :, e]
    per_label = np.bincount(around[counted], minlength=count + 1)
    per_label[0] = 0
    return labels, per_label[labels]


def ownership(cells: np.ndarray, t: GoTables) -> np.ndarray:
    """Who owns each point under area scoring: its stone's colour, or for an empty point the colour of the only
    colour its empty region borders (seki and dame regions, bordering both or neither, belong to no one).

    cells [B, N*N] int16 -> [B, N*N] int8: +1 black, -1 white, 0 no one.
    """
    batch, nn = cells.shape
    empty = cells == 0
    regions, count = _label(empty.reshape(batch, t.size, t.size))
    regions = regions.reshape(batch, nn)                                                 # 0 on stones
    around = padded(cells, OFF_BOARD)[:, t.nbr]                                          # [B, N*N, 4]
    touches_black = np.bincount(regions[empty], weights=(around == 1).any(axis=2)[empty], minlength=count + 1) > 0
    touches_white = np.bincount(regions[empty], weights=(around == -1).any(axis=2)[empty], minlength=count + 1) > 0
    black_only = (touches_black & ~touches_white)[regions] & empty
    white_only = (touches_white & ~touches_black)[regions] & empty
    owner = np.sign(cells).astype(np.int8)
    owner[black_only] = 1
    owner[white_only] = -1
    return owner


def area(cells: np.ndarray, t: GoTables) -> np.ndarray:
    """Area of each colour: stones plus empty regions that border only that colour (seki/dame count for no one).

    cells [B, N*N] int16 -> [B, 2] int64: column 0 black's area, column 1 white's.
    """
    owner = ownership(cells, t)
    return np.stack([(owner == 1).sum(axis=1), (owner == -1).sum(axis=1)], axis=1).astype(np.int64)


# ----- position keys ------------------------------------------------------------------------------------
def image_hashes(cells: np.ndarray, t: GoTables) -> np.ndarray:
    """Zobrist hashes of the 8 dihedral images of each board: cells [B, N*N] int16 -> [B, 8] uint64."""
    rows = (cells.astype(np.int64) + 1) * t.num_cells + np.arange(t.num_cells)
    gathered = np.take(t.flat_image_keys, rows, axis=0)                   # [B, N*N, 8] uint64
    while gathered.shape[1] > 1:                                          # pairwise XOR (faster than reduce)
        half = gathered.shape[1] // 2
        folded = gathered[:, :half] ^ gathered[:, half: 2 * half]
        if gathered.shape[1] % 2:
            folded[:, 0] ^= gathered[:, -1]
        gathered = folded
    return gathered[:, 0]


def find_keys(values: np.ndarray, t: GoTables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which single-stone key each value is: values [...] uint64 -> (found bool, colour int16 +1/-1, cell int64).

    colour and cell are meaningful only where found."""
    slot = t.key_slot[(values & np.uint64(0xFFFF)).astype(np.int64)]
    found = (slot >= 0) & (t.flat_keys[np.maximum(slot, 0)] == values)
    colour = np.where(slot < t.num_cells, 1, -1).astype(np.int16)
    return found, colour, np.maximum(slot, 0) % t.num_cells


def position_keys(cells: np.ndarray, t: GoTables) -> tuple[np.ndarray, np.ndarray]:
    """Superko keys: cells [B, N*N] int16 -> (C [B] uint64 smallest image hash, M [B] int16 mask of images reaching C)."""
    hashes = image_hashes(cells, t)
    smallest = hashes.min(axis=1)
    mask = ((hashes == smallest[:, None]) << np.arange(8)).sum(axis=1).astype(np.int16)
    return smallest, mask


def words_from_hash(values: np.ndarray) -> np.ndarray:
    """[...] uint64 -> [..., 4] int16, the four 16-bit words, least significant first (bits reinterpreted)."""
    return ((values[..., None] >> _WORD_SHIFTS) & np.uint64(0xFFFF)).astype(np.uint16).view(np.int16)


def hash_from_words(words: np.ndarray) -> np.ndarray:
    """[..., 4] int16 -> [...] uint64 (inverse of `words_from_hash`)."""
    little = np.ascontiguousarray(words, dtype="<i2")
    return little.view("<u8")[..., 0].astype(np.uint64)
