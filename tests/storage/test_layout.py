"""DataLayout paths, the default data root and game resolution."""
from __future__ import annotations

from pathlib import Path

import pytest

from shared.layout import DataLayout, LayoutError, default_data_root, generation_of_dir, resolve_game_name


def test_paths(tmp_path):
    layout = DataLayout(tmp_path, "gomoku-8x8-5")
    game_dir = tmp_path / "games" / "gomoku-8x8-5"
    assert layout.shards_dir == game_dir / "shards"
    assert layout.generation_shards_dir(3) == game_dir / "shards" / "gen-000003"
    assert generation_of_dir(layout.generation_shards_dir(12)) == 12 and generation_of_dir(tmp_path) is None
    assert (layout.quarantine_dir, layout.registry_dir) == (game_dir / "quarantine", game_dir / "models")
    assert (layout.checkpoints_dir, layout.reports_dir) == (game_dir / "checkpoints", game_dir / "reports")
    assert DataLayout.from_shards_dir(layout.shards_dir) == layout
    layout.ensure()
    assert all(p.is_dir() for p in (layout.shards_dir, layout.quarantine_dir, layout.registry_dir))
    for bad in ("../x", "Upper", "", "a/b"):
        with pytest.raises(LayoutError):
            DataLayout(tmp_path, bad)
    with pytest.raises(LayoutError, match="generation"):
        layout.generation_shards_dir(-1)


def test_default_root_and_game_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEROFORGE_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_data_root() == tmp_path / "zeroforge-data"
    monkeypatch.setenv("ZEROFORGE_DATA_DIR", str(tmp_path / "elsewhere"))
    assert default_data_root() == Path(tmp_path / "elsewhere")
    with pytest.raises(LayoutError, match="no game data"):
        resolve_game_name(tmp_path, None)
    DataLayout(tmp_path, "connect4").ensure()
    assert resolve_game_name(tmp_path, None) == "connect4"
    assert resolve_game_name(tmp_path, "othello") == "othello"
    with pytest.raises(LayoutError, match="games present: connect4"):
        resolve_game_name(tmp_path, "othello", must_exist=True)
    DataLayout(tmp_path, "tictactoe").ensure()
    with pytest.raises(LayoutError, match="connect4, tictactoe"):
        resolve_game_name(tmp_path, None)
