"""`zeroforge bench oracle`: models side by side on one oracle set, the set file built then reused, and the
errors for games without labels and for files that are not sets (the rates are tested in
tests/players/test_oracle.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cli import main


def _untrained(tmp_path, name: str):
    from shared.games import make_game
    from shared.network.modelfile import create_model, save_model
    from shared.network.spec import NetworkSpec

    path = tmp_path / f"untrained-{name}.pt"
    game = make_game(name)
    save_model(path, create_model(game, NetworkSpec(1, 8, 16), seed=0), game)
    return path


def test_bench_oracle_compares_models_and_reuses_its_set_file(tmp_path) -> None:
    untrained = _untrained(tmp_path, "tictactoe")
    set_file = tmp_path / "set.npz"
    args = ["bench", "oracle", "--game", "tictactoe", "--model", "shipped", "--model", str(untrained),
            "--positions", "60", "--seed", "4", "--sims", "4", "--set-file", str(set_file),
            "--data-dir", str(tmp_path / "data")]
    first = CliRunner().invoke(main, [*args, "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output.strip().splitlines()[-1])
    assert set_file.exists() and "saved to" in first.output
    assert [m["model"] for m in report["models"]] == ["shipped", str(untrained)]
    assert report["positions"] == 60 and report["simulations"] == 4
    shipped, untrained_figures = report["models"]
    assert shipped["raw"]["total"] == 60 and shipped["raw_optimal"] is not None
    (difference,) = report["differences"]
    assert difference["baseline"] == "shipped"
    assert difference["raw"][0] == pytest.approx(untrained_figures["raw"]["rate"] - shipped["raw"]["rate"])
    # the shipped tic-tac-toe network is far better than an untrained one on its own policy
    assert difference["raw"][2] < 0
    # again with the file: the same positions (another --positions and --seed are ignored), the same figures
    again = CliRunner().invoke(main, [*args[:8], "--positions", "7", "--seed", "9", *args[12:]])
    assert again.exit_code == 0, again.output
    assert "loaded from" in again.output and "raw policy" in again.output and "differences" in again.output
    assert f"{100 * shipped['raw']['rate']:.1f}%" in again.output


def test_bench_oracle_refuses_a_game_without_labels_and_a_file_that_is_not_a_set(tmp_path) -> None:
    go = CliRunner().invoke(main, ["bench", "oracle", "--game", "go-7x7", "--model", str(_untrained(tmp_path, "go-7x7"))])
    assert go.exit_code == 2 and "no oracle set" in go.output and "zeroforge eval" in go.output
    assert "Traceback" not in go.output
    other = tmp_path / "connect4-set.npz"
    np.savez(other, states=np.zeros((2, 50), np.int16), keeps=np.ones((2, 7), bool), source=np.array("x"))
    wrong = CliRunner().invoke(main, ["bench", "oracle", "--game", "tictactoe", "--model", "shipped", "--set-file",
                                      str(other), "--data-dir", str(tmp_path / "data")])
    assert wrong.exit_code == 2 and "not a readable oracle set of tictactoe" in wrong.output
    assert "Traceback" not in wrong.output


def _shard(directory, name: str, games: int = 12):
    from shared.games import make_game
    from shared.shards import write_shard
    from tests.storage.helpers import random_records

    game = make_game(name)
    attrs = {"generation": 1, "model_version": "000001", "seed": 0, "simulations": 16}
    return write_shard(directory, "gen-000001-sp-0000", game, random_records(game, games, seed=3), attrs)


def test_bench_oracle_from_shards_labels_the_runs_own_positions_and_saves_the_set(tmp_path) -> None:
    shards = tmp_path / "shards" / "gen-000001"
    _shard(shards, "tictactoe")
    set_file = tmp_path / "own.npz"
    args = ["bench", "oracle", "--game", "tictactoe", "--model", "shipped", "--positions", "15", "--sims", "4",
            "--data-dir", str(tmp_path / "data")]
    result = CliRunner().invoke(main, [*args, "--from-shards", str(tmp_path / "shards"), "--set-file",
                                       str(set_file), "--json"])
    assert result.exit_code == 0, result.output
    assert "of 1 shard(s)" in result.output and "given positions" in result.output and set_file.exists()
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["positions"] == 15 and "given positions" in report["source"]
    from shared.games import make_game
    from shared.games.oracle_set import load_oracle_set
    from shared.shards import read_shard
    game = make_game("tictactoe")
    own = {s[:9].tobytes() for s in read_shard(next(shards.glob("*.h5")), game).states}
    assert all(s[:9].tobytes() in own for s in load_oracle_set(set_file, game).states)
    # the saved file is not overwritten by another --from-shards call
    again = CliRunner().invoke(main, [*args, "--from-shards", str(shards), "--set-file", str(set_file)])
    assert again.exit_code == 2 and "already exists" in again.output and "Traceback" not in again.output


def test_bench_oracle_from_shards_refuses_what_it_cannot_label(tmp_path) -> None:
    _shard(tmp_path / "c4", "connect4", games=2)
    cases = [
        (["--game", "gomoku-6x6-4", "--from-shards", str(tmp_path / "c4")], "come with their own positions"),
        (["--game", "tictactoe", "--from-shards", str(tmp_path / "nothing")], "no shard files there"),
        (["--game", "tictactoe", "--from-shards", str(tmp_path / "c4")], "--from-shards:"),
    ]
    for extra, message in cases:
        result = CliRunner().invoke(main, ["bench", "oracle", "--model", "shipped", "--data-dir",
                                           str(tmp_path / "data"), *extra])
        assert result.exit_code == 2 and message in result.output, (extra, result.output)
        assert "Traceback" not in result.output


def test_bench_oracle_phase_builds_the_late_midgame_set_and_refuses_unknown_phases(tmp_path) -> None:
    set_file = tmp_path / "late.npz"
    untrained = str(_untrained(tmp_path, "othello-6x6"))
    args = ["bench", "oracle", "--data-dir", str(tmp_path / "d")]
    result = CliRunner().invoke(main, [*args, "--game", "othello-6x6", "--model", untrained, "--phase",
                                       "late-midgame", "--positions", "3", "--sims", "2", "--set-file", str(set_file),
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert "building the late-midgame oracle set: 3 positions" in result.output and set_file.exists()
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["positions"] == 3 and "late-midgame positions with 17-22 empty squares" in report["source"]
    othello = ["--game", "othello-6x6", "--model", untrained]
    cases = [
        ([*othello, "--phase", "opening"], "no such oracle set; choose one of late-midgame"),
        ([*othello, "--phase", "late-midgame", "--from-shards", str(tmp_path)], "drop one of them"),
        (["--game", "tictactoe", "--model", "shipped", "--phase", "late-midgame"],
         "has only the pipeline's oracle set"),
    ]
    for extra, message in cases:
        refused = CliRunner().invoke(main, [*args, *extra])
        assert refused.exit_code == 2 and message in refused.output, (extra, refused.output)
        assert "Traceback" not in refused.output


def test_bench_oracle_splits_a_gomoku_set_by_kind_of_position(tmp_path) -> None:
    untrained = _untrained(tmp_path, "gomoku-6x6-4")
    result = CliRunner().invoke(main, ["bench", "oracle", "--game", "gomoku-6x6-4", "--model", str(untrained),
                                       "--positions", "8", "--sims", "2", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    table = result.output.split("by kind of position:")[1]
    assert "win_in_1" in table and "must_block" in table and "raw policy" in table
