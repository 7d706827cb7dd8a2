"""The registry side of the UI's rollback and promote flows: which version a rollback without a version picks,
and the one-line errors for a data directory or game without a registry, or one the UI does not serve."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.prefect_env import UI_DATA_DIR_ENV, check_served_data_dir
from flows.registry_ops import open_registry, previous_best
from shared.layout import DataLayout
from shared.registry import ModelRegistry, RegistryError


def _registry(tmp_path: Path, model_file: Path) -> ModelRegistry:
    registry = ModelRegistry(DataLayout(tmp_path, "tictactoe").registry_dir)
    for generation in range(4):
        registry.register(model_file, parent=None, generation=generation)
    return registry


def test_rollback_without_a_version_walks_back_through_the_promotions(tmp_path: Path, model_file: Path) -> None:
    registry = _registry(tmp_path, model_file)
    with pytest.raises(RegistryError, match="no best model yet"):
        previous_best(registry)
    registry.promote("000001", "initial")
    with pytest.raises(RegistryError, match="no promoted version older than the best 000001"):
        previous_best(registry)
    for version in ("000002", "000004"):          # both won their gates
        registry.set_gate_result(version, {"promote": True, "score": 0.6})
    registry.promote("000002", "gate")
    registry.reject("000003", "gate")        # rejected versions are skipped
    registry.promote("000004", "gate")
    assert previous_best(registry) == "000002"
    registry.rollback(previous_best(registry), "ui")
    assert previous_best(registry) == "000001"   # older than the best now, not the best before it


def test_open_registry_names_what_is_missing(tmp_path: Path, model_file: Path) -> None:
    _registry(tmp_path, model_file)
    assert open_registry(str(tmp_path), "tictactoe").best_version() is None
    with pytest.raises(RegistryError, match="no model registry for game 'connect4'"):
        open_registry(str(tmp_path), "connect4")
    with pytest.raises(RegistryError, match="no model registry"):
        open_registry(str(tmp_path / "typo"), "tictactoe")
    assert not (tmp_path / "typo").exists()


def test_a_ui_run_refuses_another_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UI_DATA_DIR_ENV, raising=False)
    check_served_data_dir(tmp_path / "anything")          # outside a UI deployment: no constraint
    monkeypatch.setenv(UI_DATA_DIR_ENV, str(tmp_path / "served"))
    check_served_data_dir(tmp_path / "served" / ".." / "served")
    with pytest.raises(ValueError, match="is not the data directory this UI serves"):
        check_served_data_dir(tmp_path / "other")


def test_a_refused_ui_change_fails_with_the_registrys_one_line_reason(tmp_path: Path, model_file: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The flows' bodies (no Prefect run needed on the refusing path): the same refusals as `zeroforge models`."""
    from flows.registry_ops import promote_flow, rollback_flow

    monkeypatch.delenv(UI_DATA_DIR_ENV, raising=False)
    registry = _registry(tmp_path, model_file)
    registry.promote("000001", "initial")
    registry.set_gate_result("000002", {"promote": True, "score": 0.6})
    registry.promote("000002", "gate")
    history = registry.history()
    refused = {
        "rollback to an unknown version": (rollback_flow.fn(str(tmp_path), "tictactoe", "000042"),
                                           "rollback refused: unknown model version 000042"),
        "promote an earlier best": (promote_flow.fn(str(tmp_path), "tictactoe", "000001"),
                                    "promotion refused: version 000001 was best before (status promoted; the best "
                                    "now is 000002), so making it best again is a rollback: run `zeroforge models "
                                    "rollback 000001` (or the UI's rollback deployment)"),
        "another game": (promote_flow.fn(str(tmp_path), "connect4", "000001"),
                         "promotion refused: no model registry for game 'connect4'"),
    }
    for what, (state, reason) in refused.items():
        assert state.is_failed() and state.message.startswith(reason), (what, state.message)
        assert "\n" not in state.message, what
    assert registry.history() == history and registry.best_version() == "000002"


def test_prefects_traceback_of_a_refusal_is_dropped_from_the_flow_run_log() -> None:
    import logging

    from prefect.exceptions import FailedRun
    from prefect.logging.loggers import get_logger

    from flows.registry_ops import REFUSED, RefusalLogFilter

    def record(error: BaseException | None) -> logging.LogRecord:
        exc_info = (type(error), error, None) if error else None
        return logging.LogRecord("prefect.flow_runs", logging.ERROR, __file__, 1,
                                 "Engine execution exited with unexpected exception", None, exc_info)

    assert any(isinstance(f, RefusalLogFilter) for f in get_logger("prefect.flow_runs").filters)
    refusal = RefusalLogFilter()
    assert not refusal.filter(record(FailedRun(f"{REFUSED[0]}unknown model version 000042")))
    assert refusal.filter(record(FailedRun("a pipeline run failed")))           # other failures keep their trace
    assert refusal.filter(record(RuntimeError(f"{REFUSED[1]}not a Failed state")))
    assert refusal.filter(record(None))
