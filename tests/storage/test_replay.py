"""Replay window: newest-first selection, max_positions / max_generations, quarantine of damaged shards."""
from __future__ import annotations

import logging

import h5py
import numpy as np
import pytest

from shared.shards import ShardError, load_replay_window, read_shard


def _flip_byte_in_chunk(path, dataset: str) -> None:
    with h5py.File(path, "r") as h5:
        chunk = h5[dataset].id.get_chunk_info(0)
    data = bytearray(path.read_bytes())
    data[chunk.byte_offset + chunk.size // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_bit_rot_in_a_chunk_is_detected(make_shard):
    path = make_shard(0, "rot", games=2)
    _flip_byte_in_chunk(path, "pi")
    with pytest.raises(ShardError, match="rot.h5: cannot read shard"):
        read_shard(path)


def _positions(path) -> int:
    return read_shard(path).num_positions


def test_window_takes_newest_shards_and_newest_rows(make_shard, layout, connect4):
    old = make_shard(0, "g0", games=3, seed=1)
    mid = make_shard(1, "g1", games=3, seed=2)
    new = make_shard(2, "g2", games=3, seed=3)
    n_new, n_mid = _positions(new), _positions(mid)
    limit = n_new + n_mid - 5
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=limit)
    assert window.num_positions == limit
    assert window.shard_names == ["gen-000002/g2.h5", "gen-000001/g1.h5"]  # newest first; g0 not needed
    assert window.bad_shards == []
    # Rows come oldest first: the last n_mid - 5 rows of g1, then all of g2.
    np.testing.assert_array_equal(window.states[-n_new:], read_shard(new).states)
    np.testing.assert_array_equal(window.pi[: n_mid - 5], read_shard(mid).pi[5:])
    np.testing.assert_array_equal(window.generation, np.repeat([1, 2], [n_mid - 5, n_new]))
    assert window.states.dtype == np.int16 and window.pi.dtype == np.float32 and window.z.dtype == np.float32
    everything = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10**6)
    assert everything.num_positions == _positions(old) + n_mid + n_new
    assert everything.shard_names == ["gen-000002/g2.h5", "gen-000001/g1.h5", "gen-000000/g0.h5"]


def test_within_a_generation_newer_created_first(make_shard, layout, connect4):
    make_shard(4, "late", games=2, seed=1, created="2025-01-01T12:00:00+00:00")
    make_shard(4, "early", games=2, seed=2, created="2025-01-01T11:00:00+00:00")
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=1)
    assert window.shard_names == ["gen-000004/late.h5"] and window.num_positions == 1


def test_max_generations_limits_to_newest_generations(make_shard, layout, connect4):
    for generation in range(4):
        make_shard(generation, f"j{generation}", games=2, seed=generation)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10**6, max_generations=2)
    assert window.shard_names == ["gen-000003/j3.h5", "gen-000002/j2.h5"]
    assert set(window.generation.tolist()) == {2, 3}


def test_a_trainer_window_ignores_later_generations(make_shard, layout, connect4):
    """Generation 2's trainer must not see generation 3's shards (self-play enqueued ahead may write them)."""
    for generation in range(4):
        make_shard(generation, f"j{generation}", games=2, seed=generation)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10**6,
                                max_generations=2, up_to_generation=2)
    assert window.shard_names == ["gen-000002/j2.h5", "gen-000001/j1.h5"]


def test_damaged_shards_are_quarantined_and_reported(make_shard, layout, connect4, tictactoe, caplog):
    good = make_shard(1, "good", games=2, seed=1)
    truncated = make_shard(2, "truncated", games=2, seed=2)
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    garbage = layout.generation_shards_dir(2) / "garbage.h5"
    garbage.write_bytes(b"this is not an HDF5 file at all" * 10)
    flipped = make_shard(3, "bitrot", games=2, seed=3)
    _flip_byte_in_chunk(flipped, "z")  # silent bit rot inside data: the fletcher32 checksum must catch it
    other_game = make_shard(3, "tictactoe-job", games=2, seed=4, game=tictactoe)
    with caplog.at_level(logging.WARNING, logger="shared.shards.replay"):
        window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10**6)
    assert window.shard_names == ["gen-000001/good.h5"]
    assert window.num_positions == _positions(good)
    expected_bad = {"gen-000002/truncated.h5", "gen-000002/garbage.h5", "gen-000003/bitrot.h5", "gen-000003/tictactoe-job.h5"}
    assert set(window.bad_shards) == expected_bad
    assert sum("damaged shard" in r.getMessage() for r in caplog.records) == 4
    for path in (truncated, garbage, flipped, other_game):
        assert not path.exists()
    quarantined = sorted(p.name for p in layout.quarantine_dir.iterdir())
    assert "gen-000002__truncated.h5" in quarantined and "gen-000002__truncated.h5.reason.txt" in quarantined
    assert "truncated" in (layout.quarantine_dir / "gen-000002__truncated.h5.reason.txt").read_text()
    again = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10**6)
    assert again.bad_shards == [] and again.shard_names == ["gen-000001/good.h5"]


def test_empty_window_and_bad_limits(layout, connect4, tmp_path):
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=100)
    assert window.states.shape == (0, connect4.state_size) and window.pi.shape == (0, connect4.num_actions)
    with pytest.raises(ShardError, match="max_positions"):
        load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=0)
    assert load_replay_window(tmp_path / "elsewhere", tmp_path / "q", connect4, 10).num_positions == 0
