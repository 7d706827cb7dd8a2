"""Self-play service: one job plays a batch of games with a given model version and writes one HDF5 shard.

`selfplay_job` is both the rq job (enqueued by dotted path with JSON arguments) and what
`zeroforge selfplay` runs by hand.  With `WorkerContext.processes` N > 1 the games are split over N
search processes that share this process's one network (services.inference: on a GPU their leaf batches are
merged into one forward pass; on a CPU each batch gets its own pass, one per core at once); the processes are
kept from one job to the next (services.search_pool.worker_pool).  The
shard is named after the job id, so a retried job never leaves a duplicate: if the shard already exists the job
returns its summary without playing again (a damaged one is moved to the quarantine folder and the games are
played again). A worker with a store (WorkerContext.store) takes the model from the store and publishes the
shard there instead of keeping it (shared.store.replica); a shard already in the store counts as existing.
"""
from __future__ import annotations

import dataclasses
import socket
import time
from pathlib import Path

import numpy as np

from services.inference import server_parallelism
from services.model_cache import cached_evaluator
from services.payloads import SelfPlayPayload, SelfPlayResult, WorkerContext
from services.progress import job_reporter
from services.search_pool import worker_pool
from shared.games import make_game
from shared.registry import ModelRegistry
from shared.search.selfplay import play_selfplay_games
from shared.shards import ShardError, quarantine_shard, read_shard, write_shard
from shared.shards.gameinfo import ResignCounts, game_info_from_records, resign_counts
from shared.store.replica import fetch_shard, publish_shard, replicate_version


def selfplay_job(payload: dict, worker: WorkerContext) -> dict:
    """Play `config.selfplay.games_per_job` games with `model_version`; write the shard of `job_id`.

    payload: a SelfPlayPayload as a JSON dict. Returns a SelfPlayResult as a JSON dict (shard path relative to
    the data directory, games, positions, results: first-player wins, draws, second-player wins, seconds,
    positions per second, resignation counts: resigned, no-resign, would-resign and falsely resigning games,
    store_seconds: time spent on store transfers, the model and the shard, with a store).
    """
    job = SelfPlayPayload.model_validate(payload)
    cfg = job.config
    game = make_game(cfg.game.name)
    layout = worker.layout(game.name, job.data_id)
    store = worker.object_store()
    existing = layout.shard_path(job.generation, job.job_id)
    if store is not None and not existing.exists() and store.exists(layout.store_key(existing)):
        fetch_shard(store, layout, layout.store_key(existing))
    if existing.exists():
        try:
            shard = read_shard(existing, game=game)
            counts = resign_counts(shard.game_info, shard.game_results)
            return _summary(worker, existing, shard.z.shape[0], np.asarray(shard.game_results), counts, 0.0,
                            reused=True)
        except ShardError as exc:  # a damaged file must not fail every retry: move it aside and play again
            quarantine_shard(existing, layout.quarantine_dir, str(exc), f"{existing.parent.name}/{existing.name}")
        finally:
            if store is not None:
                existing.unlink(missing_ok=True)
    transfer = time.perf_counter()
    if store is not None:
        replicate_version(store, layout, job.model_version)
    store_seconds = time.perf_counter() - transfer
    version = ModelRegistry(layout.registry_dir).verify(job.model_version)
    evaluator = cached_evaluator(Path(version.path), game, worker.device, version.checksum, worker.precision)
    rng = np.random.default_rng(job.seed)
    start = time.perf_counter()
    config = dataclasses.replace(cfg.selfplay_config(), overlap=worker.selfplay_overlap())
    if worker.processes == 1:
        records = play_selfplay_games(game, evaluator, cfg.selfplay.games_per_job, config, rng,
                                      progress=job_reporter("self-play", "games"))
    else:  # N search processes, one network here; child k's seed is the k-th spawn of the job's seed
        streams = np.random.SeedSequence(job.seed).spawn(worker.processes)
        seeds = [int(stream.generate_state(1)[0]) for stream in streams]
        records = worker_pool(worker.processes).play(game.name, evaluator, cfg.selfplay.games_per_job, config, seeds,
                                                     parallel=server_parallelism(worker.device, worker.processes))
    seconds = time.perf_counter() - start
    attrs = {
        "model_version": job.model_version,
        "worker_host": socket.gethostname(),
        "seed": job.seed,
        "simulations": cfg.search.simulations,
        "generation": job.generation,
        "job_id": job.job_id,
    }
    path = write_shard(existing.parent, job.job_id, game, records, attrs)
    counts = resign_counts(game_info_from_records(records, records.game_lengths), records.results)
    if store is not None:     # the store's copy is the shard; a copy published before by a duplicate job stands
        transfer = time.perf_counter()
        publish_shard(store, layout, path)
        store_seconds += time.perf_counter() - transfer
    summary = _summary(worker, path, int(records.z.shape[0]), records.results, counts, seconds, reused=False,
                       store_seconds=store_seconds)
    if store is not None:
        path.unlink()
    return summary


def _summary(worker: WorkerContext, path: Path, positions: int, results: np.ndarray, counts: ResignCounts,
             seconds: float, reused: bool, store_seconds: float = 0.0) -> dict:
    results = np.asarray(results)
    return SelfPlayResult(
        shard=str(Path(path).relative_to(worker.data_dir)),
        games=int(results.shape[0]),
        positions=positions,
        first_player_wins=int((results == 1).sum()),
        draws=int((results == 0).sum()),
        second_player_wins=int((results == -1).sum()),
        seconds=round(seconds, 3),
        positions_per_s=round(positions / seconds, 2) if seconds > 0 else None,
        reused=reused,
        store_seconds=round(store_seconds, 3),
        **counts.as_dict(),
    ).model_dump(mode="json")
