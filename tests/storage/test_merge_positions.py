"""Position averaging (shared.shards.merge): repeated states become one row with their targets averaged."""
from __future__ import annotations

import numpy as np

from shared.shards import ReplayWindow, load_replay_window
from shared.shards.merge import merge_duplicate_positions


def _window(states, pi, z, generation, root_value, **extra) -> ReplayWindow:
    return ReplayWindow(np.asarray(states, np.int16), np.asarray(pi, np.float32), np.asarray(z, np.float32),
                        np.asarray(generation, np.int32), np.asarray(root_value, np.float32),
                        ["gen-000001/a.h5"], [], **extra)


def test_repeats_are_averaged_and_ordered_by_their_newest_row():
    a, b, c = [1, 0, 0], [0, 1, 0], [0, 0, 1]
    window = _window(states=[a, b, a, c, a, b],
                     pi=[[1, 0], [0, 1], [0, 1], [0.5, 0.5], [0, 1], [1, 0]],
                     z=[1, -1, -1, 0, -1, 1], generation=[1, 1, 2, 2, 3, 3],
                     root_value=[0.5, 0.0, 0.2, 0.1, -0.1, 0.4],
                     ownership=np.array([[1], [0], [-1], [1], [0], [1]], np.int8),
                     ownership_known=np.array([True, True, False, True, True, False]),
                     cut_value=np.array([1, -1, 0, 0, -1, 1], np.float32))
    merged = merge_duplicate_positions(window)
    # c's newest row is 3, a's is 4, b's is 5: oldest first by newest row
    np.testing.assert_array_equal(merged.states, np.array([c, a, b], np.int16))
    np.testing.assert_allclose(merged.pi, [[0.5, 0.5], [1 / 3, 2 / 3], [0.5, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(merged.pi.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(merged.z, [0, -1 / 3, 0], atol=1e-7)
    np.testing.assert_allclose(merged.root_value, [0.1, 0.2, 0.2], rtol=1e-6)
    np.testing.assert_allclose(merged.cut_value, [0, 0, 0], atol=1e-7)
    np.testing.assert_array_equal(merged.generation, [2, 3, 3])        # the newest row's
    np.testing.assert_array_equal(merged.ownership, [[1], [0], [1]])    # the newest row's game, not a mean
    np.testing.assert_array_equal(merged.ownership_known, [True, True, False])
    assert merged.pi.dtype == np.float32 and merged.z.dtype == np.float32 and merged.generation.dtype == np.int32
    assert merged.shard_names == window.shard_names


def test_a_window_without_repeats_is_unchanged():
    window = _window(states=[[0, 2], [1, 0], [0, 1]], pi=[[1, 0], [0, 1], [0.25, 0.75]], z=[1, 0, -1],
                     generation=[1, 2, 3], root_value=[0.1, 0.2, 0.3])
    merged = merge_duplicate_positions(window)
    for name in ("states", "pi", "z", "generation", "root_value"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(window, name))
    assert merged.ownership is None and merged.cut_value is None


def test_an_empty_window_stays_empty(connect4, layout):
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=100)
    assert merge_duplicate_positions(window).states.shape[0] == 0


def test_shards_read_back_merge_to_distinct_states(make_shard, layout, connect4):
    make_shard(0, "g0", games=6, seed=1)
    make_shard(1, "g1", games=6, seed=1)          # the same seed: the same records again, every row repeated
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=10_000)
    merged = merge_duplicate_positions(window)
    distinct = np.unique(window.states, axis=0).shape[0]
    assert merged.states.shape[0] == distinct < window.states.shape[0]
    assert np.unique(merged.states, axis=0).shape[0] == distinct
    np.testing.assert_allclose(merged.pi.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(np.abs(merged.z) <= 1)
