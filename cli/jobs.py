"""Run one service job by hand, in this process, without Redis: `zeroforge selfplay | train | gate`.

Each command builds the job's typed payload exactly as the flows do and calls the job function with this
process as the worker (the --data-dir and --device given here). They print a table (--json: the job's
result as JSON). On a fresh data directory, `zeroforge models init --game G` makes the first model.
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
from cli.render import text_table


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
        raise click.UsageError(f"no best model for {layout.game_name} under {layout.root}; make the first one "
                               f"with `zeroforge models init --game {layout.game_name}` (or run "
                               f"`zeroforge run --game {layout.game_name}`)")
    return best


def _print(result: dict, rows: list[tuple[str, object]], as_json: bool) -> None:
    """The job's result as JSON, or `rows` as a two-column table."""
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(text_table(["", "value"], [(name, value) for name, value in rows]))


json_option = click.option("--json", "as_json", is_flag=True, help="Print the job's result as JSON instead of a table.")


device_option = click.option("--device", default="cpu", show_default=True, help="Torch device: cpu, cuda or cuda:N.")


def _seed_option(what: str):
    return click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
                        help=f"Seed of the job's random numbers ({what}); the same seed repeats the job exactly.")


@click.command()
@config_options
@click.option("--generation", type=click.IntRange(0, 1_000_000), required=True,
              help="Generation whose shard folder receives the shard.")
@click.option("--model", "version", default=None, help="Registry version to play with [default: best].")
@click.option("--job-id", default=None, metavar="NAME",
              help="Name of the job and its shard (letters, digits, '.', '_', '-') [default: manual-<random>].")
@_seed_option("root noise and move sampling")
@device_option
@json_option
def selfplay(game, config_file, settings, data_dir, generation, version, job_id, seed, device, as_json) -> None:
    """Play one self-play job's games here and write its shard."""
    from services.payloads import SelfPlayPayload
    from services.selfplay import selfplay_job

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    device = checked_device(device)
    with _job_errors():
        layout, context, data_id = _context(cfg, root, device)
        payload = SelfPlayPayload(data_id=data_id, config=cfg.selfplay_service(), generation=generation,
                                  model_version=_version_or_best(version, layout),
                                  job_id=job_id or f"manual-{uuid.uuid4().hex[:12]}", seed=seed)
        result = selfplay_job(payload.model_dump(mode="json"), context)
    _print(result, [("job id", payload.job_id), ("model", payload.model_version),
                    ("games", result["games"]), ("positions", result["positions"]),
                    ("X wins / draws / O wins",
                     f"{result['first_player_wins']} / {result['draws']} / {result['second_player_wins']}"),
                    ("seconds", result["seconds"]), ("shard", root / result["shard"]),
                    ("reused", "yes (the shard already existed)" if result["reused"] else "no")], as_json)


@click.command()
@config_options
@click.option("--generation", type=click.IntRange(1, 1_000_000), required=True,
              help="Generation number of the candidate.")
@click.option("--parent", default=None, help="Version to train from [default: best].")
@_seed_option("batch sampling and augmentation")
@device_option
@json_option
def train(game, config_file, settings, data_dir, generation, parent, seed, device, as_json) -> None:
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
    _print(result, [("candidate", result["version"]), ("parent", result["parent"]),
                    ("generation", result["generation"]), ("steps x batch", f"{result['steps']} x {result['batch_size']}"),
                    ("positions (shards)", f"{result['positions']} ({len(result['shards'])})"),
                    ("loss (first -> last)", f"{result['first_loss']:.3f} -> {result['loss']:.3f}"),
                    ("policy / value loss", f"{result['policy_loss']:.3f} / {result['value_loss']:.3f}"),
                    ("seconds", result["seconds"]),
                    ("reused", "yes (already trained)" if result["reused"] else "no")], as_json)


@click.command()
@config_options
@click.option("--candidate", required=True, help="Candidate version (player A).")
@click.option("--best", "best_version", default=None, help="Opponent version [default: best].")
@device_option
@json_option
def gate(game, config_file, settings, data_dir, candidate, best_version, device, as_json) -> None:
    """Play the paired gate evaluation here (no Redis), chunk by chunk as the gate's jobs do; changes nothing."""
    from cli.eval import match_progress
    from services.gatekeeper import match_job, summarize_match
    from services.payloads import MatchPayload
    from shared.players.match import split_openings

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    device = checked_device(device)
    with _job_errors():
        layout, context, data_id = _context(cfg, root, device)
        a, b = _version_or_best(candidate, layout), _version_or_best(best_version, layout)
        openings = cfg.gate.games // 2
        chunks = []
        rule = (cfg.gate.promote_rule, cfg.gate.threshold, cfg.gate.promote_all_draws)
        update, finish = match_progress()
        try:
            for i, chunk in enumerate(split_openings(openings, cfg.gate.jobs)):
                chunks.append(match_job(MatchPayload(
                    data_id=data_id, config=cfg.gatekeeper(), player_a=a, player_b=b, opening_indices=chunk,
                    num_openings=openings, simulations=cfg.gate.simulations,
                    seed=cfg.pipeline.seed + i).model_dump(mode="json"), context))
                played = summarize_match(chunks, *rule)
                update(played["games"], cfg.gate.games, played["score"])
        finally:
            finish()
        report = summarize_match(chunks, *rule)
    _print(report, [("candidate (A) vs best (B)", f"{a} vs {b}"), ("games", report["games"]),
                    ("A wins / draws / losses", f"{report['wins']} / {report['draws']} / {report['losses']}"),
                    ("score of A [95% CI]", f"{report['score']:.3f} [{report['ci_low']:.3f}, {report['ci_high']:.3f}]"),
                    ("decision (not applied)", f"{'promote' if report['promote'] else 'reject'}: {report['reason']}")],
           as_json)
