"""The registry view (shared.store.view) and the reading commands with --store (cli.store_replica) on a local
directory store: a host with only the store sees what the pipeline's data directory shows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.models import models
from cli.status import status
from shared.curves import GenerationMetrics, append_metrics
from shared.layout import DataLayout
from shared.phase import write_phase
from shared.registry import ModelRegistry
from shared.store import StoreError, StoreIntegrityError, claim_store, open_store
from shared.store.replica import fetch_model
from shared.store.view import materialise_view, publish_view


@pytest.fixture
def primary(tmp_path: Path, model_file: Path) -> DataLayout:
    """The pipeline's data directory of a two-generation tic-tac-toe run: 000001 best at first, 000002 promoted by
    its gate, 000003 rejected; a phase record and a metrics line."""
    layout = DataLayout(tmp_path / "primary", "tictactoe")
    registry = ModelRegistry(layout.registry_dir, game_name="tictactoe")
    first = registry.register(model_file, generation=0).version
    registry.promote(first, reason="initial model", by="pipeline")
    second = registry.register(model_file, parent=first, generation=1, training={"steps": 3}).version
    registry.set_gate_result(second, {"score": 0.62, "ci_low": 0.55, "ci_high": 0.69, "games": 40, "promote": True,
                                      "reason": "won"})
    registry.promote(second, reason="gate gen 1: won", by="gate")
    third = registry.register(model_file, parent=second, generation=2).version
    registry.reject(third, reason="gate gen 2: lost", by="gate")
    for generation in (1, 2):
        append_metrics(layout.metrics_path, GenerationMetrics(
            generation=generation, time=f"2026-12-04T0{generation}:00:00+00:00", games=10, positions=90,
            first_player_wins=5, draws=3, second_player_wins=2, generation_seconds=600.0, promoted=generation == 1,
            candidate=f"00000{generation + 1}", gate_games=40, gate_score=0.62))
    write_phase(layout.phase_file, 2, "done", "2 generation(s) run", state="finished")
    claim_store(open_store(str(tmp_path / "store")), layout.data_id())
    return layout


@pytest.fixture
def store_url(tmp_path: Path, primary: DataLayout) -> str:
    """A local-directory store holding the primary's view (and so its models)."""
    url = str(tmp_path / "store")
    publish_view(open_store(url), primary)
    return url


def _same(runner: CliRunner, command, args: list[str], primary: DataLayout, store_url: str, replica: Path) -> str:
    """Run `command args` on the data directory and with --store into `replica`: both outputs, with each data root
    written as ROOT, must be equal; returns that output."""
    local = runner.invoke(command, [*args, "--data-dir", str(primary.root)])
    remote = runner.invoke(command, [*args, "--store", store_url, "--data-dir", str(replica)])
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.output
    assert remote.stdout.replace(str(replica.resolve()), "ROOT").replace(str(replica), "ROOT") == \
        local.stdout.replace(str(primary.root.resolve()), "ROOT").replace(str(primary.root), "ROOT")
    return local.stdout


def test_the_view_round_trips_the_registry_and_its_files(tmp_path: Path, primary: DataLayout, store_url: str) -> None:
    store = open_store(store_url)
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    materialise_view(store, replica)
    source, copy = ModelRegistry(primary.registry_dir), ModelRegistry(replica.registry_dir)
    assert [v.to_meta() for v in copy.list()] == [v.to_meta() for v in source.list()]
    assert (copy.best_version(), copy.history()) == (source.best_version(), source.history())
    for path in ("models/best.json", "models/history.jsonl", "phase.json", "reports/generations.jsonl"):
        assert (replica.game_dir / path).read_bytes() == (primary.game_dir / path).read_bytes()
    assert not replica.registry.model_path("000002").exists()              # models only when a command needs one
    assert fetch_model(store, replica, "000002").read_bytes() == source.get("000002").path.read_bytes()
    copy.verify("000002")


