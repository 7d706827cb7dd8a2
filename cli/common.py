"""Options and helpers shared by the pipeline commands: config file, --set overrides, data directory."""
from __future__ import annotations

import functools
from pathlib import Path

import click


def config_options(func):
    """Add --game, --config, --set and --data-dir to a command."""
    @click.option("--game", required=True, help="Game: tictactoe, connect4, gomoku-15, gomoku-HxW-N, othello ...")
    @click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                  help="TOML config file (sections [game] [search] [selfplay] [train] [gate] [pipeline]).")
    @click.option("--set", "settings", multiple=True, metavar="SECTION.FIELD=VALUE",
                  help="Override one config value, e.g. --set search.simulations=64 (repeatable).")
    @click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
                  help="Where shards, models and logs live (default: ZEROFORGE_DATA_DIR or ./zeroforge-data).")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


def load_pipeline_config(game: str, config_file: Path | None, settings: tuple[str, ...], data_dir: Path | None):
    """Validate the config (defaults < file < environment < --set) -> (PipelineConfig, absolute data dir).

    Any problem becomes a click error naming the field, so the command fails at start.
    """
    import os

    from shared.config import ConfigError, PipelineConfig, load_config, parse_overrides
    from shared.games import GameError
    from shared.layout import default_data_root

    try:
        overrides = parse_overrides(list(settings))
        if data_dir is not None:
            overrides["pipeline.data_dir"] = str(data_dir)
        cfg = load_config(PipelineConfig, game, config_file, os.environ, overrides)
    except (ConfigError, GameError) as exc:
        raise click.UsageError(str(exc)) from None
    root = Path(cfg.pipeline.data_dir) if cfg.pipeline.data_dir else default_data_root()
    return cfg, root.resolve()
