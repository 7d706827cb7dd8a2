"""Freestyle Gomoku on an H x W board (5..20 each side; 20x20 is the Gomocup freestyle board): n OR MORE stones in a row wins (n = 3..6);
a full board without a line is a draw. The first player (+1, 'X', black) moves first.

Actions: cell index row * W + col, row 0 at the TOP (A = H * W).
Notation: a column letter from `a` at the left (no letter skipped, so a 20-wide board uses a-t) and a
row number counted from 1 at the BOTTOM: "h8" is the centre of 15x15; moves separated by spaces.
Encoding (4 planes, side to move's view): 0 own stones, 1 opponent stones, 2 last move (one-hot),
3 side to move (ones when the first player is to move).
Symmetries: 8 on square boards, 4 (identity, up-down flip, left-right flip, half turn) otherwise.
Names: "gomoku-{H}x{W}-{n}"; 15x15 with 5 in a row is called "gomoku-15".
"""
from __future__ import annotations

import numpy as np

from shared.games.base import GameError
from shared.games.inarow import InARowGame
from shared.games.notation import parse_square, render_grid, split_tokens, square_name

MIN_SIZE, MAX_SIZE = 5, 20
MIN_N, MAX_N = 3, 6
SIZE_RULES = f"height and width {MIN_SIZE}..{MAX_SIZE}, n in a row {MIN_N}..{MAX_N}"


def gomoku_name(height: int, width: int, n_in_row: int) -> str:
    """Canonical name: "gomoku-15" for 15x15 five in a row, else "gomoku-{H}x{W}-{n}"."""
    if (height, width, n_in_row) == (15, 15, 5):
        return "gomoku-15"
    return f"gomoku-{height}x{width}-{n_in_row}"


class Gomoku(InARowGame):
    """Freestyle Gomoku (overlines win) on the batched state layout of `shared.games.base`."""

    family = "gomoku"

    def __init__(self, height: int = 15, width: int = 15, n_in_row: int = 5) -> None:
        for label, value, low, high in (("height", height, MIN_SIZE, MAX_SIZE), ("width", width, MIN_SIZE, MAX_SIZE),
                                        ("n in a row", n_in_row, MIN_N, MAX_N)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise GameError(f"gomoku {label} {value!r} is out of range: allowed {SIZE_RULES} "
                                f"(e.g. 'gomoku-15', 'gomoku-8x8-5', 'gomoku-7x9-4')")
        height, width, n_in_row = int(height), int(width), int(n_in_row)
        if n_in_row > max(height, width):
            longest = max(height, width)
            raise GameError(f"gomoku {height}x{width} with {n_in_row} in a row can never be won: n must fit on the "
                            f"board (n <= {longest}), e.g. 'gomoku-{height}x{width}-{min(n_in_row, longest, 5)}'")
        super().__init__(gomoku_name(height, width, n_in_row), height, width, n_in_row)

    def action_to_str(self, action: int) -> str:
        """Cell index -> square name such as "h8" (rows counted from the bottom)."""
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise GameError(f"{self.name} action {action} out of range 0..{self.num_actions - 1}")
        return square_name(action // self.width, action % self.width, self.height, rows_from_bottom=True)

    def parse_action(self, text: str) -> int:
        return parse_square(str(text), self.height, self.width, rows_from_bottom=True)

    def parse_moves(self, text: str) -> list[int]:
        """Space-separated squares ("h8 i9 h9") -> cell indices."""
        return [self.parse_action(token) for token in split_tokens(text)]

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """One state [S] -> text board with column letters and row numbers (1 at the bottom), last move in []."""
        state = self._single_state(state)
        last_cell = int(self._last_move_cells(state[None, :])[0]) if highlight_last else -1
        cells = state[: self.num_cells].reshape(self.height, self.width)
        col_labels = [square_name(0, c, self.height, True)[0] for c in range(self.width)]
        row_labels = [str(self.height - r) for r in range(self.height)]
        lines = render_grid(cells, last_cell, col_labels, row_labels)
        return "\n".join(lines + [self._status_line(state)])