def test_a_later_view_replaces_the_replicas_records(tmp_path: Path, primary: DataLayout, store_url: str) -> None:
    store = open_store(store_url)
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    materialise_view(store, replica)
    ModelRegistry(primary.registry_dir).rollback("000001", reason="trying the older one", by="me")
    assert publish_view(store, primary)["versions"][1]["status"] == "retired"
    materialise_view(store, replica)
    copy = ModelRegistry(replica.registry_dir)
    assert copy.best_version() == "000001" and copy.get("000002").status == "retired"
    assert copy.history()[-1]["event"] == "rollback"


def test_the_view_never_overwrites_the_pipelines_own_registry(primary: DataLayout, store_url: str) -> None:
    with pytest.raises(StoreError, match="holds the pipeline's own registry"):
        materialise_view(open_store(store_url), primary)


def test_a_damaged_view_or_model_is_refused(tmp_path: Path, primary: DataLayout, store_url: str) -> None:
    store = open_store(store_url)
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    materialise_view(store, replica)
    (store.root / primary.store_key(primary.registry.model_path("000003"))).write_bytes(b"changed")
    with pytest.raises(StoreIntegrityError, match="sha256 differs"):
        fetch_model(store, replica, "000003")
    assert not replica.registry.model_path("000003").exists()
    (store.root / primary.store_key(primary.registry_view_path)).write_bytes(b"{}")
    with pytest.raises(StoreIntegrityError, match="not a registry view"):
        materialise_view(store, replica)


def test_replaceable_objects_on_the_local_backend(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "objects"))
    assert store.put_bytes("a/view.json", b"one") is True
    assert store.put_bytes("a/view.json", b"two") is False                 # create-only by default
    assert store.put_bytes("a/view.json", b"three", replace=True) is True
    assert store.get_bytes("a/view.json") == b"three"
    assert [o.key for o in store.list("")] == ["a/view.json"]               # no temp file left


def test_models_commands_with_store_show_what_the_data_directory_shows(tmp_path: Path, primary: DataLayout,
                                                                       store_url: str) -> None:
    runner, replica = CliRunner(), tmp_path / "replica"
    assert "*000002" in _same(runner, models, ["ls"], primary, store_url, replica)
    _same(runner, models, ["ls", "--json"], primary, store_url, replica)
    _same(runner, models, ["show", "3"], primary, store_url, replica)
    assert "rollback" not in _same(runner, models, ["history"], primary, store_url, replica)
    _same(runner, models, ["tree"], primary, store_url, replica)
    strength = json.loads(_same(runner, models, ["strength", "--json"], primary, store_url, replica))
    assert [(row["generation"], row["promoted"]) for row in strength] == [(1, True), (2, False)]


def test_play_with_store_fetches_the_best_model_only(tmp_path: Path, primary: DataLayout, store_url: str) -> None:
    from cli.play import play

    replica = DataLayout(tmp_path / "replica", "tictactoe")
    game = CliRunner().invoke(play, ["--game", "tictactoe", "--sims", "2", "--store", store_url, "--data-dir",
                                     str(replica.root)], input="quit\n")
    assert game.exit_code == 0, game.output
    assert "000002 (best)" in game.stdout
    assert sorted(p.parent.name for p in replica.registry.versions_dir.glob("*/model.pt")) == ["000002"]


@pytest.mark.integration       # a match and an ONNX export: about 8 s on two busy cores
def test_eval_and_export_with_store_fetch_the_models_they_use(tmp_path: Path, primary: DataLayout,
                                                             store_url: str) -> None:
    from cli.eval import eval_command

    runner, replica = CliRunner(), DataLayout(tmp_path / "replica", "tictactoe")
    store = ["--store", store_url, "--data-dir", str(replica.root)]
    played = runner.invoke(eval_command, ["3", "random", "--game", "tictactoe", "--games", "2", "--sims", "2",
                                          "--json", *store])
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["games"] == 2
    assert sorted(p.parent.name for p in replica.registry.versions_dir.glob("*/model.pt")) == ["000003"]
    out = tmp_path / "best.onnx"
    exported = runner.invoke(models, ["export", "2", "-o", str(out), "--json", *store])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)["source_sha256"] == ModelRegistry(primary.registry_dir).get("2").checksum


