"""Helpers shared by `zeroforge eval`, `analyze` and `play`: one-line errors, the game, the data root, the model.

Errors print one line `error: ...` on stderr and exit with code 2 (as in `zeroforge models`).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import click

from shared.games import Game, GameError, make_game
from shared.layout import DataLayout, LayoutError, default_data_root


def fail(message: object) -> NoReturn:
    """One-line error on stderr, exit code 2."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise click.exceptions.Exit(2)


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Exceptions that mean bad input (a spec, a file, a move, a setting), not a bug."""
    from shared.players.analysis import AnalysisError
    from shared.players.match import EvaluationError
    from shared.players.spec import PlayerSpecError
    from shared.registry import RegistryError
    from shared.search.errors import ArenaError, SearchError
    from shared.stats import StatsError

    errors: tuple[type[BaseException], ...] = (AnalysisError, ArenaError, EvaluationError, GameError, LayoutError,
                                               PlayerSpecError, RegistryError, SearchError, StatsError, OSError,
                                               UnicodeError)
    try:
        from shared.network import NetworkError  # ModelFileError is a NetworkError
    except ImportError:  # torch missing: no network errors can happen either
        return errors
    return errors + (NetworkError,)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn the user-error exceptions raised inside the block into `error: ...` + exit 2."""
    types = _user_error_types()
    try:
        yield
    except types as exc:
        fail(exc)


def canonical_game_name(game_name: str) -> str:
    """The game's own name (make_game(game_name).name: the name its data lives under); GameError when unknown."""
    return make_game(game_name).name


def game_and_registry(game_name: str, data_dir: Path | None) -> tuple[Game, Path]:
    """make_game(game_name) and its registry dir under --data-dir (default data root otherwise)."""
    game = make_game(game_name)
    root = data_dir if data_dir is not None else default_data_root()
    return game, DataLayout(root, game.name).registry_dir


def game_config(game_name: str, config_file: Path | None = None):
    """The game's GatekeeperConfig (defaults < --config file < ZEROFORGE_* environment): the search settings,
    gate simulations, opening seed and chunking that eval/analyze/play share with the pipeline's gate."""
    import os

    from shared.config import ConfigError, GatekeeperConfig, load_config

    try:
        return load_config(GatekeeperConfig, game_name, config_file, os.environ, {})
    except ConfigError as exc:
        fail(exc)


def config_file_option(func):
    return click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                        help="TOML config whose [search] and [gate] settings the players use (the run's config "
                             "file) [default: the game's defaults].")(func)


def game_option(func):
    return click.option("--game", "game_name", required=True,
                        help="Game: tictactoe, connect4, gomoku-15, gomoku-HxW-N, othello, othello-6x6 ...")(func)


def data_dir_option(func):
    return click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
                        help="Data root holding the registry (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")(func)


def model_option(func):
    return click.option("--model", "model_text", default=None, metavar="MODEL",
                        help="best, shipped, a registry version (e.g. 000012) or a model file "
                             "[default: the registry's best if there is one, else the shipped model].")(func)


def device_option(func):
    return click.option("--device", default="cpu", show_default=True,
                        help="Torch device for network players: cpu, cuda or cuda:N.")(func)


def checked_device(device: str) -> str:
    """`device` if torch can use it here (cpu, cuda, cuda:N), else a one-line error and exit 2."""
    if device == "cpu":
        return device
    from services.worker import WorkerConfigError, validate_device

    try:
        return validate_device(device)
    except WorkerConfigError as exc:
        fail(exc)


def shipped_summary(game_name: str) -> str:
    """One line from the shipped model's JSON training record: generations, self-play games, training time
    and its first measured result ('' when there is no record)."""
    import json

    from shared.layout import shipped_record_path

    try:
        record = json.loads(shipped_record_path(game_name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    parts = []
    if isinstance(record.get("generations"), int):
        parts.append(f"{record['generations']} generations")
    if isinstance(record.get("selfplay_games"), int):
        parts.append(f"{record['selfplay_games']:,} self-play games")
    if isinstance(record.get("wall_clock_minutes"), (int, float)):
        parts.append(f"{record['wall_clock_minutes']:g} min of training")
    evaluation = record.get("evaluation") or {}
    for name, result in evaluation.items():
        if isinstance(result, dict) and isinstance(result.get("score"), (int, float)):
            wdl = (f", W/D/L {result['wins']}/{result['draws']}/{result['losses']}"
                   if all(isinstance(result.get(k), int) for k in ("wins", "draws", "losses")) else "")
            parts.append(f"{100 * result['score']:.0f}% {name}{wdl}")
            break
    return ", ".join(parts)


def describe_model(game: Game, model, registry_dir: Path) -> str:
    """Who plays, for banners: 'the shipped connect4 model (13 generations, ...)', 'registry version 000012
    (best), generation 12, gate score 0.61' or 'model file PATH'. `model` is a shared.players.spec.ResolvedModel."""
    if model.shipped:
        summary = shipped_summary(game.name)
        return f"the shipped {game.name} model" + (f" ({summary})" if summary else "")
    if model.version is not None:
        from shared.registry import ModelRegistry, RegistryError

        text = f"registry version {model.label}"
        try:
            record = ModelRegistry(registry_dir).get(model.version)
        except RegistryError:
            return text
        text += f", generation {record.generation}"
        gate = record.gate or {}
        if isinstance(gate.get("score"), (int, float)):
            text += f", gate score {gate['score']:.3f}"
        return text
    return f"model file {model.path}"
