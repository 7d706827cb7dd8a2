"""The `generation` flow: self-play with the best model, train a candidate, gate it, promote or reject.

Each step skips work whose output already exists (shards of this generation, a registered candidate,
finished rq jobs), so re-running a stopped generation resumes it. Every flow takes the run's one typed
PipelineConfig; the game is config.game.name. The Redis URL is not a parameter (Prefect stores parameters in its
database): the jobs go to the Redis of services.jobqueue.redis_url_from_env().
"""
from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_progress_artifact, create_table_artifact, update_progress_artifact

from flows.curves import generation_metrics, record_generation
from flows.gate import gate_flow
from flows.interrupt import cancel_on_interrupt
from flows.naming import artifact_key, run_name
from flows.oracle import oracle_figures
from flows.progress import Waiter
from flows.promote import decide_flow
from flows.selfplay_feeder import MAX_JOBS_FACTOR, SelfPlayFeeder
from flows.store_sync import fetch_shards, publish_models, publish_registry_view
from services.initial_model import ensure_initial_model
from services.jobqueue import (QUEUE_SELFPLAY, QUEUE_TRAIN, REDIS_DOWN_ERRORS, JobSpec, RedisPatience, WaitProgress,
                               connect, enqueue, run_jobs, ttl_kwargs, withdraw_queued)
from services.payloads import SelfPlayPayload, SelfPlayResult, TrainPayload, TrainResult
from services.worker_time import WorkerTime, worker_time
from shared.config import PipelineConfig
from shared.curves.metrics import WORKER_ROLES
from shared.games import make_game
from shared.shards.resign_calibration import ResignCalibration, calibrated_resign_threshold, no_resign_samples
from shared.layout import DataLayout
from shared.registry import ModelRegistry


def training_parent(registry: ModelRegistry, best: str, generation: int) -> str:
    """The version the candidate of `generation` is trained from.

    Training is continuous: each candidate starts from the newest network trained since `best` became
    the best model (rejected candidates included), so what a rejected candidate learned is kept, while
    self-play always uses `best`.  Right after a promotion or a rollback that is `best` itself.
    """
    since = max((h["time"] for h in registry.history() if h.get("version") == best), default="")
    newer = [v for v in registry.list() if v.created > since and 1 <= v.generation < generation]
    return max(newer, key=lambda v: (v.generation, v.version)).version if newer else best


def _artifact_updater(artifact_id) -> Any:
    """A WaitProgress callback that moves the Prefect progress artifact when a job finishes."""
    finished = [-1]

    def update(p: WaitProgress) -> None:
        if artifact_id is not None and p.finished != finished[0]:
            finished[0] = p.finished
            update_progress_artifact(artifact_id=artifact_id, progress=100.0 * p.finished / max(1, p.total))
    return update


@task(name="initial-model", retries=1)
def initial_model_task(config: PipelineConfig, data_dir: str) -> str:
    """The best version; on an empty registry a random network becomes version 1 and best."""
    return ensure_initial_model(DataLayout(Path(data_dir), config.game.name), config.game, config.pipeline.seed)


def selfplay_spec_maker(config: PipelineConfig, layout: DataLayout, generation: int, model_version: str,
                        logger) -> Callable[[int], JobSpec]:
    """A function i -> the JobSpec of self-play job i of `generation` played by `model_version` (ids from the
    layout's JobIds, so the same generation, model and index always give the same job), with the calibrated
    resignation threshold when it is on (computed once, here)."""
    ids = layout.job_ids()
    service = config.selfplay_service()
    resign = _resign_threshold(config, layout, generation)
    if resign is not None:
        logger.info("gen %d self-play: %s", generation, resign.describe())
        service = service.model_copy(update={"selfplay": service.selfplay.model_copy(
            update={"resign_threshold": resign.threshold})})

    def make(i: int) -> JobSpec:
        job_id = ids.selfplay(generation, model_version, i)
        payload = SelfPlayPayload(data_id=ids.data_id, config=service, generation=generation,
                                  model_version=model_version, job_id=job_id,
                                  seed=config.pipeline.seed * 1_000_003 + generation * 10_007 + i)
        return JobSpec(func="services.selfplay.selfplay_job", payload=payload, queue=QUEUE_SELFPLAY,
                       job_id=job_id, timeout_s=config.pipeline.selfplay_timeout_s,
                       description=f"{config.game.name} gen {generation} self-play {i}", **ttl_kwargs(config.pipeline))
    return make


