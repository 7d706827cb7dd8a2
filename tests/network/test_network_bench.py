"""The self-play benchmark runs end to end (tiny settings) and its --json line has the required keys."""
import json

import pytest
from click.testing import CliRunner

from cli import main

REQUIRED = {"forward_positions_per_s", "simulations_per_s", "ratio", "moves_per_s", "sequential_moves_per_s",
            "speedup", "game", "games", "sims", "device", "network", "torch_threads"}


def test_bench_selfplay_json_end_to_end():
    runner = CliRunner()
    result = runner.invoke(main, ["bench", "selfplay", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                  "--moves", "2", "--sequential-moves", "2", "--forward-seconds", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert REQUIRED <= set(figures)
    assert figures["game"] == "tictactoe" and figures["games"] == 4 and figures["sims"] == 4
    assert figures["device"] == "cpu" and figures["torch_threads"] == 1
    assert figures["network"]["blocks"] == 2 and figures["network"]["channels"] == 32
    assert figures["positions_played"] == 8 and figures["sequential_moves"] == 2
    for key in ("forward_positions_per_s", "simulations_per_s", "moves_per_s", "sequential_moves_per_s"):
        assert figures[key] > 0
    assert figures["evaluated_positions"] > 0
    assert "speedup batched/sequential" in result.stdout


def test_bench_rejects_unknown_game_and_overrides_spec():
    runner = CliRunner()
    bad = runner.invoke(main, ["bench", "selfplay", "--game", "chess"])
    assert bad.exit_code == 2 and "chess" in bad.output
    small = runner.invoke(main, ["bench", "selfplay", "--game", "tictactoe", "--games", "2", "--sims", "2",
                                 "--moves", "1", "--blocks", "1", "--channels", "8", "--forward-seconds", "0",
                                 "--json"])
    assert small.exit_code == 0, small.output
    network = json.loads(small.stdout.strip().splitlines()[-1])["network"]
    assert (network["blocks"], network["channels"]) == (1, 8) and "global_pool" not in network
    pooled = runner.invoke(main, ["bench", "selfplay", "--game", "go-5x5", "--games", "2", "--sims", "2",
                                  "--moves", "1", "--blocks", "2", "--channels", "8", "--global-pool",
                                  "--forward-seconds", "0", "--json"])
    assert pooled.exit_code == 0, pooled.output
    assert json.loads(pooled.stdout.strip().splitlines()[-1])["network"]["global_pool"] is True
    assert "(value hidden 64, global pooling)" in pooled.stdout
    lined = runner.invoke(main, ["bench", "selfplay", "--game", "gomoku-6x6-4", "--games", "2", "--sims", "2",
                                 "--moves", "1", "--blocks", "1", "--channels", "8", "--line-planes",
                                 "--forward-seconds", "0", "--json"])
    assert lined.exit_code == 0, lined.output
    assert json.loads(lined.stdout.strip().splitlines()[-1])["network"]["line_planes"] is True
    refused = runner.invoke(main, ["bench", "selfplay", "--game", "othello-6x6", "--games", "2", "--sims", "2",
                                   "--moves", "1", "--line-planes", "--forward-seconds", "0"])
    assert refused.exit_code == 2 and "no lines" in refused.output


def test_bench_overlap_both_reports_both_runs_side_by_side():
    runner = CliRunner()
    result = runner.invoke(main, ["bench", "selfplay", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                  "--moves", "2", "--sequential-moves", "1", "--forward-seconds", "0.05",
                                  "--precision", "fp32", "--overlap", "both", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["precision"] == "fp32" and figures["overlap"] == "both"
    assert figures["overlap_on"]["positions_played"] == figures["positions_played"] == 8
    assert figures["overlap_on"]["ratio"] > 0
    assert "batched self-play (overlap on)" in result.stdout and "ratio sims/forward (overlap on)" in result.stdout
    assert "ratio sims/forward " in result.stdout and "speedup batched/sequential" in result.stdout


@pytest.mark.integration   # starts search processes and an inference server
def test_bench_shared_runs_both_modes_end_to_end():
    import multiprocessing as mp

    runner = CliRunner()
    result = runner.invoke(main, ["bench", "shared", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                  "--moves", "2", "--processes", "2", "--blocks", "1", "--channels", "8", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["shared_positions"] == figures["separate_positions"] == 8
    assert figures["shared_moves_per_s"] > 0 and figures["separate_moves_per_s"] > 0
    assert 0 <= figures["identical_games"] <= 4 and "one shared network" in result.stdout
    assert figures["device"] == "cpu" and figures["other_mode"] == "merged"        # a CPU worker serves in parallel
    assert figures["other_positions"] == 8 and "merged / separate" in result.stdout
    assert not mp.active_children()
    bad = runner.invoke(main, ["bench", "shared", "--game", "tictactoe", "--device", "gpu"])
    assert bad.exit_code == 2 and "--device 'gpu'" in bad.output
