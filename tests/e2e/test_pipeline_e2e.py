"""End to end: `zeroforge run` trains tic-tac-toe for two generations on real parts.

A real `redis-server` (started privately by `zeroforge run`), real rq worker processes, real HDF5 shards,
the real Prefect flows (ephemeral local mode), the gate and the registry.  Then a rollback, and one more
generation that must play with the restored version.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shared.curves import read_metrics
from shared.games import make_game
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.shards import list_shards, read_shard

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

ZEROFORGE = [sys.executable, "-m", "cli"]
FAST = [
    "--set", "selfplay.games_per_job=48", "--set", "selfplay.jobs_per_generation=2",
    "--set", "search.simulations=16", "--set", "train.steps_per_generation=120",
    "--set", "gate.games=400", "--set", "gate.simulations=8", "--set", "gate.jobs=2",
    "--set", "gate.anchor_games=20", "--set", "pipeline.local_workers=2",
]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env.pop("PREFECT_API_URL", None)
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return env


def _zeroforge(args: list[str], tmp_path: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(ZEROFORGE + args, env=_env(tmp_path), capture_output=True, text=True, timeout=timeout,
                          cwd=tmp_path)
    assert proc.returncode == 0, f"zeroforge {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed (CI installs it)")
def test_two_generations_then_rollback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = _zeroforge(["run", "--game", "tictactoe", "--generations", "2", "--data-dir", str(data), *FAST], tmp_path)
    assert "(redis-server)" in out.stdout, out.stdout
    assert "started 2 local worker process(es)" in out.stdout
    assert "=== zeroforge run finished ===" in out.stdout
    assert f"tensorboard --logdir {data / 'tensorboard'}" in out.stdout

    game = make_game("tictactoe")
    layout = DataLayout(data, "tictactoe")
    registry = ModelRegistry(layout.registry_dir)
    versions = registry.list()
    assert [v.generation for v in versions] == [0, 1, 2]
    assert all(v.status in ("promoted", "rejected") for v in versions)
    promoted_by_gate = [v for v in versions if v.generation >= 1 and v.status == "promoted"]
    assert promoted_by_gate, "no candidate was promoted in two generations"
    for v in versions[1:]:
        assert v.gate["games"] == 400 or v.gate.get("early_stopped"), v.gate
        assert 0.0 <= v.gate["ci_low"] <= v.gate["score"] <= v.gate["ci_high"] <= 1.0
        assert v.training["steps"] == 120 and v.parent is not None
    assert "anchor" in promoted_by_gate[-1].gate
    history = registry.history()
    assert [h["version"] for h in history if h.get("event") == "promote"][0] == versions[0].version
    assert registry.best().version == promoted_by_gate[-1].version

    shards = list_shards(layout.shards_dir)
    assert len(shards) == 4  # two jobs in each of two generations
    shard = read_shard(shards[0].path, game=game)
    assert shard.num_games == 48 and shard.pi.shape[1] == game.num_actions

    records = read_metrics(layout.metrics_path)          # the curves: one record per generation, both in TensorBoard
    assert [r.generation for r in records] == [1, 2] and all(r.games == 96 and r.gate_games for r in records)
    assert [r.promoted for r in records] == [v.status == "promoted" for v in versions[1:]]
    assert records[-1].anchor_elo is not None or not records[-1].promoted
    assert layout.curves_plot_path.exists() and sorted(layout.tensorboard_run_dir.glob("events.out.tfevents.*"))
    assert all(r.generation_seconds and r.generation_seconds >= r.selfplay_seconds for r in records)
    strength = json.loads(_zeroforge(["models", "strength", "--json", "--game", "tictactoe", "--data-dir", str(data)],
                                     tmp_path).stdout)                 # anchor score against hours of training
    assert [row["generation"] for row in strength] == [1, 2] and not any(r["hours_estimated"] for r in strength)
    assert strength[1]["hours"] == pytest.approx(sum(r.generation_seconds for r in records) / 3600, abs=1e-3)
    assert all(r.oracle_positions == 200 and r.oracle_raw_ci_low <= r.oracle_raw <= r.oracle_raw_ci_high  # oracle
               and r.oracle_search is not None and row["oracle_raw"][0] == r.oracle_raw
               for r, row in zip(records, strength)), [(r.oracle_raw, r.oracle_search) for r in records]

    listing = json.loads(_zeroforge(["models", "ls", "--json", "--game", "tictactoe", "--data-dir", str(data)],
                                    tmp_path).stdout)
    assert [row["version"] for row in listing] == [v.version for v in versions]

    # Roll back to the initial model: the next generation must play with it.
    first = versions[0].version
    _zeroforge(["models", "rollback", first, "--force", "--game", "tictactoe", "--data-dir", str(data),
                "--reason", "e2e"], tmp_path)
    after = ModelRegistry(layout.registry_dir)
    assert after.best().version == first
    assert after.history()[-1]["event"] == "rollback" and after.history()[-1]["version"] == first
    _zeroforge(["run", "--game", "tictactoe", "--generations", "3", "--data-dir", str(data), *FAST], tmp_path)
    gen3 = [s for s in list_shards(layout.shards_dir) if s.generation == 3]
    assert len(gen3) == 2 and all(s.model_version == first for s in gen3)
    assert ModelRegistry(layout.registry_dir).get(f"{4:06d}").parent == first
