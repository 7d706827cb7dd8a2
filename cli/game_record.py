"""The end of a terminal game: the board with its winning line marked, and the game record in the game's
notation or as SGF (Gomoku).

    cells = winning_line(game, state)                    # shared.games.winning_line: [cell, ...] or None
    text = mark_cells(game, state, cells)                # the board, winning stones in ( ), last move in [ ]
    write_record(path, game, actions, result="X wins", players=("you", "zeroforge shipped"))
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from shared.games import family_of
from shared.games.base import Game
from shared.games.notation import COLUMN_LETTERS


def _symbol_columns(game: Game, state: np.ndarray, cells: list[int]) -> dict[int, tuple[int, int]]:
    """(line, column) of each cell's symbol in game.render(state, highlight_last=False): found by rendering
    the board once more with that cell emptied and looking for the one character that changed."""
    plain = game.render(state, highlight_last=False).splitlines()
    where = {}
    for cell in cells:
        emptied = np.array(state, copy=True)
        emptied[cell] = 0
        other = game.render(emptied, highlight_last=False).splitlines()
        changed = [(i, j) for i, (a, b) in enumerate(zip(plain, other)) if a != b
                   for j, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(changed) == 1:
            where[cell] = changed[0]
    return where


def mark_cells(game: Game, state: np.ndarray, cells: list[int] | None, status_line: bool = False) -> str:
    """game.render(state) with the stones of `cells` shown as (X); the last move keeps its [X]. The board's
    own status line ('game over: X wins') is left out unless `status_line`."""
    lines = game.render(state).splitlines()
    if not status_line:
        lines = lines[:-1]
    for line, column in _symbol_columns(game, state, cells or []).values():
        text = lines[line]
        if 0 < column < len(text) - 1 and text[column - 1] == " " and text[column + 1] == " ":
            lines[line] = text[:column - 1] + "(" + text[column] + ")" + text[column + 2:]
    return "\n".join(lines)


def _sgf_point(game: Game, action: int) -> str:
    """SGF coordinates of a cell: column letter then row letter, both from the top left ('aa')."""
    row, col = divmod(int(action), game.width)
    return COLUMN_LETTERS[col] + COLUMN_LETTERS[row]


def sgf_text(game: Game, actions: list[int], result: int | None, players: tuple[str, str]) -> str:
    """An SGF (FF[4], GM[4] = Gomoku) record: size, players (black = first), result when finished
    (+1 first player won, -1 second, 0 draw, None unfinished) and the moves ;B[..];W[..]."""
    size = str(game.width) if game.width == game.height else f"{game.width}:{game.height}"
    header = f"FF[4]GM[4]CA[UTF-8]AP[zeroforge]SZ[{size}]PB[{players[0]}]PW[{players[1]}]"
    header += f"GN[{game.name}]"
    if result is not None:
        header += "RE[" + {1: "B+", -1: "W+", 0: "0"}[int(result)] + "]"
    moves = "".join(f";{'B' if i % 2 == 0 else 'W'}[{_sgf_point(game, a)}]" for i, a in enumerate(actions))
    return f"(;{header}{moves})\n"


def record_text(game: Game, actions: list[int], result: str, players: tuple[str, str]) -> str:
    """A plain record: game, players, result and the moves as one string in the game's notation (the string
    that `--moves` reads back)."""
    return (f"# zeroforge game record\ngame: {game.name}\nfirst: {players[0]}\nsecond: {players[1]}\n"
            f"result: {result}\nmoves: {game.moves_to_str(actions)}\n")


def write_record(path: Path, game: Game, actions: list[int], *, result_text: str, result: int | None,
                 players: tuple[str, str]) -> str:
    """Write the game to `path`: SGF for Gomoku, the plain record otherwise. Returns the format written."""
    if family_of(game).sgf_records:
        Path(path).write_text(sgf_text(game, actions, result, players), encoding="utf-8")
        return "SGF"
    Path(path).write_text(record_text(game, actions, result_text, players), encoding="utf-8")
    return "text"
