"""Model registry: versions, concurrency across processes, promote/reject/rollback/history, damaged files."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from shared.registry import BestChangedError, ModelRegistry, RegistryError, normalise_version


def _register_one(directory: str, model_file: str, generation: int, queue) -> None:
    """Child process: register one model and report its version (or the error)."""
    try:
        record = ModelRegistry(Path(directory)).register(Path(model_file), generation=generation, training={"g": generation})
        queue.put(record.version)
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(f"error: {exc!r}")


def test_register_copies_file_and_records_metadata(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, parent=None, generation=0, training={"init": "random"})
    second = registry.register(model_file, parent="1", generation=1, training={"steps": 10})
    assert (first.version, second.version) == ("000001", "000002")
    assert first.path == tmp_path / "models/versions/000001/model.pt" and first.path.read_bytes() == model_file.read_bytes()
    assert first.checksum == hashlib.sha256(model_file.read_bytes()).hexdigest()
    assert first.status == "candidate" and first.game == "tictactoe" and first.generation == 0
    assert first.architecture["spec"]["channels"] == 4 and first.architecture["geometry"]["num_actions"] == 9
    assert second.parent == "000001" and second.training == {"steps": 10}
    assert [v.version for v in registry.list()] == ["000001", "000002"]
    assert registry.get(2) == registry.get("000002") == second
    assert registry.verify("2") == second
    assert registry.best() is None and registry.history() == []
    meta = json.loads((tmp_path / "models/versions/000002/meta.json").read_text())
    assert meta["version"] == "000002" and meta["checksum"] == second.checksum


def test_register_rejects_bad_input(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models", game_name="connect4")
    with pytest.raises(RegistryError, match="does not exist"):
        registry.register(tmp_path / "missing.pt", generation=0)
    with pytest.raises(RegistryError, match="holds 'connect4' models"):
        registry.register(model_file, generation=0)
    plain = ModelRegistry(tmp_path / "plain")
    with pytest.raises(RegistryError, match="unknown model version 000005"):
        plain.register(model_file, parent="5", generation=1)
    with pytest.raises(RegistryError, match="generation"):
        plain.register(model_file, generation=-1)
    with pytest.raises(RegistryError, match="JSON"):
        plain.register(model_file, generation=0, training={"bad": object()})
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a model")
    with pytest.raises(RegistryError, match="garbage.pt"):
        plain.register(garbage, generation=0)
    assert plain.list() == []
    for bad in ("abc", "0", "-3", ""):
        with pytest.raises(RegistryError, match="not a version number"):
            normalise_version(bad)


def test_concurrent_registration_from_four_processes(tmp_path, model_file):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    directory = tmp_path / "models"
    workers = [context.Process(target=_register_one, args=(str(directory), str(model_file), i, queue)) for i in range(4)]
    for process in workers:
        process.start()
    results = [queue.get(timeout=60) for _ in workers]
    for process in workers:
        process.join(60)
    assert sorted(results) == ["000001", "000002", "000003", "000004"], results
    registry = ModelRegistry(directory)
    records = registry.list()
    assert sorted(r.generation for r in records) == [0, 1, 2, 3]
    for record in records:
        assert registry.verify(record.version).training == {"g": record.generation}
    assert not [p for p in (directory / "versions").iterdir() if p.name.startswith(".")]  # no staging leftovers


def test_promote_reject_rollback_and_history(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    for generation in range(4):
        registry.register(model_file, parent=None if generation == 0 else f"{generation}", generation=generation)
    assert registry.promote("1", reason="initial")["previous_best"] is None
    registry.set_gate_result("2", {"score": 0.62, "ci_low": 0.55, "ci_high": 0.69, "promote": True})
    entry = registry.promote("2", reason="gate passed")
    assert (entry["event"], entry["version"], entry["previous_best"]) == ("promote", "000002", "000001")
    assert registry.promote("2", reason="retried flow") is None  # already best: nothing changes
    registry.reject("3", reason="gate failed")
    assert registry.get(3).status == "rejected" and registry.get(3).status_reason == "gate failed"
    assert registry.reject("3", reason="again") is None
    with pytest.raises(RegistryError, match="current best"):
        registry.reject("2", reason="no")
    with pytest.raises(RegistryError, match="was rejected"):
        registry.promote("3", reason="no")
    with pytest.raises(RegistryError, match="never promoted"):
        registry.rollback("4", reason="no")
    with pytest.raises(RegistryError, match="unknown model version 000009"):
        registry.rollback("9", reason="no")
    rollback = registry.rollback("1", reason="regression found")
    assert (rollback["event"], rollback["previous_best"]) == ("rollback", "000002")
    assert registry.best().version == "000001" and registry.get(2).status == "promoted"
    forced = registry.rollback("4", reason="try it", force=True)
    assert forced["forced"] is True and registry.best().version == "000004" and registry.get(4).status == "promoted"
    events = [(e["event"], e["version"], e["previous_best"]) for e in registry.history()]
    assert events == [
        ("promote", "000001", None), ("promote", "000002", "000001"), ("reject", "000003", "000002"),
        ("rollback", "000001", "000002"), ("rollback", "000004", "000001"),
    ]
    assert all(e["time"].endswith("+00:00") and e["reason"] for e in registry.history())
    assert registry.get(2).gate["score"] == 0.62


def test_promotion_is_compare_and_swap_when_asked(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0)
    assert first.status == "candidate" and registry.best() is None
    registry.promote(first.version, reason="initial", expected_best=None)
    registry.set_gate_result(first.version, {"anchor": {"elo": 12.5}})
    assert registry.get(first.version).gate == {"anchor": {"elo": 12.5}}
    second, third = registry.register(model_file, generation=1), registry.register(model_file, generation=2)
    registry.promote(second.version, reason="gate", expected_best=first.version)
    with pytest.raises(BestChangedError, match=f"from {first.version} to {second.version}"):
        registry.promote(third.version, reason="gated against the old best", expected_best=first.version)
    assert registry.best_version() == second.version and registry.get(third.version).status == "candidate"


def test_damaged_files_raise_registry_error_naming_the_file(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    registry.register(model_file, generation=0)
    registry.register(model_file, generation=1)
    registry.promote(1, reason="initial")
    meta = tmp_path / "models/versions/000002/meta.json"
    meta.write_text("{ not json")
    with pytest.raises(RegistryError, match=str(meta)):
        registry.get(2)
    with pytest.raises(RegistryError, match="meta.json is damaged"):
        registry.list()
    meta.write_text(json.dumps({"version": "000002", "status": "weird"}))
    with pytest.raises(RegistryError, match="damaged"):
        registry.get(2)
    registry.get(1).path.write_bytes(b"tampered")
    with pytest.raises(RegistryError, match="sha256"):
        registry.verify(1)
    (tmp_path / "models/history.jsonl").write_text('{"event": "promote", "version": "000001"}\n{oops\n')
    with pytest.raises(RegistryError, match="line 2"):
        registry.history()
    (tmp_path / "models/best.json").write_text("[]")
    with pytest.raises(RegistryError, match="best.json"):
        registry.best()