def selfplay_specs(config: PipelineConfig, layout: DataLayout, generation: int, model_version: str,
                   logger, jobs: int | None = None) -> list[JobSpec]:
    """The self-play jobs 0..n-1 of `generation` played by `model_version` (selfplay_spec_maker), n = `jobs`
    (those enqueued for it ahead) or selfplay.jobs_per_generation, whichever is more."""
    make = selfplay_spec_maker(config, layout, generation, model_version, logger)
    return [make(i) for i in range(selfplay_job_count(config, jobs))]


def selfplay_job_count(config: PipelineConfig, jobs: int | None) -> int:
    """How many self-play jobs a generation has: `jobs` (those enqueued for it ahead) or
    selfplay.jobs_per_generation, whichever is more."""
    return max(config.selfplay.jobs_per_generation, jobs or 0)


def enqueue_selfplay_ahead(config: PipelineConfig, layout: DataLayout, generation: int, model_version: str,
                           connection, patience: RedisPatience, logger) -> None:
    """Enqueue the self-play jobs of `generation` (the next one) with `model_version` without waiting for them
    (pipeline.overlap_selfplay); that generation's run_selfplay with the same model waits for these very jobs."""
    publish_models(config, layout, [model_version])
    for spec in selfplay_specs(config, layout, generation, model_version, logger):
        enqueue(connection, spec, patience)
    logger.info("gen %d self-play enqueued ahead with %s (played by workers this generation's self-play tail, "
                "training and gate leave idle)", generation, model_version)


def withdraw_selfplay_ahead(config: PipelineConfig, layout: DataLayout, generation: int, model_version: str,
                            jobs: int | None, logger) -> None:
    """Withdraw the self-play of `generation` enqueued ahead with `model_version` (`jobs` jobs, None:
    jobs_per_generation) that no worker has started (the run stops before that generation: a rerun plays it with
    the best model of then). Never raises: Redis being away only leaves the jobs queued, as a rerun with the same
    best reuses them."""
    ids = layout.job_ids()
    job_ids = [ids.selfplay(generation, model_version, i) for i in range(selfplay_job_count(config, jobs))]
    try:
        withdrawn = withdraw_queued(connect(), job_ids)
    except REDIS_DOWN_ERRORS as exc:
        logger.warning("gen %d self-play enqueued ahead left queued (Redis: %s)", generation, type(exc).__name__)
        return
    if withdrawn:
        logger.info("gen %d self-play enqueued ahead: %d job(s) not started withdrawn", generation, withdrawn)


@task(name="self-play")
def run_selfplay(config: PipelineConfig, data_dir: str, generation: int, model_version: str,
                 ahead_model: str | None = None, jobs: int | None = None) -> dict[str, int]:
    """Enqueue this generation's self-play jobs (jobs already enqueued ahead with this model are the same jobs:
    `jobs` of them, when more than selfplay.jobs_per_generation), wait for them with progress; return totals. With
    `ahead_model`, the next generation's self-play with that model is enqueued right after this generation's jobs
    (behind them in the queue) and not waited for, so that no worker waits for work.

    Totals: games, positions, first_player_wins, draws, second_player_wins over all the generation's shards;
    new_games and new_positions: those of the jobs that played (not reused shards); seconds: the stage's elapsed
    time, the wall clock of the wait or the longest job's playing time if longer (a job finished before a resume).
    """
    logger = get_run_logger()
    layout = DataLayout(Path(data_dir), config.game.name)
    specs = selfplay_specs(config, layout, generation, model_version, logger, jobs)
    artifact = create_progress_artifact(progress=0.0, key=artifact_key(config.game.name, data_dir, "selfplay", generation),
                                        description=f"self-play, generation {generation}")
    connection = connect()
    start = time.monotonic()
    publish_models(config, layout, [model_version])
    patience = RedisPatience(connection, config.pipeline.redis_outage_s)
    for spec in specs:
        enqueue(connection, spec, patience)     # run_jobs below finds them queued (or running) and waits for them
    if ahead_model is not None:
        enqueue_selfplay_ahead(config, layout, generation + 1, ahead_model, connection, patience, logger)
    results = run_jobs(connection, specs, timeout_s=config.pipeline.wait_timeout_s,
                       progress=Waiter(logger, layout, generation, "self-play", on_wait=_artifact_updater(artifact)),
                       patience=patience)
    summaries = [SelfPlayResult.model_validate(r) for r in results.values()]
    fetch_start = time.monotonic()
    fetched = fetch_shards(config, layout, [s.shard for s in summaries])
    if config.pipeline.store is not None:
        logger.info("gen %d self-play: store transfers %s", generation, store_share(
            summaries, fetched, time.monotonic() - fetch_start))
    wall = time.monotonic() - start
    totals = {k: sum(getattr(s, k) for s in summaries)
              for k in ("games", "positions", "first_player_wins", "draws", "second_player_wins", "resigned_games",
                        "no_resign_games", "would_resign_games", "false_resignations")}
    played = [s for s in summaries if not s.reused]
    totals.update(new_games=sum(s.games for s in played), new_positions=sum(s.positions for s in played),
                  seconds=round(max([wall] + [s.seconds for s in played]), 3))
    resigns = resign_summary(totals) if config.selfplay.resign_threshold is not None else ""
    logger.info("gen %d self-play: %d games, %d positions (first-player wins %d, draws %d, second-player wins %d)%s",
                generation, totals["games"], totals["positions"], totals["first_player_wins"], totals["draws"],
                totals["second_player_wins"], resigns)
    return totals


