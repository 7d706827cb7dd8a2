"""pipeline.overlap_selfplay for real (redis-server, two rq worker processes, HDF5, Prefect): each generation
enqueues the next one's self-play with the best model of that moment right behind its own self-play jobs, and the
next generation plays those very jobs; the generation's record says where the workers' time went."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shared.curves import read_metrics
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.shards import list_shards
from tests.e2e.test_pipeline_e2e import FAST, _zeroforge

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed (CI installs it)")
def test_self_play_is_enqueued_ahead_and_played_by_the_next_generation(tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = _zeroforge(["run", "--game", "tictactoe", "--generations", "3", "--data-dir", str(data), *FAST,
                      "--set", "pipeline.overlap_selfplay=true"], tmp_path)
    log = out.stdout + out.stderr
    layout = DataLayout(data, "tictactoe")
    registry = ModelRegistry(layout.registry_dir)
    versions = {v.generation: v for v in registry.list()}
    assert sorted(versions) == [0, 1, 2, 3]
    best_at = {}     # the best model when each generation's self-play was enqueued
    for generation in (2, 3):
        assert f"gen {generation} self-play enqueued ahead" in log, log[-3000:]
        # enqueued with the previous generation's self-play, before that was done
        ahead = log.index(f"gen {generation} self-play enqueued ahead")
        assert log.index(f"generation {generation - 1}: playing with") < ahead < log.index(
            f"gen {generation - 1} self-play: ")
        shards = [s for s in list_shards(layout.shards_dir) if s.generation == generation]
        assert len(shards) >= 2      # the base jobs, and those enqueued while workers were free
        models = {s.model_version for s in shards}
        assert len(models) == 1
        best_at[generation] = models.pop()
    # generation 2 played with the best model of generation 1's start (000001: no gate had run yet); generation 3
    # with the best after generation 1's gate, whatever generation 2's gate decided
    assert best_at[2] == versions[0].version
    gen1 = versions[1]
    assert best_at[3] == (gen1.version if gen1.status in ("promoted", "retired") else versions[0].version)
    assert "gen 4 self-play enqueued ahead" not in log      # the last generation enqueues nothing ahead
    # each generation's trainer saw exactly its own and earlier generations' shards (the window holds them all)
    for generation in (1, 2, 3):
        assert versions[generation].training["positions"] == sum(
            s.num_positions for s in list_shards(layout.shards_dir) if s.generation <= generation)
    # where the two workers' time went, per generation: every role measured, in the log and the metrics file
    records = read_metrics(layout.metrics_path)
    assert [r.generation for r in records] == [1, 2, 3]
    for record in records:
        assert record.workers == 2 and record.worker_train_s > 0 and record.worker_gate_s > 0
        busy = record.worker_selfplay_s + record.worker_train_s + record.worker_gate_s + record.worker_anchor_s
        assert busy <= 2 * record.generation_seconds + 1.0 and record.worker_idle_s >= 0
        assert f"gen {record.generation} worker time: 2 worker(s) x" in log
    # generation 1 plays its own games and starts generation 2's; the last generation's were all played ahead
    assert records[0].worker_selfplay_s > 0 and sum(r.worker_selfplay_s for r in records) > 0
