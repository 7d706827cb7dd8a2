"""services.run_record on a data directory built by hand: what `zeroforge status` shows when nothing runs."""
from __future__ import annotations

from pathlib import Path

from services.run_record import run_record, run_record_lines
from shared.curves import GenerationMetrics, append_metrics
from shared.phase import write_phase


def test_a_finished_run_reports_its_generations_best_model_and_last_gate(layout, registry, initial_version) -> None:
    empty = run_record(layout)
    assert empty["generations_done"] == 0 and empty["best"]["version"] == initial_version
    assert empty["last_gate"] is None and empty["phase"] is None and empty["oracle"] is None
    assert run_record_lines("tictactoe", empty)[2] == "  last gate: none yet"

    candidate = registry.register(Path(registry.get(initial_version).path), parent=initial_version, generation=1,
                                  training={"steps": 1}).version
    registry.set_gate_result(candidate, {"score": 0.625, "ci_low": 0.52, "ci_high": 0.73, "games": 40,
                                         "best": initial_version, "promote": True,
                                         "anchor": {"opponent": "minimax", "score": 0.9, "elo": 382.0}})
    registry.promote(candidate, reason="gate won", by="gate")
    append_metrics(layout.metrics_path, GenerationMetrics(
        generation=1, time="2026-12-04T02:00:00+00:00", games=64, positions=400, first_player_wins=30, draws=10,
        second_player_wins=24, candidate=candidate, best_before=initial_version, gate_games=40, gate_score=0.625,
        gate_ci_low=0.52, gate_ci_high=0.73, promoted=True, oracle_positions=200, oracle_simulations=16,
        oracle_raw=0.831, oracle_raw_ci_low=0.802, oracle_raw_ci_high=0.857, oracle_search=0.87,
        oracle_search_ci_low=0.841, oracle_search_ci_high=0.894, oracle_raw_optimal=0.7, oracle_raw_optimal_ci_low=0.6,
        oracle_raw_optimal_ci_high=0.8, oracle_search_optimal=0.75, oracle_search_optimal_ci_low=0.65,
        oracle_search_optimal_ci_high=0.85, oracle_random=0.412))
    write_phase(layout.phase_file, 1, "done", "1 generation(s) run", state="finished")

    record = run_record(layout)
    assert record["generations_done"] == 1 and record["models"] == 2 and record["problem"] is None
    assert record["best"]["version"] == candidate and record["best"]["anchor"]["opponent"] == "minimax"
    assert record["last_gate"]["candidate"] == candidate and record["last_gate"]["promoted"] is True
    lines = run_record_lines("tictactoe", record)
    assert lines[0].startswith("tictactoe: 1 generation(s) done, 2 model(s); last phase: gen 1 done 1 generation(s) "
                               "run (finished) at ")
    assert lines[1] == (f"  best:      {candidate} (generation 1), gate score 0.625 vs {initial_version} over 40 "
                        "games; against minimax 0.900 (Elo +382)")
    assert lines[2] == (f"  last gate: generation 1, {candidate} vs {initial_version}: score 0.625 [0.520, 0.730] "
                        "over 40 games -> promoted")
    assert record["oracle"]["generation"] == 1 and record["oracle"]["raw"] == 0.831
    assert lines[3] == ("  oracle:    generation 1: raw policy 83.1% [80.2, 85.7], 16 sims 87.0% [84.1, 89.4] of 200 "
                        "positions (random move 41.2%); optimal move: raw 70.0%, 16 sims 75.0%")


def test_a_damaged_registry_is_reported_not_raised(layout, registry, initial_version) -> None:
    registry.best_path.write_text('{"version": "bad"}', encoding="utf-8")
    record = run_record(layout)
    assert record["best"] is None and "damaged" in record["problem"]
    assert run_record_lines("tictactoe", record)[-1].startswith("  registry:  ")
