"""The end-of-run summary line: the gate's decision comes with its cause, as the gate line has it."""
from __future__ import annotations

from cli.run import summary_line


def _summary(promote: bool, promoted: bool) -> dict:
    gate = {"wins": 21, "draws": 0, "losses": 19, "score": 0.525, "ci_low": 0.473, "ci_high": 0.577,
            "promote": promote, "why": "interval 0.473-0.577 above 0.5" if promote
            else "interval 0.473-0.577 not above 0.5"}
    return {"generation": 1, "selfplay": {"games": 32, "positions": 214}, "training": {"loss": 3.515},
            "candidate": "000002", "best_before": "000001", "gate": gate,
            "decision": {"promoted": promoted, "best": "000002" if promoted else "000001"}}


def test_the_decision_carries_the_gate_cause() -> None:
    assert summary_line(_summary(False, False)).endswith(
        "-> rejected (interval 0.473-0.577 not above 0.5); best is 000001")
    assert summary_line(_summary(True, True)).endswith("-> promoted (interval 0.473-0.577 above 0.5); best is 000002")


def test_a_passed_gate_that_lost_the_race_for_best_has_no_cause() -> None:
    line = summary_line(_summary(True, False))          # another promotion came first (BestChangedError)
    assert line.endswith("-> rejected; best is 000001") and "above" not in line


def test_a_gate_report_without_a_cause_still_prints() -> None:
    summary = _summary(False, False)
    del summary["gate"]["why"]                            # a generation recorded before gates gave causes
    assert summary_line(summary).endswith("-> rejected; best is 000001")