def _resign_threshold(config: PipelineConfig, layout: DataLayout, generation: int) -> ResignCalibration | None:
    """The calibrated resignation threshold for `generation` (shared.shards.resign_calibration) from the no-resign
    games of the 3 generations before it; None when resignation or its calibration is off."""
    selfplay = config.selfplay
    if selfplay.resign_threshold is None or not selfplay.resign_calibration:
        return None
    samples = no_resign_samples(layout.shards_dir, range(max(1, generation - 3), generation),
                                make_game(config.game.name))
    return calibrated_resign_threshold(samples, selfplay.resign_threshold, selfplay.resign_false_rate)


def store_share(summaries: list[SelfPlayResult], fetched: int, fetch_s: float) -> str:
    """'0.41 s of 96.2 s of jobs (0.4%), 8 shards fetched in 0.12 s': the jobs' store time (model downloads and shard
    uploads) against their playing time, and the pipeline's fetch of the shards."""
    played = [s for s in summaries if not s.reused]
    store_s, job_s = sum(s.store_seconds for s in played), sum(s.seconds for s in played)
    share = f" ({100 * store_s / (store_s + job_s):.1f}%)" if store_s + job_s > 0 else ""
    return f"{store_s:.2f} s of {job_s + store_s:.1f} s of jobs{share}, {fetched} shards fetched in {fetch_s:.2f} s"


def resign_summary(totals: dict[str, int]) -> str:
    """'; resigned 40, false resigns 1/12 = 8% (of 13 no-resign games)' from self-play totals (run_selfplay's keys).

    The false-resignation rate is over the no-resign games in which the resign rule fired ("n/a" when none did).
    """
    fired, false = totals["would_resign_games"], totals["false_resignations"]
    rate = f"{100 * false / fired:.0f}%" if fired else "n/a"
    return (f"; resigned {totals['resigned_games']}, false resigns {false}/{fired} = {rate} "
            f"(of {totals['no_resign_games']} no-resign games)")


@task(name="train")
def run_training(config: PipelineConfig, data_dir: str, generation: int, parent: str) -> TrainResult:
    """Enqueue the training job for this generation and wait; returns the trainer's result."""
    logger = get_run_logger()
    layout = DataLayout(Path(data_dir), config.game.name)
    ids = layout.job_ids()
    job_id = ids.train(generation, parent)
    payload = TrainPayload(data_id=ids.data_id, config=config.trainer(), generation=generation,
                           parent_version=parent, seed=config.pipeline.seed + generation)
    spec = JobSpec(func="services.trainer.train_job", payload=payload, queue=QUEUE_TRAIN, job_id=job_id,
                   timeout_s=config.pipeline.train_timeout_s,
                   description=f"{config.game.name} gen {generation} training", **ttl_kwargs(config.pipeline))
    connection = connect()
    patience = RedisPatience(connection, config.pipeline.redis_outage_s)
    result = TrainResult.model_validate(
        run_jobs(connection, [spec], timeout_s=config.pipeline.wait_timeout_s,
                 progress=Waiter(logger, layout, generation, "training"), patience=patience)[job_id])
    cut = ("" if result.value_targets_cut is None
           else f"; value targets cut at sampled moves: {100 * result.value_targets_cut:.0f}% of the positions")
    if result.duplicates_merged is not None:
        cut += f"; {result.duplicates_merged} repeated rows of the window merged into their positions"
    logger.info("gen %d training: candidate %s from %s, %d steps on %d positions (%s new), loss %.4f -> %.4f "
                "(policy %.4f, value %.4f)%s", generation, result.version, parent, result.steps, result.positions,
                "?" if result.new_positions is None else result.new_positions, result.first_loss, result.loss,
                result.policy_loss, result.value_loss, cut)
    return result


