"""The first model of a run, and the note a resumed run gets when [game] asks for another network than its best."""
from __future__ import annotations

from pathlib import Path

from services.initial_model import configured_spec, ensure_initial_model, network_mismatch
from shared.config import PipelineConfig, load_config
from shared.layout import DataLayout
from shared.network import load_model
from shared.registry import ModelRegistry
from tests.services.conftest import TINY_OVERRIDES, tiny_config


def test_no_best_model_is_no_mismatch(layout: DataLayout, config: PipelineConfig) -> None:
    assert network_mismatch(layout, config.game) is None


def test_the_first_model_is_the_configured_network(layout: DataLayout, config: PipelineConfig,
                                                   registry: ModelRegistry) -> None:
    version = ensure_initial_model(layout, config.game, config.pipeline.seed)
    assert load_model(registry.get(version).path).spec == configured_spec(config.game)
    assert network_mismatch(layout, config.game) is None


def test_a_changed_size_is_named_with_both_networks(layout: DataLayout, config: PipelineConfig) -> None:
    version = ensure_initial_model(layout, config.game, config.pipeline.seed)
    wider = tiny_config(**{"game.channels": 16}).game
    note = network_mismatch(layout, wider)
    assert note is not None
    assert f"best model {version} is a 1x8 " in note and "asks for 1x16 " in note and "--data-dir" in note
    assert ensure_initial_model(layout, wider, 0) == version      # the best model stays; nothing is replaced


def test_an_ownership_head_turned_on_after_the_start_is_named(tmp_path: Path) -> None:
    def go(**more) -> PipelineConfig:
        return load_config(PipelineConfig, "go-5x5", env=None,
                           overrides={**TINY_OVERRIDES, "train.min_steps": 2, **more})

    layout = DataLayout(tmp_path / "data", "go-5x5")
    layout.data_id()
    ensure_initial_model(layout, go().game, 0)
    note = network_mismatch(layout, go(**{"game.ownership_head": True}).game)
    assert note is not None and "ownership head" in note.split("asks for")[1]
    assert "ownership head" not in note.split("asks for")[0]
    assert network_mismatch(layout, go().game) is None


def test_an_unreadable_best_model_is_left_to_the_pipeline_to_report(layout: DataLayout, config: PipelineConfig,
                                                                    registry: ModelRegistry) -> None:
    version = ensure_initial_model(layout, config.game, config.pipeline.seed)
    Path(registry.get(version).path).write_bytes(b"not a model")
    assert network_mismatch(layout, tiny_config(**{"game.channels": 16}).game) is None
