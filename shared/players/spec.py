"""Player specifications: one string names any player that can sit at the board.

    random              uniformly random legal moves
    minimax             perfect play (tic-tac-toe only)
    weights             Othello's classic square-weights evaluation, one ply deep (Othello only;
                        shared.games.othello.weights)
    pure-mcts:N         pure MCTS with N random-rollout playouts per move (the classic baseline)
    gnugo:LEVEL         GNU Go at level 0..10 over GTP (Go only; shared.games.go.gnugo)
    best                the registry's current best version; with no registry or no best yet, the model
                        shipped for the game (with a note saying so), the one fallback of eval, play and analyze
    000012 or 12        a registry version
    shipped             the model shipped with zeroforge for this game
    path/to/model.pt    a model file

Network players search with the SearchConfig they are given (built from the config's [search] section by
`SearchSection.search_config`), no noise, temperature 0. A registry version's file is checked against the
registry's sha256 before it is loaded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shared.games import Game, families, family_of
from shared.games.family import BaselinePlayer
from shared.layout import shipped_model_names, shipped_model_path
from shared.players.player import MCTSPlayer, PureMCTSPlayer, RandomPlayer
from shared.registry import ModelRegistry
from shared.search.types import SearchConfig

#: Upper bound of pure-mcts:N (a million playouts per move already takes minutes per move).
MAX_PURE_MCTS_PLAYOUTS = 1_000_000


class PlayerSpecError(ValueError):
    """A player spec cannot be understood or resolved; the message lists the accepted forms."""


SPEC_HELP = ("random, minimax, weights (Othello), pure-mcts:N, gnugo:LEVEL (Go), best, shipped, a registry version (e.g. 000012) "
             "or a model file path")


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec: kind is one of random|minimax|weights|pure-mcts|gnugo|version|best|shipped|file."""

    kind: str
    value: str = ""

    @property
    def uses_network(self) -> bool:
        return self.kind in ("version", "best", "shipped", "file")


def parse_player_spec(text: str) -> PlayerSpec:
    """Parse a spec string (see the module docstring) -> PlayerSpec; PlayerSpecError if malformed."""
    text = text.strip()
    if text in ("random", "minimax", "weights", "best", "shipped"):
        return PlayerSpec(text)
    match = re.fullmatch(r"pure-mcts:([0-9]{1,30})", text)
    if match:
        playouts = int(match.group(1))
        if not 1 <= playouts <= MAX_PURE_MCTS_PLAYOUTS:
            raise PlayerSpecError(f"{text!r}: pure-mcts needs 1 to {MAX_PURE_MCTS_PLAYOUTS:,} playouts per move")
        return PlayerSpec("pure-mcts", str(playouts))
    if text.startswith("pure-mcts"):
        raise PlayerSpecError(f"{text!r}: write pure-mcts:N with N the playouts per move, e.g. pure-mcts:1000")
    match = re.fullmatch(r"gnugo:(\d{1,3})", text)
    if match and int(match.group(1)) <= 10:
        return PlayerSpec("gnugo", str(int(match.group(1))))
    if text.startswith("gnugo"):
        raise PlayerSpecError(f"{text!r}: write gnugo:LEVEL with LEVEL from 0 to 10 (GNU Go's strength), e.g. gnugo:1")
    kind, _, value = text.partition(":")
    if kind in _baseline_kinds() - _SPELLED_KINDS:
        return PlayerSpec(kind, value)       # a baseline kind of a registered family (its builder reads the value)
    if re.fullmatch(r"[0-9]{1,6}", text):
        return PlayerSpec("version", f"{int(text):06d}")
    if text and (text.endswith(".pt") or Path(text).is_file()):
        return PlayerSpec("file", text)
    raise PlayerSpecError(f"unknown player {text!r}; use one of: {SPEC_HELP}")


#: The kinds whose spelling the grammar above checks itself (other families' baseline kinds are "KIND[:VALUE]").
_SPELLED_KINDS = {"random", "minimax", "weights", "pure-mcts", "gnugo", "best", "shipped"}


def _baseline_kinds() -> set[str]:
    return {kind for family in families().values() for kind in family.baseline_players}


def _baseline(spec: PlayerSpec, game: Game) -> BaselinePlayer:
    """The builder of a baseline kind: the game family's own, else the first family that offers the kind (whose
    builder then refuses the game with its own message)."""
    own = family_of(game).baseline_players.get(spec.kind)
    if own is not None:
        return own
    for family in families().values():
        if spec.kind in family.baseline_players:
            return family.baseline_players[spec.kind]
    raise PlayerSpecError(f"no game family offers the player {spec.kind!r}; use one of: {SPEC_HELP}")


def _owners(kind: str) -> str:
    """How the families offering `kind` are named in "KIND plays only ..." ("" when none checks its games)."""
    return ", ".join(family.baseline_players[kind].only for family in families().values()
                     if kind in family.baseline_players and family.baseline_players[kind].only)


@dataclass(frozen=True)
class ResolvedModel:
    """The model file a network spec names, how to call it in a banner or a report, and any note about a
    fallback (e.g. `best` played by the shipped model because the registry has no best yet)."""

    path: Path
    label: str              # "000012 (best)", "000012", "shipped", or the file path
    version: str | None     # registry version when the model comes from the registry, else None
    shipped: bool = False
    note: str | None = None


