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
