"""zeroforge's board games behind one batched interface (`Game`, see base.py), and the name registry.

    make_game("gomoku-15")                    -> Gomoku 15x15, five in a row
    make_game("gomoku-7x9-4")                 -> any "gomoku-{H}x{W}-{n}", H, W in 5..20, n in 3..6
    make_game("go-9x9")                       -> Go 9x9, komi 7.5; any "go-{N}x{N}", N in 5..19
    make_game_from_params({"name": "go-9x9", "komi": 6.5})  -> Go 9x9 with komi 6.5 (komi is a game param)
    make_game_from_params(game.params())      -> the same game again (model files, shards)

Names are case-insensitive; "gomoku-15x15-5" is the same game as "gomoku-15" (its canonical name),
"othello-8x8" the same as "othello".
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Callable

from shared.games.base import Game, GameError
from shared.games.connect4 import Connect4
from shared.games.go import DEFAULT_KOMI, Go, check_komi
from shared.games.go import SIZE_RULES as GO_SIZE_RULES
from shared.games.gomoku import SIZE_RULES, Gomoku, gomoku_name
from shared.games.othello import Othello
from shared.games.tictactoe import TicTacToe

__all__ = ["GAME_NAMES", "Game", "GameError", "make_game", "make_game_from_params"]

_PRESETS: dict[str, Callable[[], Game]] = {
    "tictactoe": TicTacToe,
    "connect4": Connect4,
    "gomoku-15": lambda: Gomoku(15, 15, 5),
    "gomoku-8x8-5": lambda: Gomoku(8, 8, 5),
    "gomoku-6x6-4": lambda: Gomoku(6, 6, 4),
    "othello": lambda: Othello(8),
    "othello-6x6": lambda: Othello(6),
    "go-9x9": lambda: Go(9),
}
_ALIASES = {"othello-8x8": "othello"}

#: The preset game names (any "gomoku-{H}x{W}-{n}" and "go-{N}x{N}" is accepted too).
GAME_NAMES: tuple[str, ...] = tuple(_PRESETS)

_GOMOKU_NAME = re.compile(r"gomoku-([0-9]{1,3})x([0-9]{1,3})-([0-9]{1,3})")
_GO_NAME = re.compile(r"go-([0-9]{1,3})x([0-9]{1,3})")


def _valid_names_text() -> str:
    return (f"valid names: {', '.join(GAME_NAMES)}, or 'gomoku-{{H}}x{{W}}-{{n}}' with {SIZE_RULES}, "
            f"or {GO_SIZE_RULES}")


def make_game(name: str) -> Game:
    """Build a game from its name (see GAME_NAMES); GameError listing the valid names if unknown."""
    if not isinstance(name, str):
        raise GameError(f"a game name must be a string, got {type(name).__name__}; {_valid_names_text()}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key in _PRESETS:
        return _PRESETS[key]()
    match = _GOMOKU_NAME.fullmatch(key)
    if match:
        height, width, n_in_row = (int(g) for g in match.groups())
        return Gomoku(height, width, n_in_row)
    match = _GO_NAME.fullmatch(key)
    if match:
        height, width = (int(g) for g in match.groups())
        if height != width:
            raise GameError(f"go board {height}x{width} is not square: {GO_SIZE_RULES}")
        return Go(height)
    raise GameError(f"unknown game {name!r}; {_valid_names_text()}")


def _name_from_family(params: Mapping[str, Any]) -> str:
    family = params.get("family")
    if family in ("tictactoe", "connect4"):
        return str(family)
    try:
        if family == "gomoku":
            return gomoku_name(int(params["height"]), int(params["width"]), int(params["n_in_row"]))
        if family == "othello":
            size = int(params["height"])
            return "othello" if size == 8 else f"othello-{size}x{size}"
        if family == "go":
            return f"go-{int(params['height'])}x{int(params['width'])}"
    except (KeyError, TypeError, ValueError) as exc:
        raise GameError(f"game params {dict(params)!r} lack a valid {exc}: give 'name' or the family's size fields") from None
    raise GameError(f"game params {dict(params)!r} have neither a 'name' nor a known 'family' "
                    f"(tictactoe, connect4, gomoku, othello, go)")


def make_game_from_params(params: Mapping[str, Any]) -> Game:
    """Rebuild the game described by `params` (a dict from `Game.params()`); GameError if unknown or inconsistent.

    Every key must be one the game reports and agree with it (e.g. a stored height of 9 for "gomoku-15" is an error);
    Go's "komi" (default 7.5) sets the komi of the rebuilt game.
    """
    if not isinstance(params, Mapping):
        raise GameError(f"game params must be a dict like {{'name': 'connect4'}}, got {type(params).__name__}")
    name = params.get("name")
    game = make_game(name if name is not None else _name_from_family(params))
    if isinstance(game, Go) and params.get("komi", DEFAULT_KOMI) != DEFAULT_KOMI:
        game = Go(game.height, komi=check_komi(params["komi"]))
    expected = game.params()
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise GameError(f"game params for {game.name} have unknown keys {unknown}; expected keys {sorted(expected)}")
    for key, value in params.items():
        if key != "name" and value != expected[key]:
            raise GameError(f"game params disagree with {game.name}: {key}={value!r} but the game has {key}={expected[key]!r}")
    return game
