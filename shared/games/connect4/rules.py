"""Connect Four: 7 columns, 6 rows; a disc falls to the lowest empty cell of its column; four in a row wins.

Board cells as in `shared.games.base` (row 0 at the TOP, so row 5 is the bottom row); first player = +1.
Actions: the column 0..6 (A = 7); a column is legal while its top cell (row 0) is empty.
The last-move field holds the column; the disc just played is the topmost disc of that column.
Notation: columns as digits 1-7 from the left, a move list with or without spaces ("4453" == "4 4 5 3");
`moves_to_str` writes "4453".
Encoding (4 planes, side to move's view): 0 own discs, 1 opponent discs, 2 last disc played (one-hot),
3 side to move (ones when the first player is to move).
Symmetries: 2 (identity, left-right mirror; gravity rules out the others).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from shared.games.base import F_LAST, F_PLAYER, F_PLY, GameError
from shared.games.grid import BASE_PLANES, GridGame
from shared.games.lines import completes_line, empty_cells, line_move_outcomes, line_step_stored
from shared.games.notation import parse_digit, parse_digit_moves, render_grid

_WHAT = "Connect Four column"
_HINT = "use one digit 1-7 per move, columns counted from the left, e.g. '4453' or '4 4 5 3'"


class Connect4(GridGame):
    """Connect Four on the batched state layout of `shared.games.base`."""

    family = "connect4"
    n_in_row = 4
    fast_move_outcomes = True

    def __init__(self) -> None:
        super().__init__("connect4", 6, 7, num_actions=7, num_planes=BASE_PLANES, symmetry_group="mirror")

    def params(self) -> dict[str, Any]:
        return {**super().params(), "n_in_row": self.n_in_row}

    # ----- rules ---------------------------------------------------------------------------------
    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16 -> [B, 7] bool: columns whose top cell is empty, none once the game is over."""
        self._check_states(states)
        return empty_cells(states, self.num_cells, self.width)

    def _landing_rows(self, cells: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Row a disc dropped in each column lands on: cells [B, H*W], columns [B] int64 -> [B] int64."""
        column_cells = cells.reshape(-1, self.height, self.width)[np.arange(cells.shape[0]), :, columns]  # [B, H]
        return (column_cells == 0).sum(axis=1).astype(np.int64) - 1

    def _play(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        new = states.copy()
        mover = states[:, self.num_cells + F_PLAYER]
        rows = self._landing_rows(states[:, : self.num_cells], actions)
        new[np.arange(states.shape[0]), rows * self.width + actions] = mover
        won = completes_line(new[:, : self.num_cells], rows, actions, self.height, self.width, self.n_in_row)
        board_full = states[:, self.num_cells + F_PLY] + 1 >= self.num_cells
        self._record_move(new, actions, done=won | board_full, winner=np.where(won, mover, 0))
        return new

    def step_stored(self, store: np.ndarray, slots: np.ndarray, parents: np.ndarray, children: np.ndarray,
                    actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`Game.step_stored`, compiled (`shared.games.lines.line_step_stored`): the same positions as `step`."""
        return line_step_stored(store, slots, parents, children, actions, self.height, self.width, self.n_in_row,
                                gravity=True)

    # ----- tactics -------------------------------------------------------------------------------
    def winning_moves(self, states: np.ndarray) -> np.ndarray:
        """[B, S] int16 -> [B, 7] bool: columns whose disc completes four in a row for the side to move."""
        return self.move_outcomes(states) == 1

    def move_outcomes(self, states: np.ndarray) -> np.ndarray:
        """[B, S] int16 -> [B, 7] int8 (see `Game.move_outcomes`), complete: after a non-winning disc in column c
        the opponent wins at once exactly when it wins at the landing cell of another column (unchanged by the
        disc) or at the cell just above the disc (the disc below does not change that cell's lines)."""
        self._check_states(states)
        return line_move_outcomes(states, self.height, self.width, self.n_in_row, gravity=True)

    def _last_move_cells(self, states: np.ndarray) -> np.ndarray:
        """The last disc is the topmost one of the last column: [B, S] -> [B] int64 cell, -1 before any move."""
        last_column = states[:, self.num_cells + F_LAST].astype(np.int64)
        played = last_column >= 0
        column = np.maximum(last_column, 0)
        top_row = self._landing_rows(states[:, : self.num_cells], column) + 1
        return np.where(played, top_row * self.width + column, -1)

    # ----- symmetries ----------------------------------------------------------------------------
    def _build_action_map(self, k: int) -> np.ndarray:
        """Columns: identity for k = 0, mirrored (c -> 6 - c) for k = 1."""
        columns = np.arange(self.width, dtype=np.int64)
        out = columns if k == 0 else columns[::-1].copy()
        out.setflags(write=False)
        return out

    # ----- notation ------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        """Column 0..6 -> "1".."7"."""
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise GameError(f"Connect Four action {action} out of range 0..6")
        return str(action + 1)

    def parse_action(self, text: str) -> int:
        return parse_digit(str(text), self.width, _WHAT, _HINT)

    def parse_moves(self, text: str) -> list[int]:
        return parse_digit_moves(text, self.width, _WHAT, _HINT)

    def moves_to_str(self, actions: list[int]) -> str:
        return "".join(self.action_to_str(a) for a in actions)

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """One state [S] -> text board, column numbers 1-7 above and below, rows 1-6 from the bottom."""
        state = self._single_state(state)
        last_cell = int(self._last_move_cells(state[None, :])[0]) if highlight_last else -1
        cells = state[: self.num_cells].reshape(self.height, self.width)
        col_labels = [str(c + 1) for c in range(self.width)]
        row_labels = [str(self.height - r) for r in range(self.height)]
        lines = render_grid(cells, last_cell, col_labels, row_labels)
        return "\n".join(lines + [self._status_line(state)])
