"""One descriptor per game family (`GameFamily`), and the registry that the generic code reads.

Everything the rest of zeroforge needs to know about a family of games lives in its descriptor: how its names
are written and parsed, its presets, default network sizes and pipeline settings, the solver it adds at the root
of a move choice, its match openings, its extra baseline players, its notation help. Generic code asks
`family_of(game)` instead of testing names, so that adding a game is one package plus one `register_family`:

    register_family(GameFamily(name="nim", parse=parse_nim, presets=("nim-3",), ...))
    make_game("nim-3")                  # now known everywhere the built-in games are

A descriptor is plain data: values and callables. Callables that need heavy modules (solvers, search-side glue)
import them when called, so that `shared.games` stays importable without torch and without `shared.search`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from shared.games.base import Game, GameError

if TYPE_CHECKING:
    import numpy as np

#: root_solver(game, simulations) -> None when the family's root solver does not run for searches of that many
#: simulations, else moves(states [B, S] int16, actions [B] int64, visits [B, A] float32) -> actions [B] int64.
RootSolver = Callable[[Game, "int | None"], "Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None"]


@dataclass(frozen=True)
class BaselinePlayer:
    """A fixed player that only this family's games can seat (e.g. minimax, weights, gnugo:LEVEL).

    build(game, value, seed) -> Player (value: the text after "kind:" in the spec, "" without one);
    only: how the family is named in "KIND plays only ONLY, not GAME" (None: no check before it plays)."""

    build: Callable[[Game, str, int], Any]
    only: str | None = None


@dataclass(frozen=True)
class EngineProtocol:
    """An engine protocol the family's games speak on stdin/stdout (`zeroforge gtp`, `zeroforge pbrain`):
    the default game of the command, its --game help, and protocol-specific helpers (e.g. GTP's score text)."""

    default_game: str
    game_help: str
    helpers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)


def _no_size(name: str) -> None:
    return None


@dataclass(frozen=True)
class GameFamily:
    """What zeroforge knows about one family of games (module docstring). Only `name` and `parse` are required.

    name: the family name, the "family" entry of `Game.params()` and the first word of its game names.
    parse(key) -> Game | None: a lower-cased, stripped game name -> the game; None when the name is not written
        in this family's grammar; GameError when it is but names no valid game (e.g. a size out of range).
    name_from_params(params) -> the game name of `Game.params()` without a "name" entry (KeyError, TypeError or
        ValueError when a field is missing or malformed).
    with_params(game, params) -> the game with the params that its name does not carry (e.g. Go's komi).
    presets: preset names, in the order `GAME_NAMES` lists them.
    name_forms: how the family's names are written, for "known forms" messages.
    names_help: what else is accepted after the presets in "valid names: ...", "" when nothing.
    network_size(name) -> (blocks, channels) of the default network for that game name, None if none.
    config_defaults(name) -> the per-game pipeline settings {section: {field: value}} (only fields that differ
        from the section defaults; in [game] only the network's optional parts, e.g. line_planes: its name and
        size come from network_size), None when the name has no defaults.
    default_anchor: the gate's anchor player spec for the family's games, None for the section default.
    root_solver: see `RootSolver`; None when the family has no solver at the root of a move choice.
    opening_plan(game) -> (allowed opening lengths, allowed actions [A] bool) for match openings.
    opening_filter(game, openings) -> the openings worth playing (e.g. tic-tac-toe's drawn ones only).
    baseline_players: extra fixed player kinds (player spec kind -> BaselinePlayer).
    side_names: the names of the first and second player in messages ("X", "O" or "black", "white").
    move_form(game) -> how one move is written, for error messages; None: an example move.
    column_moves: an action is a column, illegal only when the column is full.
    sgf_records: `play` writes this family's game records as SGF.
    protocols: the engine protocols the family's games speak (name -> EngineProtocol).
    tactics_solver(game, max_nodes) -> label(state [S]) -> solved move values [A] int64, for `bench tactics`.
    tactics_span: what `bench tactics` draws positions by with that solver: "plies" or "empties".
    oracle_set(game, count, seed) -> OracleSet (shared.games.oracle_set): about `count` labelled positions on which
        each generation's best network is measured, the same for a seed; None when the family has no exact labels.
    oracle_set_from_positions(game, states [M, S] int16, count, seed) -> OracleSet: up to `count` of the given
        positions (e.g. a run's own self-play positions, `bench oracle --from-shards`) labelled as oracle_set labels
        its own; None when the family's labels come with its own positions (Gomoku's tactics) or it has none.
    oracle_phases: further named oracle sets, name -> builder(game, count, seed) -> OracleSet, that `bench oracle
        --phase NAME` scores on instead of oracle_set's (e.g. Othello's "late-midgame": too slow to label for every
        run, so built on demand).
    """

    name: str
    parse: Callable[[str], Game | None]
    name_from_params: Callable[[Mapping[str, Any]], str] | None = None
    with_params: Callable[[Game, Mapping[str, Any]], Game] | None = None
    presets: tuple[str, ...] = ()
    name_forms: tuple[str, ...] = ()
    names_help: str = ""
    network_size: Callable[[str], tuple[int, int] | None] = _no_size
    config_defaults: Callable[[str], dict[str, dict[str, Any]] | None] = _no_size
    default_anchor: str | None = None
    root_solver: RootSolver | None = None
    opening_plan: Callable[[Game], tuple[tuple[int, ...], "np.ndarray"]] | None = None
    opening_filter: Callable[[Game, list[list[int]]], list[list[int]]] | None = None
    baseline_players: Mapping[str, BaselinePlayer] = field(default_factory=dict)
    side_names: tuple[str, str] = ("X", "O")
    move_form: Callable[[Game], str] | None = None
    column_moves: bool = False
    sgf_records: bool = False
    protocols: Mapping[str, EngineProtocol] = field(default_factory=dict)
    tactics_solver: Callable[[Game, int], Callable[["np.ndarray"], "np.ndarray"]] | None = None
    tactics_span: str | None = None
    oracle_set: Callable[[Game, int, int], Any] | None = None
    oracle_set_from_positions: Callable[[Game, "np.ndarray", int, int], Any] | None = None
    oracle_phases: Mapping[str, Callable[[Game, int, int], Any]] = field(default_factory=dict)


