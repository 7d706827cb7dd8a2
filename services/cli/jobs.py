"""Run one service job by hand, in this process, without Redis: `zeroforge selfplay | train | gate`."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import click

from services.cli.common import config_options, load_pipeline_config


def _best_or(version: str | None, data_dir: Path, game: str) -> str:
    from shared.layout import DataLayout
    from shared.registry import ModelRegistry

    if version:
        return f"{int(version):06d}" if version.isdigit() else version
    best = ModelRegistry(DataLayout(data_dir, game).registry_dir).best()
    if best is None:
        raise click.UsageError(f"no best model for {game} under {data_dir}; run `zeroforge run --game {game}` first")
    return best.version


@click.command()
@config_options
@click.option("--generation", type=int, required=True, help="Generation whose shard folder receives the shard.")
@click.option("--model", "version", default=None, help="Registry version to play with (default: best).")
@click.option("--seed", type=int, default=0, show_default=True)
def selfplay(game, config_file, settings, data_dir, generation, version, seed) -> None:
    """Play one self-play job's games here and write its shard."""
    from services.selfplay import selfplay_job

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    version = _best_or(version, root, cfg.game.name)
    job_id = f"manual-{uuid.uuid4().hex[:12]}"
    result = selfplay_job(data_dir=str(root), config=cfg.model_dump(mode="json"), generation=generation,
                          job_index=0, model_version=version, job_id=job_id, seed=seed)
    click.echo(json.dumps(result, indent=2))


@click.command()
@config_options
@click.option("--generation", type=int, required=True, help="Generation number of the candidate.")
@click.option("--parent", default=None, help="Version to train from (default: best).")
@click.option("--seed", type=int, default=0, show_default=True)
def train(game, config_file, settings, data_dir, generation, parent, seed) -> None:
    """Train a candidate from the replay window here and register it."""
    from services.trainer import TrainingDataError, train_job

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    parent = _best_or(parent, root, cfg.game.name)
    try:
        result = train_job(data_dir=str(root), config=cfg.model_dump(mode="json"), generation=generation,
                           parent_version=parent, seed=seed)
    except TrainingDataError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(result, indent=2))


@click.command()
@config_options
@click.option("--candidate", required=True, help="Candidate version (player A).")
@click.option("--best", "best_version", default=None, help="Opponent version (default: best).")
def gate(game, config_file, settings, data_dir, candidate, best_version) -> None:
    """Play the paired gate evaluation here (no Redis) and print the report; changes nothing."""
    from services.gatekeeper import match_job, summarize_match

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    best_version = _best_or(best_version, root, cfg.game.name)
    openings = cfg.gate.games // 2
    chunk = match_job(data_dir=str(root), config=cfg.model_dump(mode="json"), player_a=_best_or(candidate, root, cfg.game.name),
                      player_b=best_version, opening_indices=list(range(openings)), num_openings=openings,
                      simulations=cfg.gate.simulations, seed=cfg.pipeline.seed)
    click.echo(json.dumps(summarize_match([chunk], cfg.gate.promote_rule, cfg.gate.threshold), indent=2))
