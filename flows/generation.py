"""The `generation` flow: self-play with the best model, train a candidate, gate it, promote or reject.

Each step skips work whose output already exists (shards of this generation, a registered candidate,
finished rq jobs), so re-running a stopped generation resumes it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact

from flows.gate import gate_flow
from flows.promote import decide_flow
from services.jobqueue import (QUEUE_SELFPLAY, QUEUE_TRAIN, JobSpec, WaitProgress, connect, namespace_for, run_jobs,
                               ttl_kwargs)
from shared.config import PipelineConfig
from shared.games import make_game
from shared.layout import DataLayout
from shared.network import create_model, save_model
from shared.registry import ModelRegistry


def job_prefix(data_dir: str, game: str, generation: int) -> str:
    """Deterministic job-id prefix for one generation of one pipeline (data dir + game)."""
    return f"zf-{namespace_for(data_dir)}-{game}-g{generation:06d}"


@task(name="initial-model", retries=1)
def ensure_initial_model(data_dir: str, config: dict[str, Any]) -> str:
    """Return the best version; on an empty registry create a random network as version 1 and promote it."""
    cfg = PipelineConfig.model_validate(config)
    game = make_game(cfg.game.name)
    layout = DataLayout(Path(data_dir), game.name)
    registry = ModelRegistry(layout.registry_dir)
    best = registry.best()
    if best is not None:
        return best.version
    if registry.list():
        raise RuntimeError(f"the registry at {layout.registry_dir} has versions but no best; "
                           "choose one with `zeroforge models promote V`")
    from shared.network import NetworkSpec

    spec = NetworkSpec(blocks=cfg.game.blocks, channels=cfg.game.channels)
    path = layout.checkpoints_dir / "initial.pt"
    save_model(path, create_model(game, spec, seed=cfg.pipeline.seed), game, {"generation": 0, "init": "random"})
    version = registry.register(path, status="candidate", parent=None, generation=0, training={"init": "random"})
    registry.promote(version.version, reason="initial")
    path.unlink(missing_ok=True)
    return version.version


def training_parent(registry: ModelRegistry, best: str, generation: int) -> str:
    """The version the candidate of `generation` is trained from.

    Training is continuous: each candidate starts from the newest network trained since `best` became
    the best model (rejected candidates included), so what a rejected candidate learned is kept, while
    self-play always uses `best`.  Right after a promotion or a rollback that is `best` itself.
    """
    since = max((h["time"] for h in registry.history() if h.get("version") == best), default="")
    newer = [v for v in registry.list() if v.created > since and 1 <= v.generation < generation]
    return max(newer, key=lambda v: (v.generation, v.version)).version if newer else best


def _progress_printer(logger, what: str, artifact_id) -> Any:
    def report(p: WaitProgress) -> None:
        logger.info("%s: %d/%d jobs done, %d running (%.0f s)", what, p.finished, p.total, p.started, p.elapsed_s)
        if artifact_id is not None:
            update_progress_artifact(artifact_id=artifact_id, progress=100.0 * p.finished / max(1, p.total))
    return report


@task(name="self-play")
def run_selfplay(data_dir: str, redis_url: str, config: dict[str, Any], generation: int, model_version: str) -> dict[str, Any]:
    """Enqueue this generation's self-play jobs, wait for them with progress; return totals."""
    logger = get_run_logger()
    cfg = PipelineConfig.model_validate(config)
    # The model version is part of the job ids: after a manual promote or rollback, an unfinished
    # generation plays its remaining games with the new best instead of reusing the old model's jobs.
    prefix = f"{job_prefix(data_dir, cfg.game.name, generation)}-m{model_version}"
    specs = [
        JobSpec(
            func="services.selfplay.selfplay_job",
            kwargs={"data_dir": data_dir, "config": config, "generation": generation, "job_index": i,
                    "model_version": model_version, "job_id": f"{prefix}-sp{i:04d}",
                    "seed": cfg.pipeline.seed * 1_000_003 + generation * 10_007 + i},
            queue=QUEUE_SELFPLAY, job_id=f"{prefix}-sp{i:04d}", timeout_s=cfg.pipeline.selfplay_timeout_s,
            description=f"{cfg.game.name} gen {generation} self-play {i}", **ttl_kwargs(cfg.pipeline),
        )
        for i in range(cfg.selfplay.jobs_per_generation)
    ]
    artifact = create_progress_artifact(progress=0.0, description=f"self-play, generation {generation}")
    results = run_jobs(connect(redis_url), specs, timeout_s=cfg.pipeline.wait_timeout_s,
                       progress=_progress_printer(logger, f"gen {generation} self-play", artifact))
    totals = {k: sum(r[k] for r in results.values())
              for k in ("games", "positions", "first_player_wins", "draws", "second_player_wins")}
    logger.info("gen %d self-play: %d games, %d positions (first-player wins %d, draws %d, second-player wins %d)",
                generation, totals["games"], totals["positions"], totals["first_player_wins"], totals["draws"],
                totals["second_player_wins"])
    return totals


@task(name="train")
def run_training(data_dir: str, redis_url: str, config: dict[str, Any], generation: int, parent: str) -> dict[str, Any]:
    """Enqueue the training job for this generation and wait; returns the trainer's summary."""
    logger = get_run_logger()
    cfg = PipelineConfig.model_validate(config)
    job_id = f"{job_prefix(data_dir, cfg.game.name, generation)}-train-{parent}"
    spec = JobSpec(func="services.trainer.train_job",
                   kwargs={"data_dir": data_dir, "config": config, "generation": generation,
                           "parent_version": parent, "seed": cfg.pipeline.seed + generation},
                   queue=QUEUE_TRAIN, job_id=job_id, timeout_s=cfg.pipeline.train_timeout_s,
                   description=f"{cfg.game.name} gen {generation} training", **ttl_kwargs(cfg.pipeline))
    result = run_jobs(connect(redis_url), [spec], timeout_s=cfg.pipeline.wait_timeout_s)[job_id]
    logger.info("gen %d training: candidate %s from %s, %s steps on %s positions, loss %.4f -> %.4f "
                "(policy %.4f, value %.4f)", generation, result["version"], parent, result.get("steps"),
                result.get("positions"), result.get("first_loss", float("nan")), result.get("loss", float("nan")),
                result.get("policy_loss", float("nan")), result.get("value_loss", float("nan")))
    return result


@flow(name="generation", flow_run_name="{game}-gen{generation}")
def generation_flow(game: str, generation: int, data_dir: str, redis_url: str, config: dict[str, Any]) -> dict[str, Any]:
    """One generation: self-play -> train -> gate -> promote or reject. Returns a summary dict."""
    logger = get_run_logger()
    best = ensure_initial_model(data_dir, config)
    logger.info("%s generation %d: playing with best model %s", game, generation, best)
    selfplay = run_selfplay(data_dir, redis_url, config, generation, best)
    parent = training_parent(ModelRegistry(DataLayout(Path(data_dir), game).registry_dir), best, generation)
    training = run_training(data_dir, redis_url, config, generation, parent)
    candidate = training["version"]
    gate = gate_flow(game=game, generation=generation, data_dir=data_dir, redis_url=redis_url, config=config,
                     candidate=candidate, best=best)
    decision = decide_flow(game=game, generation=generation, data_dir=data_dir, redis_url=redis_url,
                           config=config, candidate=candidate, gate=gate)
    return {"generation": generation, "best_before": best, "candidate": candidate, "selfplay": selfplay,
            "training": training, "gate": gate, "decision": decision}
