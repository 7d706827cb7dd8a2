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
