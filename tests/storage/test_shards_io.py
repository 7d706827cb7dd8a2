"""Shard write/read: round trip, validation, atomic publish, retried jobs, crash leftovers."""
from __future__ import annotations

import multiprocessing
import os
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest

from shared.shards import (
    FORMAT_VERSION, ShardError, list_shards, read_shard, remove_stale_temp_files, scan_shards, write_shard,
)
from shared.shards import writer as writer_module
from tests.storage.conftest import BASE_ATTRS
from tests.storage.helpers import random_records


def _attrs(**more):
    return {**BASE_ATTRS, "generation": 3, **more}


def test_round_trip_arrays_and_attrs(tmp_path, connect4):
    records = random_records(connect4, 6, seed=1)
    path = write_shard(tmp_path, "job-a", connect4, records, _attrs(worker_host="host-1"))
    assert path == tmp_path / "job-a.h5"
    shard = read_shard(path, connect4)
    # Rows are regrouped by game in move order; compare against the same ordering of the input.
    order = np.lexsort((records.move_number, records.game_id))
    np.testing.assert_array_equal(shard.states, records.states[order])
    np.testing.assert_array_equal(shard.pi, records.pi[order])
    np.testing.assert_array_equal(shard.z, records.z[order])
    for name in ("game_id", "move_number", "action", "root_value", "visit_count"):
        np.testing.assert_array_equal(shard.moves[name], getattr(records, name)[order])
    np.testing.assert_array_equal(shard.games["length"], records.game_lengths)
    np.testing.assert_array_equal(shard.game_results, records.results)
    assert shard.states.dtype == np.int16 and shard.pi.dtype == np.float32 and shard.z.dtype == np.float32
    assert shard.attrs["format_version"] == FORMAT_VERSION
    assert shard.attrs["job_id"] == "job-a" and shard.attrs["game_name"] == "connect4"
    assert shard.game_params == connect4.params()
    assert (shard.attrs["generation"], shard.attrs["seed"], shard.attrs["simulations"]) == (3, 7, 16)
    assert shard.attrs["worker_host"] == "host-1" and shard.attrs["model_version"] == "000001"
    assert shard.attrs["created"].endswith("+00:00")
    assert (shard.num_games, shard.num_positions) == (6, len(records.z))


def test_game_replays_from_moves_table(tmp_path, connect4):
    path = write_shard(tmp_path, "job-r", connect4, random_records(connect4, 3, seed=2), _attrs())
    shard = read_shard(path)
    for k in range(shard.num_games):
        rows = shard.game_rows(k)
        final = connect4.play_moves(shard.game_actions(k))
        assert connect4.is_terminal(final)[0]
        np.testing.assert_array_equal(shard.states[rows][0], connect4.initial_states(1)[0])
        winner = final[0, connect4.num_cells + 4]  # F_WINNER
        assert winner == shard.games["winner"][k]


def test_h5_layout_is_chunked_and_compressed(tmp_path, connect4):
    path = write_shard(tmp_path, "job-c", connect4, random_records(connect4, 4), _attrs())
    with h5py.File(path, "r") as h5:
        for name in ("states", "pi", "z", "moves", "games"):
            assert h5[name].chunks is not None and h5[name].compression == "gzip" and h5[name].fletcher32


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: replace(r, pi=r.pi * 0.5), "sums to"),
        (lambda r: replace(r, pi=np.where(np.arange(r.pi.size).reshape(r.pi.shape) == 3, np.nan, r.pi)), "non-finite"),
        (lambda r: replace(r, z=-r.z), "seen from the side to move"),
        (lambda r: replace(r, states=r.states[:, :-1]), "shape"),
        (lambda r: replace(r, action=np.full_like(r.action, 99)), "actions must lie"),
        (lambda r: replace(r, game_lengths=r.game_lengths + 1), "lengths"),
        (lambda r: replace(r, root_value=r.root_value * 5), "root_value"),
        (lambda r: replace(r, states=r.states[:0], pi=r.pi[:0], z=r.z[:0]), "shape"),
    ],
)
def test_bad_records_raise_and_write_nothing(tmp_path, connect4, change, message):
    records = change(random_records(connect4, 3, seed=3))
    with pytest.raises(ShardError, match=message):
        write_shard(tmp_path, "job-bad", connect4, records, _attrs())
    assert list(tmp_path.iterdir()) == []


def test_records_missing_fields_and_bad_attrs(tmp_path, connect4):
    records = random_records(connect4, 2)
    with pytest.raises(ShardError, match="lack fields"):
        write_shard(tmp_path, "j", connect4, object(), _attrs())
    with pytest.raises(ShardError, match="missing shard attrs"):
        write_shard(tmp_path, "j", connect4, records, {"generation": 1})
    with pytest.raises(ShardError, match="unknown shard attrs"):
        write_shard(tmp_path, "j", connect4, records, _attrs(colour="blue"))
    with pytest.raises(ShardError, match="must be an integer"):
        write_shard(tmp_path, "j", connect4, records, _attrs(seed="7"))
    with pytest.raises(ShardError, match="UTC"):
        write_shard(tmp_path, "j", connect4, records, _attrs(created="2025-01-01T10:00:00+02:00"))
    with pytest.raises(ShardError, match="disagrees"):
        write_shard(tmp_path, "j", connect4, records, _attrs(job_id="other"))
    for bad_id in ("../escape", ".hidden", "a/b", "", "x" * 200, "job.h5"):
        with pytest.raises(ShardError, match="job id"):
            write_shard(tmp_path, bad_id, connect4, records, _attrs())
    assert list(tmp_path.iterdir()) == []