#: The descriptor of games whose family is not registered (e.g. a test's stand-in game): no hooks, defaults only.
UNREGISTERED = GameFamily(name="", parse=lambda key: None)

_FAMILIES: dict[str, GameFamily] = {}


def register_family(family: GameFamily) -> GameFamily:
    """Add `family` to the registry (replacing a family of the same name); returns it."""
    if not isinstance(family, GameFamily) or not family.name:
        raise GameError(f"register_family needs a GameFamily with a name, got {family!r}")
    _FAMILIES[family.name] = family
    return family


def unregister_family(name: str) -> GameFamily | None:
    """Remove the family called `name` from the registry (e.g. a test's own family); returns it, None if absent."""
    return _FAMILIES.pop(name, None)


def families() -> Mapping[str, GameFamily]:
    """The registered families by name, in registration order (read-only)."""
    return MappingProxyType(_FAMILIES)


def family_named(name: Any) -> GameFamily | None:
    """The registered family called `name` (the "family" entry of game params), None if none."""
    return _FAMILIES.get(name) if isinstance(name, str) else None


def family_of(game: Game) -> GameFamily:
    """The descriptor of `game`'s family: by its `family` attribute (or params entry), else by its name's
    grammar; `UNREGISTERED` when no registered family claims it."""
    name = getattr(game, "family", None)
    if name is None:
        name = game.params().get("family")
    found = family_named(name)
    if found is not None:
        return found
    key = str(getattr(game, "name", "")).strip().lower()
    for family in _FAMILIES.values():
        try:
            if family.parse(key) is not None:
                return family
        except GameError:
            continue
    return UNREGISTERED


def game_names() -> tuple[str, ...]:
    """The preset names of every registered family, in registration order."""
    return tuple(name for family in _FAMILIES.values() for name in family.presets)


def valid_names_text() -> str:
    """"valid names: ..." for messages about unknown game names."""
    extras = "".join(f", or {family.names_help}" for family in _FAMILIES.values() if family.names_help)
    return f"valid names: {', '.join(game_names())}{extras}"


def parse_game(name: str) -> Game | None:
    """The game a lower-cased, stripped name names in any registered family; None if no family's grammar reads it
    (GameError from the family when its grammar does but the name is invalid)."""
    for family in _FAMILIES.values():
        game = family.parse(name)
        if game is not None:
            return game
    return None


def family_for_name(name: Any) -> GameFamily | None:
    """The family of the game called `name`, None when no registered family reads the name (or it is invalid)."""
    if not isinstance(name, str):
        return None
    try:
        game = parse_game(name.strip().lower())
    except GameError:
        return None
    return None if game is None else family_of(game)


def engine_protocol(protocol: str) -> EngineProtocol:
    """The `EngineProtocol` entry of the first registered family that speaks `protocol` ("gtp", "pbrain");
    GameError when none does."""
    for family in _FAMILIES.values():
        if protocol in family.protocols:
            return family.protocols[protocol]
    raise GameError(f"no registered game family speaks {protocol}")


def speaks(game: Game, protocol: str) -> bool:
    """Whether `game`'s family speaks the engine protocol `protocol`."""
    return protocol in family_of(game).protocols
