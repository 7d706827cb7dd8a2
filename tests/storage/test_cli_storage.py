"""`zeroforge shards ...` and `zeroforge models ...` through click's CliRunner."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli.models import models
from cli.shards import shards
from tests.storage.helpers import make_dirs
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.shards import read_shard, write_shard
from tests.storage.conftest import BASE_ATTRS
from tests.storage.helpers import random_records


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _one_line_error(result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr
    assert "Traceback" not in result.output


def test_shards_ls_json_and_table(runner, make_shard, layout):
    make_shard(0, "first", games=2, seed=1)
    make_shard(1, "second", games=3, seed=2)
    result = runner.invoke(shards, ["ls", "--json", "--data-dir", str(layout.root)])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(s["job_id"], s["generation"], s["games"]) for s in listed] == [("first", 0, 2), ("second", 1, 3)]
    assert set(listed[0]) >= {"path", "job_id", "generation", "games", "positions", "model_version", "created"}
    assert listed[1]["positions"] == read_shard(listed[1]["path"]).num_positions
    table = runner.invoke(shards, ["ls", str(layout.generation_shards_dir(1))])
    assert table.exit_code == 0 and "second" in table.stdout and "first" not in table.stdout
    assert "1 shards, 3 games" in table.stdout and "second.h5" in table.stdout
    by_root = runner.invoke(shards, ["ls", "--data-dir", str(layout.root)])
    assert "games/connect4/shards/gen-000001/second.h5" in by_root.stdout and str(layout.root) in by_root.stdout


def test_shards_ls_env_data_dir_and_errors(runner, make_shard, layout, tmp_path, monkeypatch):
    make_shard(0, "only", games=1)
    monkeypatch.setenv("ZEROFORGE_DATA_DIR", str(layout.root))
    result = runner.invoke(shards, ["ls", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)[0]["job_id"] == "only"
    _one_line_error(runner.invoke(shards, ["ls", "--game", "othello"]), "no data for game 'othello'")
    make_dirs(DataLayout(layout.root, "tictactoe"))
    _one_line_error(runner.invoke(shards, ["ls"]), "several games")
    _one_line_error(runner.invoke(shards, ["ls", "--data-dir", str(tmp_path / "empty")]), "no game data")


def test_shards_show_summary_game_and_move(runner, tmp_path, connect4):
    records = random_records(connect4, 3, seed=5)
    path = write_shard(tmp_path, "job-show", connect4, records, {**BASE_ATTRS, "generation": 2})
    shard = read_shard(path)
    summary = runner.invoke(shards, ["show", str(path)])
    assert summary.exit_code == 0, summary.output
    assert "job-show" in summary.stdout and "num_positions" in summary.stdout and "results:" in summary.stdout
    listing = runner.invoke(shards, ["show", str(path), "--index", "1"])
    assert listing.exit_code == 0, listing.output
    moves = connect4.moves_to_str(shard.game_actions(1))
    assert f"moves: {moves}" in listing.stdout and "replays exactly" in listing.stdout
    assert "prior: not stored" in listing.stdout and " z " in listing.stdout
    assert len([line for line in listing.stdout.splitlines() if line.strip()[:1].isdigit()]) == int(shard.games["length"][1])
    view = runner.invoke(shards, ["show", str(path), "--index", "1", "--move", "2"])
    assert view.exit_code == 0, view.output
    row = shard.game_rows(1).start + 1
    played = connect4.action_to_str(int(shard.moves["action"][row]))
    assert f"played {played}" in view.stdout and "drop column:" in view.stdout and "most visited" in view.stdout
    assert "move 2 (1 moves played)" in view.stdout and "ply" not in view.stdout
    share = 100 * shard.pi[row, int(shard.moves["action"][row])]
    assert f"*{share:.0f}" in view.stdout or f"*{share:.1f}" in view.stdout      # the played move: * on the heat map


def test_shards_show_by_job_id_final_position_json_replay_and_all(runner, make_shard, layout, connect4):
    path = make_shard(3, "job-by-id", games=60, seed=4)
    shard = read_shard(path)
    root = ["--data-dir", str(layout.root)]
    newest = runner.invoke(shards, ["show", *root])
    assert newest.exit_code == 0 and "job-by-id" in newest.stdout and "10 more games: --all" in newest.stdout
    everything = runner.invoke(shards, ["show", "job-by-id", "--all", *root])
    assert everything.exit_code == 0 and "more games" not in everything.stdout
    length = int(shard.games["length"][2])
    final = runner.invoke(shards, ["show", "job-by-id", "--index", "2", "--move", str(length + 1), *root])
    assert final.exit_code == 0, final.output
    assert f"final position after move {length}" in final.stdout
    summary = json.loads(runner.invoke(shards, ["show", "job-by-id", "--json", *root]).stdout)
    assert len(summary["games"]) == 60 and summary["path"] == str(path)
    game = json.loads(runner.invoke(shards, ["show", "job-by-id", "--index", "2", "--json", *root]).stdout)
    assert game["moves"] == connect4.moves_to_str(shard.game_actions(2)) and game["prior"] is None
    assert [m["z"] for m in game["per_move"]] == [round(float(z), 4) for z in shard.z[shard.game_rows(2)]]
    move = json.loads(runner.invoke(shards, ["show", "job-by-id", "--index", "2", "--move", "1", "--json", *root]).stdout)
    assert move["moves_played"] == 0 and abs(sum(move["visit_share"].values()) - 1) < 1e-3
    replay = runner.invoke(shards, ["show", "job-by-id", "--index", "2", "--replay", *root])   # not a TTY: all moves
    assert replay.exit_code == 0, replay.output
    assert replay.stdout.count("moves played)") == length and "final position" in replay.stdout
    frames = json.loads(runner.invoke(shards, ["show", "job-by-id", "--index", "2", "--replay", "--json", *root]).stdout)
    assert len(frames) == length + 1 and frames[-1]["final"]


def test_shards_ls_shows_short_ids_and_show_accepts_them(runner, make_shard, layout):
    ids = layout.job_ids()
    for index in range(2):
        make_shard(3, ids.selfplay(3, "000003", index), games=2, seed=index)
    make_shard(4, ids.selfplay(4, "000003", 0), games=2, seed=5)
    make_shard(4, ids.selfplay(4, "000004", 0), games=3, seed=6)   # generation 4's job 0 again, after a promotion
    make_shard(4, "g3-sp1", games=4, seed=7)                        # a hand-named job: its own name comes first
    root = ["--data-dir", str(layout.root)]
    table = runner.invoke(shards, ["ls", *root])
    assert table.exit_code == 0 and table.stdout.splitlines()[0].split()[:3] == ["gen", "short", "job"]
    shorts = {line.split()[2]: line.split()[1] for line in table.stdout.splitlines()[1:-1]}
    assert shorts == {ids.selfplay(3, "000003", 0): "g3-sp0", ids.selfplay(3, "000003", 1): "g3-sp1",
                      ids.selfplay(4, "000003", 0): "g4-sp0", ids.selfplay(4, "000004", 0): "g4-sp0", "g3-sp1": "-"}
    listed = json.loads(runner.invoke(shards, ["ls", "--json", *root]).stdout)
    assert [s["short_id"] for s in listed][:2] == ["g3-sp0", "g3-sp1"]
    shown = runner.invoke(shards, ["show", "g3-sp0", *root])
    assert shown.exit_code == 0 and ids.selfplay(3, "000003", 0) in shown.stdout
    assert "g3-sp1" in runner.invoke(shards, ["show", "g3-sp1", "--json", *root]).stdout   # the hand-named job
    _one_line_error(runner.invoke(shards, ["show", "g3-sp5", *root]),
                    "no shard of job g3-sp5 (generation 3 has g3-sp0, g3-sp1)")
    _one_line_error(runner.invoke(shards, ["show", "g4-sp0", *root]), "short job id g4-sp0 is ambiguous")
    _one_line_error(runner.invoke(shards, ["show", "g3:0", *root]), "its short form (g<generation>-sp<index>")


def test_shards_show_grid_heatmap_with_pass_for_othello(runner, tmp_path):
    from shared.games import make_game

    othello = make_game("othello-6x6")
    path = write_shard(tmp_path, "oth", othello, random_records(othello, 1, seed=2), {**BASE_ATTRS, "generation": 0})
    view = runner.invoke(shards, ["show", str(path), "--index", "0", "--move", "3"])
    assert view.exit_code == 0, view.output
    assert "pass:" in view.stdout and "root visit share" in view.stdout
    heat_rows = [line for line in view.stdout.splitlines() if line.strip().startswith(("1 ", "2 ", "3 ", "4 ", "5 ", "6 "))]
    assert len(heat_rows) >= 12  # the rendered board and the heat map both have 6 numbered rows


def test_shards_show_errors(runner, tmp_path, connect4):
    path = write_shard(tmp_path, "job-e", connect4, random_records(connect4, 2, seed=1), {**BASE_ATTRS, "generation": 0})
    _one_line_error(runner.invoke(shards, ["show", str(path), "--index", "7"]), "game 7 does not exist")
    _one_line_error(runner.invoke(shards, ["show", str(path), "--index", "0", "--move", "99"]), "move 99 does not exist")
    _one_line_error(runner.invoke(shards, ["show", str(path), "--move", "1"]), "--move M needs --index K")
    _one_line_error(runner.invoke(shards, ["show", "no-such-job", "--data-dir", str(tmp_path / "none")]), "no game data")
    garbage = tmp_path / "bad.h5"
    garbage.write_bytes(b"garbage")
    _one_line_error(runner.invoke(shards, ["show", str(garbage)]), "bad.h5")
    _one_line_error(runner.invoke(shards, ["show", str(tmp_path / "missing.h5")]), "missing.h5")


@pytest.fixture
def registry_root(tmp_path, model_file):
    layout = make_dirs(DataLayout(tmp_path / "data", "tictactoe"))
    registry = ModelRegistry(layout.registry_dir)
    registry.register(model_file, generation=0, training={"init": "random"})
    registry.promote("1", reason="initial")
    registry.register(model_file, parent="1", generation=1)
    registry.set_gate_result("2", {"score": 0.625, "ci_low": 0.51, "ci_high": 0.73, "promote": True})
    registry.register(model_file, parent="1", generation=1)
    return layout.root


def test_models_ls_json_and_table(runner, registry_root):
    result = runner.invoke(models, ["ls", "--json", "--data-dir", str(registry_root)])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(m["version"], m["status"], m["best"]) for m in listed] == [
        ("000001", "promoted", True), ("000002", "candidate", False), ("000003", "candidate", False)]
    assert listed[1]["gate"]["score"] == 0.625 and listed[1]["parent"] == "000001"
    table = runner.invoke(models, ["ls", "--data-dir", str(registry_root), "--game", "tictactoe"])
    assert table.exit_code == 0 and "*000001" in table.stdout and "0.625 [0.510, 0.730]" in table.stdout
    show = runner.invoke(models, ["show", "2", "--data-dir", str(registry_root)])
    assert show.exit_code == 0 and "checksum" in show.stdout and "000002" in show.stdout


def test_models_promote_rollback_history(runner, registry_root):
    root = ["--data-dir", str(registry_root)]
    promoted = runner.invoke(models, ["promote", "2", "--reason", "looks strong", *root])
    assert promoted.exit_code == 0 and "previous best 000001" in promoted.stdout
    again = runner.invoke(models, ["promote", "000002", *root])
    assert again.exit_code == 0 and "nothing changed" in again.stdout
    rolled = runner.invoke(models, ["rollback", "1", "--reason", "regression", *root])
    assert rolled.exit_code == 0 and "rollback: 000001" in rolled.stdout
    rejected = runner.invoke(models, ["reject", "3", *root])
    assert rejected.exit_code == 0
    history = runner.invoke(models, ["history", "--json", *root])
    assert [(e["event"], e["version"]) for e in json.loads(history.stdout)] == [
        ("promote", "000001"), ("promote", "000002"), ("rollback", "000001"), ("reject", "000003")]
    table = runner.invoke(models, ["history", *root])
    assert table.exit_code == 0 and "regression" in table.stdout
    assert ModelRegistry(DataLayout(registry_root, "tictactoe").registry_dir).best().version == "000001"


def test_models_errors(runner, registry_root, tmp_path):
    root = ["--data-dir", str(registry_root)]
    _one_line_error(runner.invoke(models, ["rollback", "3", *root]), "never promoted")
    _one_line_error(runner.invoke(models, ["promote", "42", *root]), "unknown model version 000042")
    _one_line_error(runner.invoke(models, ["show", "x1", *root]), "not a version number")
    _one_line_error(runner.invoke(models, ["ls", "--game", "connect4", *root]), "no data for game 'connect4'")
    meta = DataLayout(registry_root, "tictactoe").registry_dir / "versions/000002/meta.json"
    meta.write_text("garbage")
    _one_line_error(runner.invoke(models, ["show", "2", *root]), "000002/meta.json is damaged")
    listing = runner.invoke(models, ["ls", *root])   # ls lists what it can read and warns about the rest
    assert listing.exit_code == 0 and "000001" in listing.stdout and "000002" not in listing.stdout
    assert "warning:" in listing.stderr and "000002/meta.json is damaged" in listing.stderr


def test_models_on_damaged_files_never_show_a_traceback(runner, registry_root):
    root = ["--data-dir", str(registry_root)]
    registry_dir = DataLayout(registry_root, "tictactoe").registry_dir
    (registry_dir / "history.jsonl").write_bytes(b"\xff\xfe\x00binary\x89PNG\r\n")
    _one_line_error(runner.invoke(models, ["history", *root]), "history.jsonl is damaged: not UTF-8")
    (registry_dir / "best.json").write_text('{"version": "000099"}')
    listing = runner.invoke(models, ["ls", *root])
    assert listing.exit_code == 0, listing.output
    assert "best.json points at version 000099, which is not in the registry" in listing.stderr
    (registry_dir / "best.json").write_bytes(b"\x00\xff")
    listing = runner.invoke(models, ["ls", "--json", *root])
    assert listing.exit_code == 0 and "warning:" in listing.stderr and "best.json is damaged" in listing.stderr
    assert json.loads(listing.stdout)
    fixed = runner.invoke(models, ["rollback", "1", "--force", *root])   # a forced rollback repairs best.json
    assert fixed.exit_code == 0, fixed.output
    assert ModelRegistry(registry_dir).best_version() == "000001"
