"""Compression choice for shards: write time, read time and size per filter (not a test; run by hand).

    OMP_NUM_THREADS=1 .venv/bin/python -m cli.bench.compression

Data: random-play games whose pi is shaped like MCTS output (visit counts over at most 24 legal moves,
multiples of 1/simulations), so sparsity and value patterns resemble real shards. Results (2-core VM, min of 3) are quoted in
shared/shards/schema.py, which explains the chosen filter (gzip level 4, no shuffle).
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from shared.games import make_game
from shared.shards import read_shard, schema, write_shard
from tests.storage.helpers import random_records

VARIANTS = {  # name: (compression, opts, shuffle)
    "none": (None, None, False),
    "lzf": ("lzf", None, False),
    "lzf+shuffle": ("lzf", None, True),
    "gzip1": ("gzip", 1, False),
    "gzip4": ("gzip", 4, False),
    "gzip4+shuffle": ("gzip", 4, True),
}


def mcts_like(records, game, simulations: int, seed: int):
    """Replace pi by sparse visit fractions: up to 24 legal moves share `simulations` visits."""
    rng = np.random.default_rng(seed)
    mask = game.legal_mask(records.states)
    pi = np.zeros(mask.shape, np.float32)
    for i, legal in enumerate(mask):
        others = np.setdiff1d(np.flatnonzero(legal), [records.action[i]])
        actions = np.concatenate([[records.action[i]], rng.choice(others, size=min(23, len(others)), replace=False)])
        counts = rng.multinomial(simulations - 1, rng.dirichlet(np.full(len(actions), 0.3)))
        counts[0] += 1
        pi[i, actions] = counts / simulations
    records.pi = pi
    records.visit_count = np.full(len(pi), simulations, np.int32)
    return records


def run(game_name: str, games: int, simulations: int) -> None:
    game = make_game(game_name)
    records = mcts_like(random_records(game, games, seed=1), game, simulations, seed=2)
    attrs = dict(generation=0, model_version="000001", seed=0, simulations=simulations)
    print(f"{game_name}: {len(records.z)} positions")
    for name, (compression, opts, shuffle) in VARIANTS.items():
        schema.COMPRESSION, schema.COMPRESSION_OPTS, schema.SHUFFLE = compression, opts, shuffle
        writes, reads, size = [], [], 0
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(3):
                start = time.perf_counter()
                path = write_shard(Path(tmp), f"job{rep}", game, records, attrs)
                writes.append(time.perf_counter() - start)
                start = time.perf_counter()
                read_shard(path, game)
                reads.append(time.perf_counter() - start)
                size = path.stat().st_size
        raw = sum(a.nbytes for a in (records.states, records.pi, records.z)) + len(records.z) * schema.MOVES_DTYPE.itemsize
        print(f"  {name:14s} write {1000 * min(writes):7.1f} ms  read {1000 * min(reads):6.1f} ms  "
              f"size {size / 1024:8.0f} KiB ({100 * size / raw:4.1f}% of raw)")


if __name__ == "__main__":
    run("connect4", 256, 100)
    run("gomoku-15", 64, 200)
