"""The registry's lineage: which version was trained from which, as a forest of nested dicts (parent -> children)."""
from __future__ import annotations

from typing import Any

from shared.registry.version import ModelVersion

#: Gate-record keys copied into a lineage node's "gate" (what flows/gate.py reports about the match).
GATE_KEYS = ("score", "ci_low", "ci_high", "elo", "games")
#: Anchor-match keys copied into a lineage node's "anchor" (what flows/promote.anchor_match records).
ANCHOR_KEYS = ("opponent", "games", "score", "ci_low", "ci_high", "elo", "elo_low", "elo_high")


def gate_summary(gate: dict[str, Any] | None) -> dict[str, Any] | None:
    """The gate record's match figures (GATE_KEYS that it has), "against" (the best it was gated against) and
    "decision" ('promote', 'reject', or None when it has no decision); None when there is no gate record."""
    if not gate:
        return None
    summary = {key: gate[key] for key in GATE_KEYS if key in gate}
    summary["against"] = gate.get("best")
    summary["decision"] = {True: "promote", False: "reject"}.get(gate.get("promote"))
    return summary


def anchor_summary(gate: dict[str, Any] | None) -> dict[str, Any] | None:
    """The anchor match stored in a gate record (ANCHOR_KEYS that it has), None when there is none."""
    anchor = (gate or {}).get("anchor")
    if not isinstance(anchor, dict):
        return None
    return {key: anchor[key] for key in ANCHOR_KEYS if key in anchor}


def lineage_node(record: ModelVersion, best: str | None) -> dict[str, Any]:
    """One version as a lineage node: version, generation, parent, status, status_reason, forced, best (bool),
    gate (gate_summary), anchor (anchor_summary) and an empty "children" list."""
    return {"version": record.version, "generation": record.generation, "parent": record.parent,
            "status": record.status, "status_reason": record.status_reason, "forced": record.forced,
            "best": record.version == best, "gate": gate_summary(record.gate), "anchor": anchor_summary(record.gate),
            "children": []}


def lineage_tree(records: list[ModelVersion], best: str | None) -> list[dict[str, Any]]:
    """`records` as a forest, oldest root first: lineage_node dicts whose "children" hold the versions trained from
    them, oldest first. A root is a version without a parent, or one whose parent is not among `records` (a
    damaged or removed version; its node then has "parent_missing": true). Built without recursion, so a chain
    of any length is fine; a parent is only accepted when older than its child, so edited files cannot make
    a cycle."""
    nodes = {record.version: lineage_node(record, best) for record in records}
    roots = []
    for record in sorted(records, key=lambda r: int(r.version)):
        node, parent = nodes[record.version], record.parent
        if parent in nodes and int(parent) < int(record.version):
            nodes[parent]["children"].append(node)
            continue
        if parent is not None:
            node["parent_missing"] = True
        roots.append(node)
    return roots
