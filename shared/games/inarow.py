"""`InARowGame`: place a stone on any empty cell; n or more in a row wins; a full board is a draw.

The rules of tic-tac-toe and freestyle Gomoku (they differ only in board size and notation).
Action = cell index row * W + col (row 0 at the top). Encoding: the 4 base planes of `GridGame`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from shared.games.base import F_PLAYER, F_PLY
from shared.games.grid import BASE_PLANES, GridGame
from shared.games.lines import completes_line, empty_cells, line_move_outcomes, line_step_stored


class InARowGame(GridGame):
    """Stones are placed on empty cells; `n_in_row` or more in a line (overlines included) wins."""

    fast_move_outcomes = True

    def __init__(self, name: str, height: int, width: int, n_in_row: int) -> None:
        group = "dihedral" if height == width else "rectangle"
        super().__init__(name, height, width, num_actions=height * width, num_planes=BASE_PLANES,
                         symmetry_group=group)
        self.n_in_row = n_in_row

    def params(self) -> dict[str, Any]:
        return {**super().params(), "n_in_row": self.n_in_row}

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16 -> [B, A] bool: the empty cells, none once the game is over."""
        self._check_states(states)
        return empty_cells(states, self.num_cells, self.num_cells)

    def _play(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        new = states.copy()
        mover = states[:, self.num_cells + F_PLAYER]
        new[np.arange(states.shape[0]), actions] = mover
        won = completes_line(new[:, : self.num_cells], actions // self.width, actions % self.width,
                             self.height, self.width, self.n_in_row)
        board_full = states[:, self.num_cells + F_PLY] + 1 >= self.num_cells
        self._record_move(new, actions, done=won | board_full, winner=np.where(won, mover, 0))
        return new

    def step_stored(self, store: np.ndarray, slots: np.ndarray, parents: np.ndarray, children: np.ndarray,
                    actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`Game.step_stored`, compiled (`shared.games.lines.line_step_stored`): the same positions as `step`."""
        return line_step_stored(store, slots, parents, children, actions, self.height, self.width, self.n_in_row,
                                gravity=False)

    # ----- tactics -------------------------------------------------------------------------------
    def winning_moves(self, states: np.ndarray) -> np.ndarray:
        """[B, S] int16 -> [B, A] bool: empty cells that complete n in a row for the side to move."""
        return self.move_outcomes(states) == 1

    def move_outcomes(self, states: np.ndarray) -> np.ndarray:
        """[B, S] int16 -> [B, A] int8 (see `Game.move_outcomes`), complete: a stone never removes a winning cell
        of the opponent except by filling it, so a non-winning move loses exactly when the opponent has a winning
        cell other than the one played (`shared.games.lines.line_move_outcomes`)."""
        self._check_states(states)
        return line_move_outcomes(states, self.height, self.width, self.n_in_row, gravity=False)
