"""The per-game game_info table (format version 2): resignations and playout-capped rows with gaps; version 1
shards without it still read."""
from __future__ import annotations

from dataclasses import replace

import h5py
import numpy as np
import pytest

from shared.games import make_game
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
from shared.shards import ShardError, read_shard, write_shard
from shared.shards import schema
from shared.shards.gameinfo import resign_counts
from tests.search.helpers import HashEvaluator
from tests.storage.conftest import BASE_ATTRS
from tests.storage.helpers import random_records

ATTRS = {**BASE_ATTRS, "generation": 2}


@pytest.fixture(scope="module")
def gomoku():
    return make_game("gomoku-6x6-4")


@pytest.fixture(scope="module")
def capped_records(gomoku):
    """Playout-capped self-play (half the moves recorded) with resignation and a no-resign share."""
    config = SelfPlayConfig(search=SearchConfig(num_simulations=12), temperature_moves=4, resign_threshold=-0.3,
                            resign_disabled_fraction=0.5, full_search_fraction=0.5)
    return play_selfplay_games(gomoku, HashEvaluator(gomoku, seed=1), 16, config, np.random.default_rng(4))


def test_game_info_and_resign_counts_round_trip(tmp_path, gomoku, capped_records) -> None:
    rec = capped_records
    assert rec.resigned.any() and rec.resign_disabled.any() and (rec.game_lengths < rec.plies).any()
    shard = read_shard(write_shard(tmp_path, "job-gi", gomoku, rec, ATTRS), gomoku)
    info = shard.game_info
    np.testing.assert_array_equal(info["plies"], rec.plies)
    np.testing.assert_array_equal(info["resigned"], rec.resigned)
    np.testing.assert_array_equal(info["resign_disabled"], rec.resign_disabled)
    np.testing.assert_array_equal(info["would_resign_ply"], rec.would_resign_ply)
    np.testing.assert_array_equal(info["would_resign_player"], rec.would_resign_player)
    np.testing.assert_array_equal(shard.games["length"], rec.game_lengths)
    counts = resign_counts(info, shard.game_results)
    assert {k: shard.attrs[k] for k in schema.RESIGN_COUNT_ATTRS} == counts.as_dict()
    assert counts.resigned_games == int(rec.resigned.sum())
    for g in range(shard.num_games):                       # rows per game keep their true plies
        np.testing.assert_array_equal(shard.moves["move_number"][shard.game_rows(g)],
                                      rec.move_number[rec.game_id == g])


def test_a_version_1_shard_reads_with_every_ply_recorded_and_no_resignation(tmp_path, tictactoe) -> None:
    path = write_shard(tmp_path, "job-v1", tictactoe, random_records(tictactoe, 5, seed=2), ATTRS)
    with h5py.File(path, "r+") as h5:                      # what the version 1 writer left
        del h5[schema.GAME_INFO]
        for name in schema.RESIGN_COUNT_ATTRS:
            del h5.attrs[name]
        h5.attrs["format_version"] = 1
    shard = read_shard(path, tictactoe)
    np.testing.assert_array_equal(shard.game_info["plies"], shard.games["length"])
    assert not shard.game_info["resigned"].any() and (shard.game_info["would_resign_ply"] == -1).all()
    assert shard.attrs["format_version"] == 1 and "resigned_games" not in shard.attrs


def test_a_version_2_shard_without_game_info_is_damaged(tmp_path, tictactoe) -> None:
    path = write_shard(tmp_path, "job-v2", tictactoe, random_records(tictactoe, 3, seed=2), ATTRS)
    with h5py.File(path, "r+") as h5:
        del h5[schema.GAME_INFO]
    with pytest.raises(ShardError, match="dataset 'game_info' is missing"):
        read_shard(path, tictactoe)


def _broken(rec, **changes):
    return replace(rec, **{k: (v(rec) if callable(v) else v) for k, v in changes.items()})


@pytest.mark.parametrize("changes, message", [
    ({"plies": lambda r: r.game_lengths - 1}, "lengths must be <= the plies"),
    ({"move_number": lambda r: r.move_number[::-1].copy()}, "move numbers of each game must increase"),
    ({"resign_disabled": lambda r: r.resigned.copy()}, "never both 1"),
    ({"would_resign_ply": lambda r: r.plies + 1, "would_resign_player": lambda r: np.ones_like(r.results)},
     "would_resign_ply must lie in"),
    ({"would_resign_player": lambda r: np.where(r.would_resign_ply >= 0, 0, 1).astype(np.int8)},
     "would_resign_player"),
])
def test_bad_game_info_is_refused(tmp_path, gomoku, capped_records, changes, message) -> None:
    with pytest.raises(ShardError, match=message):
        write_shard(tmp_path, "job-bad", gomoku, _broken(capped_records, **changes), ATTRS)
    assert list(tmp_path.iterdir()) == []


def test_shards_show_marks_resigned_and_playout_capped_games(tmp_path, gomoku, capped_records) -> None:
    import json

    from click.testing import CliRunner

    from cli.shards import shards

    path = write_shard(tmp_path, "job-show", gomoku, capped_records, ATTRS)
    runner = CliRunner()
    summary = runner.invoke(shards, ["show", str(path), "--all"])
    assert summary.exit_code == 0, summary.output
    assert "resigned)" in summary.stdout and "plies" in summary.stdout and "false_resignations" in summary.stdout
    games = json.loads(runner.invoke(shards, ["show", str(path), "--json"]).stdout)["games"]
    assert [g["resigned"] for g in games] == capped_records.resigned.tolist()
    assert [g["plies"] for g in games] == capped_records.plies.tolist()
    capped = int(np.flatnonzero(capped_records.game_lengths < capped_records.plies)[0])
    listing = runner.invoke(shards, ["show", str(path), "--index", str(capped)])
    assert listing.exit_code == 0, listing.output
    assert "plies recorded (playout caps or a random opening" in listing.stdout
    assert "REPLAY MISMATCH" not in listing.stdout
