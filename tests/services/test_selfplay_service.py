"""services.selfplay.selfplay_job called directly: one shard per job id, reused on a retry, with its attrs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.selfplay import selfplay_job
from shared.registry import RegistryError
from shared.shards import list_shards, read_shard
from tests.services.conftest import selfplay_payload


def test_writes_one_shard_named_after_the_job(context, data_dir, config, initial_version, layout, tictactoe) -> None:
    summary = selfplay_job(selfplay_payload(layout, config, initial_version, "job-a", generation=2).model_dump(mode="json"), context)
    shard_dir = layout.generation_shards_dir(2)
    assert sorted(p.name for p in shard_dir.iterdir()) == ["job-a.h5"]
    assert layout.root / summary["shard"] == shard_dir / "job-a.h5"
    shard = read_shard(shard_dir / "job-a.h5", game=tictactoe)
    assert shard.attrs["model_version"] == initial_version
    assert shard.attrs["generation"] == 2 and shard.attrs["seed"] == 11 and shard.attrs["simulations"] == 4
    assert summary["games"] == shard.num_games == 4 and summary["positions"] == shard.num_positions
    results = np.asarray(shard.game_results)
    assert summary["first_player_wins"] == int((results == 1).sum())
    assert summary["draws"] + summary["first_player_wins"] + summary["second_player_wins"] == 4
    assert summary["reused"] is False and summary["seconds"] > 0
    # every position's z is the final result from the side to move: +-1 or 0, never anything else
    assert set(np.unique(shard.z)) <= {-1.0, 0.0, 1.0}


def test_a_repeated_job_reuses_its_shard(context, data_dir, config, initial_version, layout) -> None:
    first = selfplay_job(selfplay_payload(layout, config, initial_version, "job-b").model_dump(mode="json"), context)
    path = layout.root / first["shard"]
    mtime = path.stat().st_mtime_ns
    again = selfplay_job(selfplay_payload(layout, config, initial_version, "job-b", seed=999).model_dump(mode="json"), context)
    assert again["reused"] is True and again["shard"] == first["shard"]
    assert path.stat().st_mtime_ns == mtime
    assert {k: again[k] for k in ("games", "positions", "first_player_wins", "draws", "second_player_wins")} == \
           {k: first[k] for k in ("games", "positions", "first_player_wins", "draws", "second_player_wins")}
    assert len(list_shards(layout.shards_dir)) == 1


def test_a_damaged_shard_is_quarantined_and_played_again(context, data_dir, config, initial_version, layout, tictactoe) -> None:
    first = selfplay_job(selfplay_payload(layout, config, initial_version, "job-c").model_dump(mode="json"), context)
    path = layout.root / first["shard"]
    path.write_bytes(path.read_bytes()[:200])  # truncated by a disk problem
    again = selfplay_job(selfplay_payload(layout, config, initial_version, "job-c").model_dump(mode="json"), context)
    assert again["reused"] is False
    assert read_shard(path, game=tictactoe).num_games == 4
    quarantined = sorted(p.name for p in layout.quarantine_dir.iterdir())
    assert any(name.endswith("job-c.h5") for name in quarantined), quarantined
    assert any(name.endswith(".reason.txt") for name in quarantined), quarantined


def test_an_unknown_model_version_is_a_registry_error(context, data_dir, config, initial_version, layout) -> None:
    with pytest.raises(RegistryError, match="unknown model version 000042"):
        selfplay_job(selfplay_payload(layout, config, "000042", "job-d").model_dump(mode="json"), context)
    assert not layout.generation_shards_dir(1).exists() or not any(layout.generation_shards_dir(1).iterdir())


def test_worker_overlap_and_precision_settings(context) -> None:
    from services.payloads import WorkerContext

    assert context.precision is None and context.overlap == "auto" and context.selfplay_overlap() is False
    cuda = WorkerContext(data_dir=context.data_dir, device="cuda:0")
    assert cuda.selfplay_overlap() is True
    assert cuda.model_copy(update={"overlap": "off"}).selfplay_overlap() is False
    assert context.model_copy(update={"overlap": "on"}).selfplay_overlap() is True
    with pytest.raises(ValueError):
        WorkerContext(data_dir=context.data_dir, precision="fp16")


def test_a_job_with_overlap_and_auto_precision_writes_a_full_shard(context, config, initial_version, layout,
                                                                   tictactoe) -> None:
    ctx = context.model_copy(update={"overlap": "on", "precision": "auto"})
    summary = selfplay_job(selfplay_payload(layout, config, initial_version, "job-o").model_dump(mode="json"), ctx)
    shard = read_shard(layout.root / summary["shard"], game=tictactoe)
    assert shard.num_games == 4 and summary["positions"] == shard.num_positions
    assert set(np.unique(shard.z)) <= {-1.0, 0.0, 1.0}


def test_jobs_on_two_processes_share_one_network_keep_the_processes_and_write_full_shards(
        context, config, initial_version, layout, tictactoe) -> None:
    import multiprocessing as mp

    from services.search_pool import close_worker_pool, worker_pool

    ctx = context.model_copy(update={"processes": 2})
    try:
        pids = []
        for job_id in ("job-p", "job-q"):
            summary = selfplay_job(selfplay_payload(layout, config, initial_version, job_id).model_dump(mode="json"),
                                   ctx)
            shard = read_shard(layout.root / summary["shard"], game=tictactoe)
            assert shard.num_games == 4 and summary["positions"] == shard.num_positions
            assert set(np.asarray(shard.z).tolist()) <= {-1.0, 0.0, 1.0}
            pids.append(worker_pool(2).pids)
        assert pids[0] == pids[1] and len(pids[0]) == 2          # the second job ran on the first one's processes
    finally:
        close_worker_pool()
    assert not mp.active_children()
