"""Tic-tac-toe: 3x3, three in a row wins, a full board without a line is a draw.

Actions: cell index row * 3 + col, row 0 at the top (0..8).
Notation: the digits 1-9, row by row from the top left::

    1 2 3
    4 5 6
    7 8 9

A move list is digits with or without spaces ("5 1 9" == "519"); `moves_to_str` writes "519".
Encoding (4 planes, side to move's view): 0 own marks, 1 opponent marks, 2 last move (one-hot),
3 side to move (ones when X, the first player, is to move).
Symmetries: the 8 of the square. X (first player) = +1, O = -1.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_LAST, GameError
from shared.games.inarow import InARowGame
from shared.games.notation import SYMBOLS, parse_digit, parse_digit_moves

_WHAT = "tic-tac-toe square"
_HINT = "use one digit 1-9, numbered row by row from the top left (1 2 3 / 4 5 6 / 7 8 9), e.g. '5 1 9' or '519'"


class TicTacToe(InARowGame):
    """Tic-tac-toe on the batched state layout of `shared.games.base`."""

    family = "tictactoe"

    def __init__(self) -> None:
        super().__init__("tictactoe", 3, 3, 3)

    def action_to_str(self, action: int) -> str:
        """Action 0..8 -> "1".."9"."""
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise GameError(f"tic-tac-toe action {action} out of range 0..8")
        return str(action + 1)

    def parse_action(self, text: str) -> int:
        return parse_digit(str(text), 9, _WHAT, _HINT)

    def parse_moves(self, text: str) -> list[int]:
        return parse_digit_moves(text, 9, _WHAT, _HINT)

    def moves_to_str(self, actions: list[int]) -> str:
        return "".join(self.action_to_str(a) for a in actions)

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """One state [S] -> the board (last move in [brackets]) with the square numbers beside it."""
        state = self._single_state(state)
        cells = state[: self.num_cells].reshape(3, 3)
        last = int(state[self.num_cells + F_LAST]) if highlight_last else -1
        lines = []
        for row in range(3):
            marks = []
            for col in range(3):
                symbol = SYMBOLS[int(cells[row, col])]
                marks.append(f"[{symbol}]" if row * 3 + col == last else f" {symbol} ")
            key = " ".join(str(row * 3 + col + 1) for col in range(3))
            lines.append("|".join(marks) + "    " + key)
            if row < 2:
                lines.append("---+---+---")
        lines.append(self._status_line(state))
        return "\n".join(lines)
