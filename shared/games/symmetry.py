"""Board symmetries shared by every grid game, written once.

A symmetry is a rigid motion of the H x W grid. Three groups are used:

- "dihedral"  (square boards: tic-tac-toe, square gomoku, othello): 8 elements,
  k = 0..3 rotate by k quarter turns (np.rot90 direction), k = 4..7 mirror left-right first, then rotate by k - 4;
- "rectangle" (non-square gomoku): 4 elements, identity, up-down flip, left-right flip, half turn;
- "mirror"    (Connect Four, where gravity forbids up-down flips): 2 elements, identity and left-right flip.

Index 0 is always the identity. Every transform acts on the last two axes of an array, so the same
function moves board cells, network input planes [B, C, H, W] and cell index grids.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Transform = Callable[[np.ndarray], np.ndarray]
_AXES = (-2, -1)


def _dihedral(k: int) -> Transform:
    quarter_turns = k % 4
    if k < 4:
        return lambda a: np.rot90(a, quarter_turns, axes=_AXES)
    return lambda a: np.rot90(np.flip(a, axis=-1), quarter_turns, axes=_AXES)


_GROUPS: dict[str, list[Transform]] = {
    "dihedral": [_dihedral(k) for k in range(8)],
    "rectangle": [
        lambda a: a,
        lambda a: np.flip(a, axis=-2),
        lambda a: np.flip(a, axis=-1),
        lambda a: np.rot90(a, 2, axes=_AXES),
    ],
    "mirror": [lambda a: a, lambda a: np.flip(a, axis=-1)],
}

SYMMETRY_GROUPS = tuple(_GROUPS)


class GridSymmetries:
    """The symmetry group of one board size, with precomputed cell permutations.

    `cell_source[k]`: [H*W] int64, cell j of the transformed board holds the content of old cell source[j].
    `cell_target[k]`: [H*W] int64, old cell i ends up at cell target[i] of the transformed board
    (the inverse permutation; this is the action map of cell-action games).
    """

    def __init__(self, height: int, width: int, group: str) -> None:
        if group not in _GROUPS:
            raise ValueError(f"unknown symmetry group {group!r}; use one of {SYMMETRY_GROUPS}")
        if group == "dihedral" and height != width:
            raise ValueError(f"the dihedral group needs a square board, got {height}x{width}; use 'rectangle'")
        self.height = height
        self.width = width
        self.group = group
        self._transforms = _GROUPS[group]
        index = np.arange(height * width, dtype=np.int64).reshape(height, width)
        self.cell_source = [self._frozen(t(index).reshape(-1)) for t in self._transforms]
        self.cell_target = [self._frozen(np.argsort(src)) for src in self.cell_source]

    @staticmethod
    def _frozen(array: np.ndarray) -> np.ndarray:
        out = np.ascontiguousarray(array, dtype=np.int64)
        out.setflags(write=False)
        return out

    @property
    def count(self) -> int:
        """Number of symmetries in the group (8, 4 or 2)."""
        return len(self._transforms)

    def check_index(self, k: int) -> int:
        """Return k as an int, or raise IndexError if it is not a symmetry index of this group."""
        k = int(k)
        if not 0 <= k < self.count:
            raise IndexError(f"symmetry index {k} out of range: this {self.height}x{self.width} board has {self.count} symmetries (0..{self.count - 1})")
        return k

    def apply(self, array: np.ndarray, k: int) -> np.ndarray:
        """Transform the last two axes (H, W) of `array` [..., H, W] -> new contiguous array, same shape and dtype."""
        k = self.check_index(k)
        if array.shape[-2:] != (self.height, self.width):
            raise ValueError(f"expected arrays ending in ({self.height}, {self.width}), got shape {array.shape}")
        return np.ascontiguousarray(self._transforms[k](array))

    def permute_cells(self, cells: np.ndarray, k: int) -> np.ndarray:
        """Transform flat boards: cells [B, H*W] -> [B, H*W] (same dtype), new[:, j] = old[:, cell_source[k][j]]."""
        return cells[:, self.cell_source[self.check_index(k)]]
