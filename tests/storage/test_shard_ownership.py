"""Ownership in shards and in the replay window: Go self-play records who owns each point at the end of each game,
the shard keeps it (an optional dataset), and the window turns it into per-row targets seen from the side to move,
known only for games that were counted out (not resigned)."""
from __future__ import annotations

from dataclasses import replace

import h5py
import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.search.selfplay import SelfPlayConfig, play_selfplay_games
from shared.search.types import SearchConfig
from shared.shards import ShardError, load_replay_window, read_shard, write_shard
from tests.storage.conftest import BASE_ATTRS


def _constant_evaluator(game, value: float):
    def evaluate(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (np.zeros((states.shape[0], game.num_actions), np.float32),
                np.full(states.shape[0], value, np.float32))
    return evaluate


@pytest.fixture(scope="module")
def go5():
    return make_game("go-5x5")


@pytest.fixture(scope="module")
def go_records(go5):
    """6 self-play games of go-5x5 with a flat network: half resign at once (value -0.9 < -0.5), half play on."""
    config = SelfPlayConfig(SearchConfig(num_simulations=4, solver=False), temperature_moves=200,
                            resign_threshold=-0.5, resign_disabled_fraction=0.5)
    records = play_selfplay_games(go5, _constant_evaluator(go5, -0.9), 6, config, np.random.default_rng(3))
    assert 0 < records.resigned.sum() < 6, "the fixture needs resigned and counted games"
    return records


def test_go_self_play_records_the_final_owners(go5, go_records) -> None:
    owner = go_records.ownership
    assert owner.shape == (6, 25) and owner.dtype == np.int8
    counted = ~go_records.resigned
    assert owner[counted].any(), "counted games end with stones on the board"


def test_other_games_record_no_ownership() -> None:
    game = make_game("tictactoe")
    config = SelfPlayConfig(SearchConfig(num_simulations=2))
    assert play_selfplay_games(game, _constant_evaluator(game, 0.0), 2, config,
                               np.random.default_rng(0)).ownership is None


def test_a_shard_keeps_ownership_and_a_shard_without_it_reads_as_none(tmp_path, go5, go_records) -> None:
    shard = read_shard(write_shard(tmp_path, "with", go5, go_records, {**BASE_ATTRS, "generation": 1}), go5)
    np.testing.assert_array_equal(shard.ownership, go_records.ownership)
    without = replace(go_records, ownership=None)
    shard = read_shard(write_shard(tmp_path, "without", go5, without, {**BASE_ATTRS, "generation": 1}), go5)
    assert shard.ownership is None
    with h5py.File(tmp_path / "without.h5") as h5:
        assert "ownership" not in h5


@pytest.mark.parametrize("bad, message", [
    (lambda o: o[:, :24], r"records.ownership has shape \(6, 24\)"),
    (lambda o: o[:5], r"records.ownership has shape \(5, 25\)"),
    (lambda o: o * 2, "ownership values must be"),
])
def test_bad_ownership_is_refused_before_anything_is_written(tmp_path, go5, go_records, bad, message) -> None:
    records = replace(go_records, ownership=bad(go_records.ownership.astype(np.int16)))
    with pytest.raises(ShardError, match=message):
        write_shard(tmp_path, "bad", go5, records, {**BASE_ATTRS, "generation": 1})
    assert not list(tmp_path.iterdir())


def test_the_window_gives_each_row_its_games_owners_from_the_side_to_move(tmp_path, go5, go_records) -> None:
    shards, quarantine = tmp_path / "shards", tmp_path / "quarantine"
    write_shard(shards, "a-with", go5, go_records, {**BASE_ATTRS, "generation": 1})
    write_shard(shards, "b-without", go5, replace(go_records, ownership=None), {**BASE_ATTRS, "generation": 1})
    assert load_replay_window(shards, quarantine, go5, max_positions=100_000).ownership is None   # not asked for
    window = load_replay_window(shards, quarantine, go5, max_positions=100_000, ownership=True)
    first = read_shard(shards / "a-with.h5", go5)          # oldest first within a generation: a-with, then b-without
    rows = first.num_positions
    assert window.num_positions == 2 * rows
    to_move = first.states[:, go5.num_cells + F_PLAYER]
    game_of_row = first.moves["game_id"]
    # Sign flip: the shard stores absolute colours; the window gives the side to move's view.
    np.testing.assert_array_equal(window.ownership[:rows], first.ownership[game_of_row] * to_move[:, None])
    np.testing.assert_array_equal(window.ownership_known[:rows], first.game_info["resigned"][game_of_row] == 0)
    assert window.ownership_known[:rows].any()
    assert not window.ownership_known[rows:].any() and not window.ownership[rows:].any()


def test_a_window_of_games_without_territory_has_no_ownership(make_shard, layout, connect4) -> None:
    make_shard(1, "c4", games=2)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, connect4, max_positions=1000,
                                ownership=True)
    assert window.num_positions > 0 and window.ownership is None and window.ownership_known is None


def test_the_shard_viewer_shows_the_owners_of_a_go_game(tmp_path, go5, go_records) -> None:
    from cli.render import game_json, game_listing

    shard = read_shard(write_shard(tmp_path, "view", go5, go_records, {**BASE_ATTRS, "generation": 1}), go5)
    counted = int(np.flatnonzero(~go_records.resigned)[0])
    text = game_listing(go5, shard, counted)
    owner = shard.ownership[counted]
    assert f"owners at the end (the ownership head's target): X {int((owner == 1).sum())}" in text
    rows = game_json(go5, shard, counted)["ownership"]
    assert len(rows) == 5 and all(len(row) == 5 and set(row) <= set("XO.") for row in rows)
    assert "".join(rows).count("X") == int((owner == 1).sum())
    resigned = int(np.flatnonzero(go_records.resigned)[0])
    assert "resigned: not counted, not trained on" in game_listing(go5, shard, resigned)
