"""flows.pipeline.next_generation on registries built by hand: where a (re)started pipeline continues."""
from __future__ import annotations

from pathlib import Path

from flows.pipeline import next_generation
from shared.registry import ModelRegistry


def _add_candidate(registry: ModelRegistry, parent: str, generation: int) -> str:
    """Register a copy of `parent`'s model file as a candidate of `generation`; returns its version."""
    return registry.register(Path(registry.get(parent).path), parent=parent,
                             generation=generation, training={"steps": 1}).version


def _promote_by_gate(registry: ModelRegistry, version: str) -> None:
    """Record a passing gate result on `version` and promote it, as flows.promote.decide_flow does."""
    registry.set_gate_result(version, {"score": 0.6, "promote": True})
    registry.promote(version, reason="gate won", by="gate")


def test_a_fresh_registry_starts_at_generation_one(registry, initial_version, tmp_path) -> None:
    assert next_generation(ModelRegistry(tmp_path / "empty")) == 1
    assert next_generation(registry) == 1  # only the random initial model (generation 0)


def test_an_undecided_generation_is_resumed(registry, initial_version) -> None:
    first = _add_candidate(registry, initial_version, 1)
    assert next_generation(registry) == 1  # candidate registered, gate not decided yet
    registry.reject(first, reason="gate lost")
    assert next_generation(registry) == 2
    second = _add_candidate(registry, initial_version, 2)
    _promote_by_gate(registry, second)
    assert next_generation(registry) == 3
    _add_candidate(registry, second, 3)
    assert next_generation(registry) == 3


def test_a_rollback_does_not_rewind_the_generation_count(registry, initial_version) -> None:
    candidate = _add_candidate(registry, initial_version, 1)
    _promote_by_gate(registry, candidate)
    registry.rollback(initial_version, reason="manual")
    assert registry.get(candidate).status == "retired"   # a retired version's generation still counts as decided
    assert next_generation(registry) == 2


def test_training_is_continuous_until_a_promotion_or_rollback(registry, initial_version) -> None:
    from flows.generation import training_parent

    assert training_parent(registry, initial_version, 1) == initial_version
    first = _add_candidate(registry, initial_version, 1)
    assert training_parent(registry, initial_version, 1) == initial_version  # never its own generation
    registry.reject(first, reason="gate lost")
    assert training_parent(registry, initial_version, 2) == first  # a rejected candidate's training is kept
    second = _add_candidate(registry, first, 2)
    _promote_by_gate(registry, second)
    assert training_parent(registry, second, 3) == second  # right after a promotion: the new best
    third = _add_candidate(registry, second, 3)
    registry.reject(third, reason="gate lost")
    registry.rollback(initial_version, reason="manual")
    assert training_parent(registry, initial_version, 4) == initial_version  # a rollback restarts from best


def test_a_best_model_whose_anchor_match_was_interrupted_gets_it_on_resume(registry, initial_version, layout) -> None:
    from cli.run import resume_line
    from flows.promote import missing_anchor
    from tests.services.conftest import tiny_config

    config = tiny_config(**{"gate.anchor": "random", "gate.anchor_games": 4})
    assert missing_anchor(config, registry) is None                    # the initial model has no gate
    candidate = _add_candidate(registry, initial_version, 1)
    gate = {"promote": True, "score": 0.9}
    registry.set_gate_result(candidate, gate)
    registry.promote(candidate, reason="gate won")                      # stopped here, before its anchor match
    assert missing_anchor(config, registry).version == candidate
    assert missing_anchor(tiny_config(**{"gate.anchor": "random", "gate.anchor_games": 0}), registry) is None
    registry.set_gate_result(candidate, {**gate, "anchor": {"opponent": "random", "score": 1.0}})
    assert missing_anchor(config, registry) is None
    assert resume_line(layout, 3) == "resuming tictactoe: 1 of 3 generations done; 2 to run"
    assert resume_line(layout, None) == "resuming tictactoe: 1 generation done; running until stopped"
    assert resume_line(layout, None, 1.5) == "resuming tictactoe: 1 generation done; running for at most 1.5 h"
    assert resume_line(layout, 3, 0.25) == "resuming tictactoe: 1 of 3 generations done; 2 to run, for at most 0.25 h"


