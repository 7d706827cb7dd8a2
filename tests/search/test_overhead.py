"""The search benchmarks run and report sensible numbers (tiny settings; no timing assertions)."""
from __future__ import annotations

import pytest

from shared.search.overhead import benchmark_search, measure_overhead


def test_measure_overhead_reports_per_step_times() -> None:
    report = measure_overhead("connect4", batch=4, simulations=6, leaves_per_step=2, moves=3)
    assert 3 * 3 < report.steps <= 3 * (1 + 3)             # 3 steps per move, plus root calls of fresh trees
    assert report.ms_per_step_excluding_evaluator > 0 and report.ms_per_move > 0
    assert "connect4 B=4 sims=6" in report.line()


@pytest.mark.parametrize("solver", [True, False])
def test_benchmark_search_reports_simulations_per_second(solver: bool) -> None:
    report = benchmark_search("tictactoe", games=8, sims=6, moves=3, leaves_per_step=2, solver=solver)
    assert {"simulations_per_s", "ms_per_step", "game", "games", "sims", "steps"} <= set(report)
    assert report["game"] == "tictactoe" and report["games"] == 8 and report["sims"] == 6
    assert report["steps"] == 3 * 3 and report["simulations"] == 3 * 8 * 6
    assert report["simulations_per_s"] > 0 and report["ms_per_step"] > 0 and report["solver"] is solver
