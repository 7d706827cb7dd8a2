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
