"""DataLayout paths, job ids, the data directory's identity, the default data root and game resolution."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.storage.helpers import make_dirs
from shared.layout import (DataLayout, JobIds, LayoutError, RegistryLayout, data_id, default_data_root,
                           resolve_game_name, shipped_model_path)


def test_paths(tmp_path):
    layout = DataLayout(tmp_path, "gomoku-8x8-5")
    game_dir = tmp_path / "games" / "gomoku-8x8-5"
    assert layout.shards_dir == game_dir / "shards"
    assert layout.generation_shards_dir(3) == game_dir / "shards" / "gen-000003"
    assert layout.shard_path(3, "job-a") == game_dir / "shards" / "gen-000003" / "job-a.h5"
    assert (layout.quarantine_dir, layout.registry_dir) == (game_dir / "quarantine", game_dir / "models")
    assert (layout.checkpoints_dir, layout.reports_dir) == (game_dir / "checkpoints", game_dir / "reports")
    assert layout.checkpoint_path(2, "000001") == game_dir / "checkpoints" / "gen-000002-from-000001.ckpt"
    assert layout.candidate_path(2, "000001").name == "gen-000002-from-000001-candidate.pt"
    assert layout.stop_file == game_dir / "STOP" and layout.strength_plot_path.parent == layout.reports_dir
    assert (layout.logs_dir, layout.prefect_home) == (tmp_path / "logs", tmp_path.resolve() / "prefect")
    assert layout.tensorboard_run_dir == tmp_path / "tensorboard" / "gomoku-8x8-5"   # one TensorBoard run per game
    assert (layout.metrics_path, layout.curves_plot_path) == (game_dir / "reports" / "generations.jsonl",
                                                              game_dir / "reports" / "curves.png")
    registry = layout.registry
    assert registry == RegistryLayout(game_dir / "models")
    assert registry.model_path("000003") == game_dir / "models" / "versions" / "000003" / "model.pt"
    assert registry.meta_path("000003").name == "meta.json" and registry.best_path.name == "best.json"
    assert shipped_model_path("tictactoe").name == "tictactoe.pt"
    for bad in ("../x", "Upper", "", "a/b"):
        with pytest.raises(LayoutError):
            DataLayout(tmp_path, bad)
    with pytest.raises(LayoutError, match="generation"):
        layout.generation_shards_dir(-1)


def test_data_id_is_made_once_and_names_the_jobs(tmp_path):
    first = data_id(tmp_path / "d")
    assert data_id(tmp_path / "d") == first and len(first) == 12
    assert data_id(tmp_path / "other") != first          # another directory, another identity
    ids = DataLayout(tmp_path / "d", "tictactoe").job_ids()
    assert ids == JobIds(first, "tictactoe")
    assert ids.selfplay(2, "000001", 3) == f"zf-{first}-tictactoe-g000002-m000001-sp0003"
    assert ids.train(2, "000001").endswith("-g000002-train-000001")
    assert ids.gate(2, "000003", "000001", 0) != ids.anchor(2, "000003", 0)
    (tmp_path / "d" / "zeroforge-id").write_text("garbage")
    with pytest.raises(LayoutError, match="damaged"):
        data_id(tmp_path / "d")
    with pytest.raises(LayoutError, match="identity"):
        data_id(tmp_path / "missing", create=False)


def test_default_root_and_game_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEROFORGE_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_data_root() == tmp_path / "zeroforge-data"
    monkeypatch.setenv("ZEROFORGE_DATA_DIR", str(tmp_path / "elsewhere"))
    assert default_data_root() == Path(tmp_path / "elsewhere")
    with pytest.raises(LayoutError, match="no game data"):
        resolve_game_name(tmp_path, None)
    make_dirs(DataLayout(tmp_path, "connect4"))
    assert resolve_game_name(tmp_path, None) == "connect4"
    assert resolve_game_name(tmp_path, "othello") == "othello"
    with pytest.raises(LayoutError, match="games present: connect4"):
        resolve_game_name(tmp_path, "othello", must_exist=True)
    make_dirs(DataLayout(tmp_path, "tictactoe"))
    with pytest.raises(LayoutError, match="connect4, tictactoe"):
        resolve_game_name(tmp_path, None)
