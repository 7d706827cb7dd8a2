"""Model registry: versions, concurrency across processes, promote/reject/rollback/history, damaged files."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from shared.registry import BestChangedError, ModelRegistry, RegistryError, default_actor, normalise_version


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
    entry = registry.promote("2", reason="gate passed", by="gate")
    assert (entry["event"], entry["version"], entry["previous_best"], entry["by"]) == ("promote", "000002", "000001", "gate")
    assert "forced" not in entry and registry.get(1).status == "promoted"   # superseded by a promotion: still promoted
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
    assert (rollback["event"], rollback["previous_best"], rollback["retired"]) == ("rollback", "000002", "000002")
    abandoned = registry.get(2)
    assert registry.best().version == "000001" and abandoned.status == "retired"
    assert abandoned.status_reason == "rolled back to 000001: regression found"
    forced = registry.rollback("4", reason="try it", force=True)
    assert forced["forced"] is True and registry.best().version == "000004" and registry.get(4).status == "promoted"
    assert registry.get(4).forced and registry.get(1).status == "retired"
    events = [(e["event"], e["version"], e["previous_best"]) for e in registry.history()]
    assert events == [
        ("promote", "000001", None), ("promote", "000002", "000001"), ("reject", "000003", "000002"),
        ("rollback", "000001", "000002"), ("rollback", "000004", "000001"),
    ]
    assert all(e["time"].endswith("+00:00") and e["reason"] and e["by"] for e in registry.history())
    assert registry.get(2).gate["score"] == 0.62


def test_promoting_a_version_that_was_best_before_is_refused_as_the_rollback_it_is(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0).version
    registry.promote(first, reason="initial")
    second = registry.register(model_file, parent=first, generation=1).version
    registry.set_gate_result(second, {"score": 0.6, "promote": True})
    registry.promote(second, reason="gate", by="gate")
    history = registry.history()
    for force in (False, True):
        with pytest.raises(RegistryError, match=rf"version {first} was best before \(status promoted; the best now "
                                                rf"is {second}\), so making it best again is a rollback: run "
                                                rf"`zeroforge models rollback {first}`"):
            registry.promote(first, reason="go back", force=force)
    assert registry.best_version() == second and registry.history() == history   # nothing changed
    registry.rollback(first, reason="regressed")                 # the way back, recorded as one
    with pytest.raises(RegistryError, match=rf"version {second} was best before \(status retired"):
        registry.promote(second, reason="forward again")
    # an ancestor of the best that was never best itself (a forced rollback made its child best)
    third = registry.register(model_file, parent=second, generation=2).version
    fourth = registry.register(model_file, parent=third, generation=3).version
    registry.rollback(fourth, reason="try it", force=True)
    with pytest.raises(RegistryError, match=rf"version {third} is an ancestor of the best {fourth}, so .* rollback"):
        registry.promote(third, reason="its parent", force=True)


def test_a_retired_version_can_be_rolled_back_to_and_needs_force_to_reject(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0).version
    registry.promote(first, reason="initial")
    second, third = (registry.register(model_file, parent=first, generation=g).version for g in (1, 2))
    for version in (second, third):
        registry.set_gate_result(version, {"score": 0.6, "promote": True})
        registry.promote(version, reason="gate", by="gate")
    assert [v.status for v in registry.list()] == ["promoted", "promoted", "promoted"]
    registry.rollback(second, reason="weak in the endgame")
    assert registry.get(third).status == "retired" and registry.get(second).status == "promoted"
    back = registry.rollback(third, reason="it was fine after all", by="prefect-ui")   # no force: it was best once
    assert (back["retired"], back["by"], "forced" in back) == (second, "prefect-ui", False)
    assert registry.get(third).status == "promoted" and registry.get(third).status_reason == "it was fine after all"
    assert registry.get(second).status_reason == f"rolled back to {third}: it was fine after all"
    with pytest.raises(RegistryError, match="was promoted before"):
        registry.reject(second, reason="no")
    assert registry.reject(second, reason="bad after all", force=True)["forced"] is True
    assert registry.get(second).status == "rejected"


def test_promoting_a_version_that_never_passed_a_gate_needs_force_and_is_recorded(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0).version
    assert "forced" not in registry.promote(first, reason="initial")   # the first model: nothing to gate against
    assert registry.get(first).forced is False
    ungated, lost = (registry.register(model_file, parent=first, generation=g).version for g in (1, 2))
    with pytest.raises(RegistryError, match="never passed a gate .*gate result: none.* --force"):
        registry.promote(ungated, reason="looks good")
    registry.set_gate_result(lost, {"score": 0.41, "promote": False})
    with pytest.raises(RegistryError, match="promote=False"):
        registry.promote(lost, reason="looks good")
    assert registry.best_version() == first and registry.history()[-1]["version"] == first   # nothing changed
    entry = registry.promote(ungated, reason="trust me", force=True, by="prefect-ui")
    assert (entry["forced"], entry["by"]) == (True, "prefect-ui")
    assert registry.get(ungated).forced and registry.get(ungated).status == "promoted"
    meta = json.loads((tmp_path / "models/versions" / ungated / "meta.json").read_text())
    assert meta["forced"] is True and meta["status"] == "promoted"
    registry.set_gate_result(lost, {"score": 0.61, "promote": True})   # gated again, and passed: no force needed
    assert "forced" not in registry.promote(lost, reason="gate")
    assert registry.get(ungated).forced  # superseded normally: still promoted, still marked forced
    registry.rollback(ungated, reason="back")   # was best: no force, and not a forced rollback
    assert "forced" not in registry.history()[-1] and registry.get(lost).status == "retired"


def test_history_records_who_with_user_at_host_by_default(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0).version
    registry.promote(first, reason="initial")
    user_at_host = default_actor()
    assert registry.history()[0]["by"] == user_at_host and "@" in user_at_host
    assert json.loads((tmp_path / "models/best.json").read_text())["by"] == user_at_host
    for bad in ("", "  ", "two\nlines", "x" * 201):
        with pytest.raises(RegistryError, match="by must be a non-empty one-line name"):
            registry.reject(first, reason="no", by=bad)
    old = {"time": "2025-01-01T00:00:00+00:00", "event": "promote", "version": first, "previous_best": None,
           "reason": "written before by was recorded"}
    history = tmp_path / "models/history.jsonl"
    history.write_text(json.dumps(old) + "\n" + history.read_text())
    assert [e.get("by") for e in registry.history()] == [None, user_at_host]


def test_promotion_is_compare_and_swap_when_asked(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0)
    assert first.status == "candidate" and registry.best() is None
    registry.promote(first.version, reason="initial", expected_best=None)
    registry.set_gate_result(first.version, {"anchor": {"elo": 12.5}})
    assert registry.get(first.version).gate == {"anchor": {"elo": 12.5}}
    second, third = registry.register(model_file, generation=1), registry.register(model_file, generation=2)
    registry.promote(second.version, reason="gate", expected_best=first.version, force=True)
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
    good = json.loads((tmp_path / "models/versions/000001/meta.json").read_text())
    meta.write_text(json.dumps({**good, "version": "000002", "forced": "yes"}))
    with pytest.raises(RegistryError, match="field 'forced' must be true or false"):
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
