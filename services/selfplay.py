"""Self-play service: one job plays a batch of games with a given model version and writes one HDF5 shard.

`selfplay_job` is both the rq job (enqueued by dotted path with JSON arguments) and what
`zeroforge selfplay` runs by hand.  The shard is named after the job id, so a retried job never leaves
a duplicate: if the shard already exists the job returns its summary without playing again (a damaged
one is moved to the quarantine folder and the games are played again).
"""
from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

from services.model_cache import cached_evaluator
from services.worker import job_device
from shared.config import PipelineConfig
from shared.games import make_game
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.search.selfplay import play_selfplay_games
from shared.shards import ShardError, quarantine_shard, read_shard, write_shard


def selfplay_job(
    *, data_dir: str, config: dict[str, Any], generation: int, job_index: int, model_version: str, job_id: str, seed: int
) -> dict[str, Any]:
    """Play `config.selfplay.games_per_job` games with `model_version`; write shard `<job_id>.h5`.

    Returns a JSON-serialisable summary: shard path, games, positions, results (first-player wins,
    draws, second-player wins), seconds, positions per second.
    """
    cfg = PipelineConfig.model_validate(config)
    game = make_game(cfg.game.name)
    layout = DataLayout(Path(data_dir), game.name)
    out_dir = layout.generation_shards_dir(generation)
    existing = out_dir / f"{job_id}.h5"
    if existing.exists():
        try:
            shard = read_shard(existing, game=game)
            return _summary(existing, shard.z.shape[0], np.asarray(shard.game_results), 0.0, reused=True)
        except ShardError as exc:  # a damaged file must not fail every retry: move it aside and play again
            quarantine_shard(existing, layout.quarantine_dir, str(exc), f"{out_dir.name}/{existing.name}")
    registry = ModelRegistry(layout.registry_dir)
    version = registry.get(model_version)
    evaluator = cached_evaluator(Path(version.path), game, job_device(), version.checksum)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    records = play_selfplay_games(game, evaluator, cfg.selfplay.games_per_job,
                                  cfg.selfplay_service().selfplay_config(), rng)
    seconds = time.perf_counter() - start
    attrs = {
        "model_version": model_version,
        "worker_host": socket.gethostname(),
        "seed": seed,
        "simulations": cfg.search.simulations,
        "generation": generation,
        "job_id": job_id,
    }
    path = write_shard(out_dir, job_id, game, records, attrs)
    return _summary(path, int(records.z.shape[0]), records.results, seconds, reused=False)


def _summary(path: Path, positions: int, results: np.ndarray, seconds: float, reused: bool) -> dict[str, Any]:
    results = np.asarray(results)
    return {
        "shard": str(path),
        "games": int(results.shape[0]),
        "positions": positions,
        "first_player_wins": int((results == 1).sum()),
        "draws": int((results == 0).sum()),
        "second_player_wins": int((results == -1).sum()),
        "seconds": round(seconds, 3),
        "positions_per_s": round(positions / seconds, 2) if seconds > 0 else None,
        "reused": reused,
    }
