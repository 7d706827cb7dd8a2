"""zeroforge's board games behind one batched interface (`Game`, see base.py), and the name registry.

    make_game("gomoku-15")                    -> Gomoku 15x15, five in a row
    make_game("gomoku-7x9-4")                 -> any "gomoku-{H}x{W}-{n}", H, W in 5..20, n in 3..6
    make_game("go-9x9")                       -> Go 9x9, komi 7.5; any "go-{N}x{N}", N in 5..19
    make_game_from_params({"name": "go-9x9", "komi": 6.5})  -> Go 9x9 with komi 6.5 (komi is a game param)
    make_game_from_params(game.params())      -> the same game again (model files, shards)

Names are case-insensitive; "gomoku-15x15-5" is the same game as "gomoku-15" (its canonical name),
"othello-8x8" the same as "othello".

Each family of games is a package here (tictactoe, connect4, gomoku, othello, go) with its rules, compiled
kernels, solvers and its descriptor (`GameFamily`, family.py); the names are read through the registry of
descriptors, so a family registered with `register_family` is known by name like the built-in ones. Families
from outside the tree come in through the "zeroforge.games" entry points and ZEROFORGE_GAMES (plugins.py;
docs/adding-a-game.md).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games import connect4, go, gomoku, othello, tictactoe
from shared.games.base import Game, GameError
from shared.games.family import (GameFamily, families, family_named, family_of, game_names, parse_game,
                                 register_family, valid_names_text)
from shared.games.plugins import load_game_plugins, plugin_problems

__all__ = ["GAME_NAMES", "Game", "GameError", "GameFamily", "families", "family_of", "game_names", "make_game",
           "make_game_from_params", "register_family"]

for _package in (tictactoe, connect4, gomoku, othello, go):
    register_family(_package.FAMILY)

#: The preset names of the built-in games (any "gomoku-{H}x{W}-{n}" and "go-{N}x{N}" is accepted too);
#: `game_names()` adds those of families registered later.
GAME_NAMES: tuple[str, ...] = game_names()

load_game_plugins()


def make_game(name: str) -> Game:
    """Build a game from its name (see GAME_NAMES); GameError listing the valid names if unknown."""
    if not isinstance(name, str):
        raise GameError(f"a game name must be a string, got {type(name).__name__}; {valid_names_text()}")
    game = parse_game(name.strip().lower())
    if game is None:
        problems = "".join(f"; {problem}" for problem in plugin_problems())
        raise GameError(f"unknown game {name!r}; {valid_names_text()}{problems}")
    return game


def _name_from_family(params: Mapping[str, Any]) -> str:
    family = family_named(params.get("family"))
    if family is not None and family.name_from_params is not None:
        try:
            return family.name_from_params(params)
        except (KeyError, TypeError, ValueError) as exc:
            raise GameError(f"game params {dict(params)!r} lack a valid {exc}: give 'name' or the family's size "
                            "fields") from None
    raise GameError(f"game params {dict(params)!r} have neither a 'name' nor a known 'family' "
                    f"({', '.join(families())})")


def make_game_from_params(params: Mapping[str, Any]) -> Game:
    """Rebuild the game described by `params` (a dict from `Game.params()`); GameError if unknown or inconsistent.

    Every key must be one the game reports and agree with it (e.g. a stored height of 9 for "gomoku-15" is an error);
    params the name does not carry are applied by the family (Go's "komi", default 7.5, sets the komi).
    """
    if not isinstance(params, Mapping):
        raise GameError(f"game params must be a dict like {{'name': 'connect4'}}, got {type(params).__name__}")
    name = params.get("name")
    game = make_game(name if name is not None else _name_from_family(params))
    family = family_of(game)
    if family.with_params is not None:
        game = family.with_params(game, params)
    expected = game.params()
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise GameError(f"game params for {game.name} have unknown keys {unknown}; expected keys {sorted(expected)}")
    for key, value in params.items():
        if key != "name" and value != expected[key]:
            raise GameError(f"game params disagree with {game.name}: {key}={value!r} but the game has {key}={expected[key]!r}")
    return game
