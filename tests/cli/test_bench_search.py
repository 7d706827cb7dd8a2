"""The search benchmarks run and report sensible numbers (tiny settings; no timing assertions)."""
from __future__ import annotations

import pytest

import json

from click.testing import CliRunner

from cli import main
from cli.bench.search import benchmark_search


@pytest.mark.parametrize("solver", [True, False])
def test_benchmark_search_reports_simulations_per_second(solver: bool) -> None:
    report = benchmark_search("tictactoe", games=8, sims=6, moves=3, leaves_per_step=2, solver=solver)
    assert {"simulations_per_s", "ms_per_step", "game", "games", "sims", "steps"} <= set(report)
    assert report["game"] == "tictactoe" and report["games"] == 8 and report["sims"] == 6
    assert report["steps"] == 3 * 3 and report["simulations"] == 3 * 8 * 6
    assert report["simulations_per_s"] > 0 and report["ms_per_step"] > 0 and report["solver"] is solver


def test_bench_search_command_prints_json() -> None:
    result = CliRunner().invoke(main, ["bench", "search", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                       "--moves", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["games"] == 4 and report["simulations_per_s"] > 0 and report["ms_per_step"] > 0


def test_cpu_time_clock_is_reported() -> None:
    wall = benchmark_search("connect4", games=4, sims=4, moves=2)
    cpu = benchmark_search("connect4", games=4, sims=4, moves=2, cpu_time=True)
    assert wall["clock"] == "wall" and cpu["clock"] == "cpu"
    assert cpu["simulations"] == wall["simulations"] and cpu["simulations_per_s"] > 0
    result = CliRunner().invoke(main, ["bench", "search", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                       "--moves", "2", "--cpu-time"])
    assert result.exit_code == 0, result.output
    assert "(cpu time)" in result.output


def test_phase_times_cover_the_search_and_restore_the_functions() -> None:
    import shared.search.mcts as mcts_module
    from cli.bench import search as bench
    from cli.bench.search_phases import PHASES, format_phases, phase_times

    before = (mcts_module.select_leaves, mcts_module.BatchedMCTS._run_step, bench.make_game)
    times = phase_times("connect4", games=8, sims=6, moves=2, solver=True)
    assert (mcts_module.select_leaves, mcts_module.BatchedMCTS._run_step, bench.make_game) == before
    assert times["steps"] == 2 * 6
    for key in ("search", "step", "select", "leaves", "game_step", "evaluate_expand", "table", "legal", "outcomes",
                "expand", "backup"):
        assert times[key] > 0, key
    assert times["search"] >= times["step"] >= times["select"]
    assert times["step"] >= times["select"] + times["leaves"] + times["evaluate_expand"] + times["backup"]
    assert len(format_phases(times).splitlines()) <= len(PHASES) + 1
    result = CliRunner().invoke(main, ["bench", "search", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                       "--moves", "2", "--phases"])
    assert result.exit_code == 0, result.output
    assert "select (compiled descent)" in result.output


def test_repeats_report_the_median_run_and_every_run() -> None:
    report = benchmark_search("connect4", games=4, sims=4, moves=2, cpu_time=True, repeats=3)
    runs = report["runs_simulations_per_s"]
    assert report["repeats"] == 3 and len(runs) == 3 and all(rate > 0 for rate in runs)
    assert report["simulations_per_s"] == pytest.approx(sorted(runs)[1])     # the median run's figures
    single = benchmark_search("connect4", games=4, sims=4, moves=2, cpu_time=True)
    assert single["simulations"] == report["simulations"] and single["repeats"] == 1   # the same moves each run
    result = CliRunner().invoke(main, ["bench", "search", "--game", "tictactoe", "--games", "4", "--sims", "4",
                                       "--moves", "2", "--repeat", "3"])
    assert result.exit_code == 0, result.output
    assert "median of 3 runs" in result.output
    with pytest.raises(ValueError, match="repeats"):
        benchmark_search("tictactoe", games=2, sims=2, moves=1, repeats=0)
