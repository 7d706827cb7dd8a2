"""Terminal views of the model registry for `zeroforge models`: gate and anchor figures as text, a version's
status, and the lineage tree (rich) of `models tree`.

The lineage tree keeps a line of descent at one depth: within one list, each version was trained from the one
above it. A version's other children (a new line after a rollback, say) are indented under it, each under a
"branch from V" line, so a long training chain does not walk off the right edge of the terminal.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from rich.text import Text
from rich.tree import Tree

#: `models tree --json` is indented for lineages up to this depth, printed on one line for deeper ones.
INDENT_MAX_DEPTH = 64
#: Style of each status in the lineage tree (plain text without colour says the same).
STATUS_STYLES = {"promoted": "green", "candidate": "cyan", "rejected": "red", "retired": "yellow"}


def gate_text(gate: dict[str, Any] | None) -> str:
    """'0.612 [0.550, 0.670]' from a gate result with score/ci_low/ci_high, '' when there is none."""
    if not gate or not isinstance(gate.get("score"), (int, float)):
        return ""
    text = f"{gate['score']:.3f}"
    if isinstance(gate.get("ci_low"), (int, float)) and isinstance(gate.get("ci_high"), (int, float)):
        text += f" [{gate['ci_low']:.3f}, {gate['ci_high']:.3f}]"
    return text


def anchor_text(anchor: dict[str, Any] | None) -> str:
    """'pure-mcts:1000: 0.812, Elo +254' from an anchor match (the "anchor" of a gate record), '' when there is
    none or it has no Elo."""
    if not isinstance(anchor, dict) or not isinstance(anchor.get("elo"), (int, float)):
        return ""
    score = f"{anchor['score']:.3f}, " if isinstance(anchor.get("score"), (int, float)) else ""
    return f"{anchor.get('opponent', '?')}: {score}Elo {anchor['elo']:+.0f}"


def status_text(status: str, forced: bool) -> str:
    """'promoted', or 'promoted (forced)' for a version made best without passing a gate."""
    return f"{status} (forced)" if forced else status


def _node_label(node: dict[str, Any]) -> Text:
    """One lineage node (shared.registry.lineage.lineage_node) as a line: version, generation, status, gate
    score [CI] and decision, anchor, best mark."""
    label = Text(node["version"], style="bold")
    label.append(f"  gen {node['generation']}  ")
    label.append(status_text(node["status"], node["forced"]), style=STATUS_STYLES.get(node["status"], ""))
    gate = node["gate"]
    if gate:
        figures = gate_text(gate)
        decision = gate["decision"] or "no decision"
        against = f" vs {gate['against']}" if gate.get("against") else ""
        label.append(f"  gate{against} {figures + ' ' if figures else ''}{decision}")
    if anchor_text(node["anchor"]):
        label.append(f"  anchor {anchor_text(node['anchor'])}")
    if node.get("parent_missing"):
        label.append(f"  (parent {node['parent']} missing)", style="red")
    if node["best"]:
        label.append("  <- best", style="bold green")
    return label


def _flatten(forest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every node of `forest`, parents before their children (no recursion)."""
    order, stack = [], list(reversed(forest))
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(node["children"]))
    return order


def _main_children(forest: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """version -> the child that continues its line: the one leading to the best model, else the one with the
    most descendants, else the oldest."""
    size, has_best = {}, {}
    for node in reversed(_flatten(forest)):   # children before parents
        size[node["version"]] = 1 + sum(size[c["version"]] for c in node["children"])
        has_best[node["version"]] = node["best"] or any(has_best[c["version"]] for c in node["children"])
    main = {}
    for node in _flatten(forest):
        if node["children"]:
            main[node["version"]] = min(node["children"], key=lambda c: (not has_best[c["version"]],
                                                                        -size[c["version"]], int(c["version"])))
    return main


def lineage_renderable(forest: list[dict[str, Any]], title: str) -> Tree:
    """A rich Tree of `forest` (shared.registry.lineage.lineage_tree) under `title`: each line of descent is one
    list (every version trained from the one above it); a version's other children hang under it in
    "branch from V" lists; several roots each get a "line from V" list."""
    tree = Tree(Text(title, style="bold"), guide_style="dim")
    main = _main_children(forest)
    if len(forest) == 1:
        chains = [(tree, forest[0])]
    else:
        chains = [(tree.add(Text(f"line from {root['version']}", style="dim italic")), root) for root in forest]
    chains.reverse()
    while chains:
        container, node = chains.pop()
        while node is not None:
            item = container.add(_node_label(node))
            follow = main.get(node["version"])
            for child in node["children"]:
                if child is not follow:
                    chains.append((item.add(Text(f"branch from {node['version']}", style="dim italic")), child))
            node = follow
    return tree


def lineage_json(forest: list[dict[str, Any]]) -> str:
    """`forest` as JSON: indented up to INDENT_MAX_DEPTH levels, on one line beyond (indentation grows with the
    depth: a 1500-deep chain is 22.6 MB indented, 55 kB on one line; BENCHMARKS.md). The recursion limit is raised for the duration to
    fit the depth (a lineage is one long chain after many generations, deeper than json's default allows)."""
    depth, stack = 0, [(node, 1) for node in forest]
    while stack:
        node, level = stack.pop()
        depth = max(depth, level)
        stack.extend((child, level + 1) for child in node["children"])
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 4 * depth + 200))
    try:
        return json.dumps(forest, indent=2 if depth <= INDENT_MAX_DEPTH else None)
    finally:
        sys.setrecursionlimit(old_limit)
