"""Run one service job by hand, in this process, without Redis: `zeroforge selfplay | train | gate`.

Each command builds the job's typed payload exactly as the flows do and calls the job function with this
process as the worker (the --data-dir and --device given here).
"""
from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import click

from cli.common import config_options, load_pipeline_config
from cli.play_common import checked_device, fail, user_errors


@contextlib.contextmanager
def _job_errors() -> Iterator[None]:
    """Bad input, a damaged registry, model or shard: `error: ...` in one line, exit 2 (never a traceback)."""
    from pydantic import ValidationError

    from services.payloads import PayloadError
    from services.trainer import TrainingDataError
    from shared.shards import ShardError

    with user_errors():
        try:
            yield
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
            fail(f"invalid job: {problems}")
        except (PayloadError, TrainingDataError, ShardError) as exc:
            fail(exc)


def _context(cfg, root: Path, device: str):
    """(layout, worker context, data id) for a by-hand job on data root `root`."""
    from services.payloads import WorkerContext
    from shared.layout import DataLayout

    layout = DataLayout(root, cfg.game.name)
    return layout, WorkerContext(data_dir=root, device=device), layout.data_id()


def _version_or_best(version: str | None, layout) -> str:
    from shared.registry import ModelRegistry, normalise_version

    if version:
        return normalise_version(version)
    best = ModelRegistry(layout.registry_dir).best_version()
    if best is None:
        raise click.UsageError(f"no best model for {layout.game_name} under {layout.root}; "
                               f"run `zeroforge run --game {layout.game_name}` first")
    return best


device_option = click.option("--device", default="cpu", show_default=True, help="Torch device: cpu, cuda or cuda:N.")
seed_option = click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
                           help="Seed of the job's random numbers.")


@click.command()
@config_options
@click.option("--generation", type=click.IntRange(0, 1_000_000), required=True,
              help="Generation whose shard folder receives the shard.")
@click.option("--model", "version", default=None, help="Registry version to play with (default: best).")
@seed_option
@device_option
def selfplay(game, config_file, settings, data_dir, generation, version, seed, device) -> None:
    """Play one self-play job's games here and write its shard."""
    from services.payloads import SelfPlayPayload
    from services.selfplay import selfplay_job

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    device = checked_device(device)
    with _job_errors():
        layout, context, data_id = _context(cfg, root, device)
        payload = SelfPlayPayload(data_id=data_id, config=cfg.selfplay_service(), generation=generation,
                                  model_version=_version_or_best(version, layout),
                                  job_id=f"manual-{uuid.uuid4().hex[:12]}", seed=seed)
        result = selfplay_job(payload.model_dump(mode="json"), context)
    click.echo(json.dumps(result, indent=2))


@click.command()
@config_options
@click.option("--generation", type=click.IntRange(1, 1_000_000), required=True,
              help="Generation number of the candidate.")
@click.option("--parent", default=None, help="Version to train from (default: best).")
@seed_option
@device_option
def train(game, config_file, settings, data_dir, generation, parent, seed, device) -> None:
    """Train a candidate from the replay window here and register it."""
    from services.payloads import TrainPayload
    from services.trainer import train_job

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    device = checked_device(device)
    with _job_errors():
        layout, context, data_id = _context(cfg, root, device)
        payload = TrainPayload(data_id=data_id, config=cfg.trainer(), generation=generation,
                               parent_version=_version_or_best(parent, layout), seed=seed)
        result = train_job(payload.model_dump(mode="json"), context)
    click.echo(json.dumps(result, indent=2))


@click.command()
@config_options
@click.option("--candidate", required=True, help="Candidate version (player A).")
@click.option("--best", "best_version", default=None, help="Opponent version (default: best).")
@device_option
def gate(game, config_file, settings, data_dir, candidate, best_version, device) -> None:
    """Play the paired gate evaluation here (no Redis), chunk by chunk as the gate's jobs do; changes nothing."""
    from services.gatekeeper import match_job, summarize_match
    from services.payloads import MatchPayload
    from shared.players.match import split_openings

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    device = checked_device(device)
    with _job_errors():
        layout, context, data_id = _context(cfg, root, device)
        openings = cfg.gate.games // 2
        chunks = [
            match_job(MatchPayload(data_id=data_id, config=cfg.gatekeeper(),
                                   player_a=_version_or_best(candidate, layout),
                                   player_b=_version_or_best(best_version, layout), opening_indices=chunk,
                                   num_openings=openings, simulations=cfg.gate.simulations,
                                   seed=cfg.pipeline.seed + i).model_dump(mode="json"), context)
            for i, chunk in enumerate(split_openings(openings, cfg.gate.jobs))
        ]
        report = summarize_match(chunks, cfg.gate.promote_rule, cfg.gate.threshold)
    click.echo(json.dumps(report, indent=2))
