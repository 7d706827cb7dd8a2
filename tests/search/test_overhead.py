"""The overhead benchmark runs and reports sensible numbers (tiny settings; no timing assertions)."""
from __future__ import annotations

from shared.search.overhead import measure_overhead


def test_measure_overhead_reports_per_step_times() -> None:
    report = measure_overhead("connect4", batch=4, simulations=6, leaves_per_step=2, moves=3)
    assert 3 * 3 < report.steps <= 3 * (1 + 3)             # 3 steps per move, plus root calls of fresh trees
    assert report.ms_per_step_excluding_evaluator > 0 and report.ms_per_move > 0
    assert "connect4 B=4 sims=6" in report.line()