def _shipped(game: Game, note: str | None = None) -> ResolvedModel:
    path = shipped_model_path(game.name)
    if not path.is_file():
        available = shipped_model_names()
        raise PlayerSpecError(f"no shipped model for {game.name}; shipped models exist for: {', '.join(available) or 'none'}")
    return ResolvedModel(path, "shipped", None, shipped=True, note=note)


def resolve_model(spec: PlayerSpec, game: Game, registry_dir: Path | None) -> ResolvedModel:
    """The model a network spec refers to; PlayerSpecError saying what is missing otherwise.

    `best` without a registry, or with a registry that has no best yet, falls back to the model shipped for
    the game (ResolvedModel.note says so); without a shipped model either it is an error.
    """
    if spec.kind == "file":
        path = Path(spec.value)
        if not path.is_file():
            raise PlayerSpecError(f"model file {path} does not exist")
        return ResolvedModel(path, str(path), None)
    if spec.kind == "shipped":
        return _shipped(game)
    has_registry = registry_dir is not None and Path(registry_dir).exists()
    registry = ModelRegistry(registry_dir) if has_registry else None
    if spec.kind == "best":
        version = registry.best_version() if registry is not None else None
        if version is None:
            where = (f"the registry at {registry_dir} has no best model yet" if has_registry
                     else f"no model registry for {game.name}" + (f" at {registry_dir}" if registry_dir else ""))
            if not shipped_model_path(game.name).is_file():
                raise PlayerSpecError(
                    f"player 'best': {where} and no model is shipped for {game.name}; train one with "
                    f"`zeroforge run --game {game.name}` (or `zeroforge models init`), pass --data-dir, or use a model file"
                )
            return _shipped(game, note=f"{where}; 'best' plays the shipped {game.name} model")
        return ResolvedModel(Path(registry.verify(version).path), f"{version} (best)", version)
    if registry is None:
        raise PlayerSpecError(
            f"player {spec.value!r} needs a model registry, but none exists for {game.name} "
            "(train one with `zeroforge run`, pass --data-dir, or use `shipped` or a model file)"
        )
    # RegistryError when the version does not exist or its file is not the registered one
    return ResolvedModel(Path(registry.verify(spec.value).path), spec.value, spec.value)


def resolve_model_path(spec: PlayerSpec, game: Game, registry_dir: Path | None) -> Path:
    """The model file a network spec refers to (see `resolve_model`, whose fallback it shares)."""
    return resolve_model(spec, game, registry_dir).path


def build_player(
    spec: PlayerSpec | str,
    game: Game,
    *,
    search: SearchConfig,
    registry_dir: Path | None = None,
    device: str = "cpu",
    seed: int = 0,
):
    """Construct the Player a spec names (see shared.players.player for the Player protocol).

    Network players search with `search`; pure-mcts, random and minimax are fixed yardsticks with their own
    settings. Player rng: numpy default_rng(seed).
    """
    if isinstance(spec, str):
        spec = parse_player_spec(spec)
    rng = np.random.default_rng(seed)
    if spec.kind == "random":
        return RandomPlayer(game, rng)
    if spec.kind == "pure-mcts":
        return PureMCTSPlayer(game, int(spec.value), rng)
    if spec.kind in _baseline_kinds():
        return _baseline(spec, game).build(game, spec.value, seed)
    from shared.network import TorchEvaluator, load_model   # torch only when a network plays

    path = resolve_model_path(spec, game, registry_dir)
    loaded = load_model(path, device=device, expected_game=game)
    evaluator = TorchEvaluator(loaded.model, game, device=device)
    return MCTSPlayer(game, evaluator, search, rng=rng,
                      name=f"{spec.value or spec.kind}@{search.num_simulations}")


def check_fixed_player(text: str, game: Game, load_network: bool = True) -> PlayerSpec:
    """Check that `text` names a fixed player (random, minimax, weights, pure-mcts:N, gnugo:L or shipped) that can
    play `game` here, without playing: minimax only for tic-tac-toe, weights only for Othello, shipped only where a model for the game ships and loads.
    PlayerSpecError saying what is wrong. Used at start for gate.anchor, so that a bad anchor never waits until
    the first promotion to fail."""
    spec = parse_player_spec(text)
    if spec.kind in ("version", "best", "file"):
        raise PlayerSpecError(f"{text!r} is not a fixed player; use pure-mcts:N, random, minimax, weights or shipped")
    if spec.kind in _baseline_kinds() and spec.kind not in family_of(game).baseline_players:
        only = _owners(spec.kind)
        if only:
            raise PlayerSpecError(f"{spec.kind} plays only {only}, not {game.name}; use pure-mcts:N")
    if spec.kind == "shipped":
        path = resolve_model_path(spec, game, None)
        if load_network:
            from shared.network import NetworkError, load_model

            try:
                load_model(path, device="cpu", expected_game=game)
            except (NetworkError, OSError) as exc:
                raise PlayerSpecError(f"the shipped model for {game.name} ({path}) cannot be loaded: {exc}") from None
    return spec