def test_the_time_budget_allows_a_generation_only_if_it_ends_within_the_budget() -> None:
    from flows.pipeline import budget_allows_another

    assert budget_allows_another(3000.0, 600.0, None)           # no budget
    assert budget_allows_another(3000.0, 600.0, 3600.0)         # ends exactly at the budget
    assert not budget_allows_another(3000.1, 600.0, 3600.0)     # would end 0.1 s past it
    assert not budget_allows_another(3700.0, 0.0, 3600.0)       # already past it


def test_generations_count_the_data_directory_so_a_resume_runs_only_what_is_left(registry, initial_version,
                                                                                 layout) -> None:
    from cli.run import resume_line
    from shared.generations import generations_done, generations_left, progress_words

    assert generations_done(registry) == 0 and generations_left(0, 3) == 3
    assert resume_line(layout, 3) == "resuming tictactoe: 0 of 3 generations done; 3 to run"   # the initial model
    for generation in (1, 2):
        registry.reject(_add_candidate(registry, initial_version, generation), reason="gate lost")
    _add_candidate(registry, initial_version, 3)                        # stopped in generation 3's gate
    assert generations_done(registry) == 2 and generations_left(2, 3) == 1 and generations_left(2, None) is None
    assert resume_line(layout, 3) == "resuming tictactoe: 2 of 3 generations done; 1 to run"
    assert generations_left(3, 3) == 0 and generations_left(5, 3) == 0
    assert progress_words("tictactoe", 3, 3, True) == "tictactoe: 3 of 3 generations done; nothing to run"
    assert progress_words("tictactoe", 0, 2, False) == "starting tictactoe: 0 of 2 generations done; 2 to run"
    assert progress_words("tictactoe", 0, 1, False) == "starting tictactoe: 0 of 1 generation done; 1 to run"


def test_the_run_progress_line_gives_the_run_eta_from_the_mean_generation_time() -> None:
    from datetime import datetime, timezone

    from flows.progress import run_progress_line

    now = datetime(2026, 12, 4, 3, 0, tzinfo=timezone.utc)
    assert run_progress_line("tictactoe", 1, 3, [], now) == ("tictactoe generation 1 of 3: 0 done; run ETA after "
                                                            "this generation")
    # 2 done at 120 s and 240 s: 3 min a generation, generations 3 to 5 left -> 9 min from now
    assert run_progress_line("tictactoe", 3, 5, [120.0, 240.0], now) == (
        "tictactoe generation 3 of 5: 2 done, 3 to go at 3.0 min a generation; run ETA 03:09 (UTC)")
    assert run_progress_line("tictactoe", 4, None, [60.0], now) == (
        "tictactoe generation 4 (until stopped): 3 done at 1.0 min a generation")
    # with a wall-clock budget (pipeline.max_hours) the line says when it ends
    budget_end = datetime(2026, 12, 4, 4, 30, tzinfo=timezone.utc)
    assert run_progress_line("tictactoe", 4, None, [60.0], now, budget_end) == (
        "tictactoe generation 4 (time budget ends 04:30 (UTC)): 3 done at 1.0 min a generation")
    assert run_progress_line("tictactoe", 3, 5, [120.0, 240.0], now, budget_end) == (
        "tictactoe generation 3 of 5: 2 done, 3 to go at 3.0 min a generation; run ETA 03:09 (UTC); "
        "time budget ends 04:30 (UTC)")
    assert run_progress_line("tictactoe", 1, 3, [], now, budget_end) == (
        "tictactoe generation 1 of 3: 0 done; run ETA after this generation; time budget ends 04:30 (UTC)")
