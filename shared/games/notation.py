"""Move notation and text boards shared by the games.

Two notations are used:
- digit moves (tic-tac-toe 1-9, Connect Four 1-7): one digit per move, spaces optional ("4453", "5 1 9");
- squares (Gomoku, Othello): a column letter from `a` at the left (no letter skipped) and a row number,
  counted from the bottom (Gomoku, "h8") or from the top (Othello, "f5").
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from shared.games.base import GameError

COLUMN_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_SQUARE = re.compile(r"([a-z])([0-9]{1,2})")
_SEPARATORS = re.compile(r"[\s,;]+")
SYMBOLS = {1: "X", -1: "O", 0: "."}


def split_tokens(text: str) -> list[str]:
    """Split a move list on whitespace, commas and semicolons; empty text gives []."""
    if not isinstance(text, str):
        raise GameError(f"expected a move string, got {type(text).__name__}")
    return [t for t in _SEPARATORS.split(text.strip()) if t]


def parse_digit(token: str, count: int, what: str, hint: str) -> int:
    """One digit 1..count -> 0-based index; GameError naming the token otherwise."""
    token = token.strip()
    if len(token) == 1 and "0" <= token <= "9" and 1 <= int(token) <= count:
        return int(token) - 1
    raise GameError(f"{token!r} is not a {what}: {hint}")


def parse_digit_moves(text: str, count: int, what: str, hint: str) -> list[int]:
    """A digit move string with or without separators ("4453", "4 4 5 3") -> 0-based indices."""
    return [parse_digit(ch, count, what, hint) for token in split_tokens(text) for ch in token]


def square_range_hint(height: int, width: int) -> str:
    """The valid squares of an H x W board in words, e.g. "columns a-o, rows 1-15"."""
    return f"columns a-{COLUMN_LETTERS[width - 1]}, rows 1-{height}"


def parse_square(token: str, height: int, width: int, rows_from_bottom: bool) -> int:
    """A square name like "h8" -> cell index row * width + col (row 0 at the top); GameError if invalid."""
    text = token.strip().lower()
    match = _SQUARE.fullmatch(text)
    if match:
        col = COLUMN_LETTERS.index(match.group(1))
        number = int(match.group(2))
        if col < width and 1 <= number <= height:
            row = height - number if rows_from_bottom else number - 1
            return row * width + col
    counted = "from the bottom" if rows_from_bottom else "from the top"
    raise GameError(f"{token!r} is not a square of a {height}x{width} board: "
                    f"{square_range_hint(height, width)} (rows counted {counted}), e.g. "
                    f"'{square_name(0, 0, height, rows_from_bottom)}'")


def square_name(row: int, col: int, height: int, rows_from_bottom: bool) -> str:
    """Cell (row, col), row 0 at the top -> square name such as "h8"."""
    number = height - row if rows_from_bottom else row + 1
    return f"{COLUMN_LETTERS[col]}{number}"


def render_grid(cells: np.ndarray, last_cell: int, col_labels: Sequence[str], row_labels: Sequence[str]) -> list[str]:
    """Text board lines: cells [H, W] int values (+1 'X', -1 'O', 0 '.'), the last move in [brackets].

    Column labels are written above and below, row labels left and right of each row.
    """
    height, width = cells.shape
    pad = max(len(label) for label in row_labels)
    header = " " * (pad + 1) + "".join(label.center(3) for label in col_labels)
    lines = [header.rstrip()]
    for row in range(height):
        parts = []
        for col in range(width):
            symbol = SYMBOLS[int(cells[row, col])]
            is_last = row * width + col == last_cell
            parts.append(f"[{symbol}]" if is_last else f" {symbol} ")
        label = row_labels[row]
        lines.append(f"{label.rjust(pad)} {''.join(parts)} {label}")
    lines.append(header.rstrip())
    return lines