def generation_worker_time(config: PipelineConfig, layout: DataLayout, generation: int, window_start: datetime,
                           logger) -> WorkerTime | None:
    """Where the workers' time went from `window_start` to now (services.worker_time), logged, published as the
    generation's "worker-time" table artifact and returned; None (with a warning) when Redis cannot say."""
    try:
        split = worker_time(connect(), layout.job_ids().prefix, window_start,
                            result_ttl_s=config.pipeline.result_ttl_s)
    except REDIS_DOWN_ERRORS as exc:
        logger.warning("gen %d: worker time not measured (Redis: %s)", generation, type(exc).__name__)
        return None
    logger.info("gen %d worker time: %s", generation, split.line())
    create_table_artifact(key=artifact_key(config.game.name, layout.root, "worker-time", generation),
                          table=[{"role": role, "worker-seconds": round(getattr(split, f"{role}_s"), 1),
                                  "share": f"{100 * (split.share(role) or 0.0):.1f}%"}
                                 for role in WORKER_ROLES],
                          description=f"generation {generation}: worker-seconds by role, {split.workers} worker(s) "
                                      f"x {split.window_s:.0f} s")
    return split


@flow(name="generation", flow_run_name=run_name("gen{generation}"))
@cancel_on_interrupt
def generation_flow(config: PipelineConfig, generation: int, data_dir: str, selfplay_model: str | None = None,
                    selfplay_ahead: bool = False, selfplay_jobs: int | None = None) -> dict[str, Any]:
    """One generation: self-play -> train -> gate -> promote or reject -> the best model's oracle figures
    (flows.oracle). Returns a summary dict.

    selfplay_model: the model whose self-play the previous generation enqueued ahead (None: the best model now);
    selfplay_ahead: enqueue the next generation's self-play with the best model right behind this one's, and keep
    the queue topped up with more of its jobs while this generation trains and gates (flows.selfplay_feeder); the
    summary's "next_selfplay_model" and "next_selfplay_jobs" say with which model and how many jobs;
    selfplay_jobs: how many jobs the previous generation enqueued for this one (None: jobs_per_generation)."""
    started, window_start = time.monotonic(), datetime.now(timezone.utc)
    logger = get_run_logger()
    game = config.game.name
    best = initial_model_task(config, data_dir)
    publish_registry_view(config, DataLayout(Path(data_dir), game))
    player = selfplay_model or best
    logger.info("%s generation %d: playing with %s model %s", game, generation,
                "best" if player == best else "the previous best (enqueued ahead)", player)
    layout = DataLayout(Path(data_dir), game)
    stopping = layout.stop_file.exists()     # no generation comes after this one
    ahead = best if selfplay_ahead and not stopping else None
    selfplay = run_selfplay(config, data_dir, generation, player, ahead, selfplay_jobs)
    feeder = None
    if ahead is not None:
        base = config.selfplay.jobs_per_generation
        feeder = SelfPlayFeeder(selfplay_spec_maker(config, layout, generation + 1, ahead, logger), base,
                                MAX_JOBS_FACTOR * base, logger)
    with feeder or nullcontext():
        parent = training_parent(ModelRegistry(layout.registry_dir), best, generation)
        training = run_training(config, data_dir, generation, parent)
        gate = gate_flow(config=config, generation=generation, data_dir=data_dir, candidate=training.version,
                         best=best)
        decision = decide_flow(config=config, generation=generation, data_dir=data_dir, candidate=training.version,
                               best=best, gate=gate)
        oracle = oracle_figures(config, data_dir, decision.get("best") or best, generation, logger)
    if feeder is not None and feeder.jobs > config.selfplay.jobs_per_generation:
        logger.info("gen %d self-play enqueued ahead: %d jobs (%d more while workers were free)", generation + 1,
                    feeder.jobs, feeder.jobs - config.selfplay.jobs_per_generation)
    split = generation_worker_time(config, layout, generation, window_start, logger)
    record_generation(layout, generation_metrics(
        generation, selfplay, training.model_dump(mode="json"), gate, decision, time.monotonic() - started,
        oracle, split), logger)
    return {"generation": generation, "best_before": best, "candidate": training.version, "selfplay": selfplay,
            "training": training.model_dump(mode="json"), "gate": gate, "decision": decision,
            "selfplay_model": player, "next_selfplay_model": ahead,
            "next_selfplay_jobs": None if feeder is None else feeder.jobs}
