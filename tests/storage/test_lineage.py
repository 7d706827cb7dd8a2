"""The lineage forest (shared.registry.lineage): parent -> children, gate and anchor summaries, odd parents."""
from __future__ import annotations

from pathlib import Path

from shared.registry import ModelRegistry, ModelVersion, lineage_tree


def _record(version: int, parent: int | None, **more) -> ModelVersion:
    """A ModelVersion as read from a meta.json (no file needed: lineage only reads the records)."""
    return ModelVersion(version=f"{version:06d}", path=Path("model.pt"), status=more.pop("status", "candidate"),
                        parent=None if parent is None else f"{parent:06d}", generation=more.pop("generation", version - 1),
                        training={}, gate=more.pop("gate", None), checksum="0" * 64, created="2026-01-01", game="tictactoe",
                        **more)


def test_lineage_of_a_registry_with_a_rollback(tmp_path, model_file):
    registry = ModelRegistry(tmp_path / "models")
    first = registry.register(model_file, generation=0).version
    registry.promote(first, reason="initial")
    second = registry.register(model_file, parent=first, generation=1).version
    anchor = {"opponent": "pure-mcts:200", "games": 20, "score": 0.8, "elo": 241.0, "elo_low": 120.0, "elo_high": 400.0}
    registry.set_gate_result(second, {"score": 0.625, "ci_low": 0.51, "ci_high": 0.73, "elo": 88.7, "games": 40,
                                      "best": first, "promote": True, "anchor": anchor, "wins": 20})
    registry.promote(second, reason="gate", by="gate")
    third = registry.register(model_file, parent=second, generation=2).version
    registry.set_gate_result(third, {"score": 0.45, "ci_low": 0.3, "ci_high": 0.6, "best": second, "promote": False})
    registry.reject(third, reason="gate", by="gate")
    registry.rollback(first, reason="regressed")
    fourth = registry.register(model_file, parent=first, generation=3).version
    registry.promote(fourth, reason="by hand", force=True)

    forest = lineage_tree(registry.list(), registry.best_version())
    assert [root["version"] for root in forest] == [first]
    root = forest[0]
    assert [c["version"] for c in root["children"]] == [second, fourth]
    gated, forced = root["children"]
    assert (gated["status"], gated["best"], gated["forced"]) == ("retired", False, False)
    assert gated["status_reason"] == f"rolled back to {first}: regressed"
    assert gated["gate"] == {"score": 0.625, "ci_low": 0.51, "ci_high": 0.73, "elo": 88.7, "games": 40,
                             "against": first, "decision": "promote"}
    assert gated["anchor"] == anchor
    assert [c["version"] for c in gated["children"]] == [third]
    assert gated["children"][0]["gate"]["decision"] == "reject" and gated["children"][0]["anchor"] is None
    assert (forced["status"], forced["forced"], forced["best"], forced["gate"]) == ("promoted", True, True, None)
    assert root["generation"] == 0 and root["parent"] is None and "parent_missing" not in root


def test_missing_parents_become_roots_and_long_chains_need_no_recursion():
    chain = [_record(1, None)] + [_record(v, v - 1) for v in range(2, 5001)]
    forest = lineage_tree(chain, best="005000")
    node, depth = forest[0], 1
    while node["children"]:
        (node,) = node["children"]
        depth += 1
    assert depth == 5000 and node["best"] and node["version"] == "005000"
    odd = [_record(2, 9), _record(3, 3), _record(4, 2), _record(5, None, gate={"promote": "maybe"})]
    forest = lineage_tree(odd, best=None)   # 000009 is missing; 000003 names itself: both are roots
    assert [(r["version"], r.get("parent_missing", False)) for r in forest] == [
        ("000002", True), ("000003", True), ("000005", False)]
    assert forest[0]["children"][0]["version"] == "000004"
    assert forest[2]["gate"] == {"against": None, "decision": None}