def test_status_with_store_reads_the_runs_record(tmp_path: Path, primary: DataLayout, store_url: str,
                                                 monkeypatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    runner, replica = CliRunner(), tmp_path / "replica"
    text = _same(runner, status, [], primary, store_url, replica)
    assert "tictactoe: 2 generation(s) done" in text
    local = json.loads(runner.invoke(status, ["--json", "--data-dir", str(primary.root)]).stdout)
    remote = json.loads(runner.invoke(status, ["--json", "--store", store_url, "--data-dir", str(replica)]).stdout)
    assert remote["runs"] == local["runs"]


def test_the_cache_directory_is_per_deployment(tmp_path: Path, primary: DataLayout, store_url: str,
                                               monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(models, ["ls", "--store", store_url])
    assert result.exit_code == 0, result.output
    cache = tmp_path / "cache" / "zeroforge" / "store" / primary.data_id()
    assert ModelRegistry(DataLayout(cache, "tictactoe").registry_dir).best_version() == "000002"


def test_store_errors_are_one_line(tmp_path: Path, primary: DataLayout, store_url: str) -> None:
    runner = CliRunner()
    other = tmp_path / "other"
    DataLayout(other, "tictactoe").data_id()                                 # a directory of another deployment
    for args, needle in ((["ls", "--store", store_url, "--data-dir", str(other)], "belongs to another deployment"),
                         (["ls", "--store", str(tmp_path / "empty")], "holds no zeroforge deployment"),
                         (["ls", "--store", store_url, "--data-dir", str(primary.root)], "pipeline's own registry"),
                         (["ls", "--store", store_url, "--game", "connect4", "--data-dir", str(tmp_path / "r")],
                          "no data of game 'connect4'")):
        result = runner.invoke(models, args)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr


def test_the_replica_is_bounded_shards_first_and_never_the_best_model(tmp_path: Path, primary: DataLayout,
                                                                      store_url: str, monkeypatch) -> None:
    import os

    from shared.store.cache import trim_replica

    store = open_store(store_url)
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    materialise_view(store, replica)
    files = [fetch_model(store, replica, version) for version in ("000001", "000002", "000003")]
    shards = []
    for age, name in enumerate(("old", "new")):
        shard = replica.generation_shards_dir(1) / f"{name}.h5"
        shard.parent.mkdir(parents=True, exist_ok=True)
        shard.write_bytes(b"x" * 1000)
        os.utime(shard, (1000 + age, 1000 + age))
        shards.append(shard)
    for age, model in enumerate(files):
        os.utime(model, (2000 + age, 2000 + age))
    size = files[0].stat().st_size
    assert trim_replica(replica.root, 3 * size + 1000) == [shards[0]]            # the older shard only
    assert trim_replica(replica.root, 2 * size) == [shards[1], files[0]]         # then the least recently used model
    assert trim_replica(replica.root, 0) == [files[2]]                          # the best (000002) stays
    assert files[1].exists() and ModelRegistry(replica.registry_dir).list()      # records stay
    assert fetch_model(store, replica, "000001").exists()                        # an evicted model comes back
    assert trim_replica(primary.root, 0) == [] and primary.metrics_path.exists()  # never the pipeline's own
    monkeypatch.setenv("ZEROFORGE_PIPELINE__STORE_CACHE_GB", "0.000000001")       # 1 byte: the CLI trims before a sync
    result = CliRunner().invoke(models, ["ls", "--store", store_url, "--data-dir", str(replica.root)])
    assert result.exit_code == 0, result.output
    assert sorted(p.parent.name for p in replica.registry.versions_dir.glob("*/model.pt")) == ["000002"]
