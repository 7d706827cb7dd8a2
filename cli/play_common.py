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