def test_retried_job_keeps_the_existing_file(tmp_path, connect4):
    first = write_shard(tmp_path, "job-x", connect4, random_records(connect4, 2, seed=1), _attrs(job_id="job-x"))
    before = first.read_bytes()
    again = write_shard(tmp_path, "job-x", connect4, random_records(connect4, 5, seed=9), _attrs())
    assert again == first and first.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job-x.h5"]


def test_concurrent_retry_racing_the_publish_keeps_one_file(tmp_path, connect4, monkeypatch):
    """The final name appears while the retry is writing: the retry's temp is dropped, the first file kept."""
    winner = write_shard(tmp_path / "other", "job-y", connect4, random_records(connect4, 2, seed=1), _attrs())
    original_publish = writer_module.publish_once

    def publish_after_rival(tmp: Path, final: Path) -> bool:
        os.link(winner, final)  # the rival finished first
        return original_publish(tmp, final)

    monkeypatch.setattr(writer_module, "publish_once", publish_after_rival)
    path = write_shard(tmp_path, "job-y", connect4, random_records(connect4, 4, seed=2), _attrs())
    assert read_shard(path).num_games == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job-y.h5", "other"]


def test_exception_during_write_leaves_nothing(tmp_path, connect4, monkeypatch):
    def crash_midway(h5, arrays, attrs):
        h5.create_dataset("states", data=arrays.states)
        raise RuntimeError("simulated crash while writing")

    monkeypatch.setattr(writer_module, "write_datasets", crash_midway)
    with pytest.raises(RuntimeError, match="simulated crash"):
        write_shard(tmp_path, "job-crash", connect4, random_records(connect4, 2), _attrs())
    assert list(tmp_path.iterdir()) == []
    assert list_shards(tmp_path) == []


def _die_while_writing(directory: str) -> None:
    """Child process: start a shard, then die abruptly (no cleanup runs), like a killed worker."""
    from shared.games import make_game

    game = make_game("connect4")

    def die(h5, arrays, attrs):
        h5.create_dataset("states", data=arrays.states)
        h5.flush()
        os._exit(17)

    writer_module.write_datasets = die
    write_shard(Path(directory), "job-killed", game, random_records(game, 2), _attrs())


def test_killed_writer_leaves_only_an_ignored_temp_file(tmp_path):
    process = multiprocessing.get_context("fork").Process(target=_die_while_writing, args=(str(tmp_path),))
    process.start()
    process.join(30)
    assert process.exitcode == 17
    leftovers = [p.name for p in tmp_path.iterdir()]
    assert len(leftovers) == 1 and leftovers[0].startswith(".job-killed.") and leftovers[0].endswith(".h5.tmp")
    scan = scan_shards(tmp_path)
    assert scan.infos == [] and scan.damaged == []
    assert remove_stale_temp_files(tmp_path, older_than_s=3600) == []
    assert len(remove_stale_temp_files(tmp_path, older_than_s=-1)) == 1
    assert list(tmp_path.iterdir()) == []


def test_read_rejects_wrong_game_unknown_version_and_missing_dataset(tmp_path, connect4, tictactoe):
    path = write_shard(tmp_path, "job-v", connect4, random_records(connect4, 2), _attrs())
    with pytest.raises(ShardError, match="another game"):
        read_shard(path, tictactoe)
    with h5py.File(path, "r+") as h5:
        h5.attrs["format_version"] = 99
    with pytest.raises(ShardError, match="format_version 99 is not supported"):
        read_shard(path)
    with h5py.File(path, "r+") as h5:
        h5.attrs["format_version"] = FORMAT_VERSION
        del h5["z"]
    with pytest.raises(ShardError, match="'z' is missing"):
        read_shard(path)
    with pytest.raises(ShardError, match=str(tmp_path / "absent.h5")):
        read_shard(tmp_path / "absent.h5")


def test_list_shards_sorted_with_info(make_shard, layout):
    make_shard(2, "b", games=3, seed=1)
    make_shard(0, "a", games=2, seed=2)
    make_shard(2, "c", games=1, seed=3)
    (layout.generation_shards_dir(1) / ".partial.1.abc.h5.tmp").parent.mkdir(parents=True)
    (layout.generation_shards_dir(1) / ".partial.1.abc.h5.tmp").write_bytes(b"half a shard")
    infos = list_shards(layout.shards_dir, recursive=True)
    assert [(i.generation, i.job_id) for i in infos] == [(0, "a"), (2, "b"), (2, "c")]
    assert [i.num_games for i in infos] == [2, 3, 1]
    assert all(i.size_bytes == i.path.stat().st_size and i.model_version == "000001" for i in infos)
    assert list_shards(layout.shards_dir, recursive=False) == []
    assert [i.job_id for i in list_shards(layout.generation_shards_dir(2), recursive=False)] == ["b", "c"]


def test_real_selfplay_records_round_trip(tmp_path, tictactoe):
    """Records from the real self-play loop (tiny random evaluator) store, read back and replay exactly."""
    from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
    from cli.render import replay_mismatch

    value_rng = np.random.default_rng(1)

    def random_evaluator(states: np.ndarray):
        logits = np.zeros((states.shape[0], tictactoe.num_actions), np.float32)  # [M, A] uniform priors
        values = value_rng.uniform(-0.5, 0.5, states.shape[0]).astype(np.float32)  # [M], side to move
        return logits, values

    config = SelfPlayConfig(search=SearchConfig(num_simulations=8))
    records = play_selfplay_games(tictactoe, random_evaluator, 4, config, np.random.default_rng(0))
    path = write_shard(tmp_path, "real", tictactoe, records, _attrs(simulations=8))
    shard = read_shard(path, tictactoe)
    assert shard.num_positions == len(records.z) and shard.num_games == 4
    np.testing.assert_array_equal(shard.game_results, records.results)
    assert all(replay_mismatch(tictactoe, shard, k) is None for k in range(4))
