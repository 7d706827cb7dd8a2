"""Backup of one search step: every selected path at once, with one np.add.at per statistic.

Additions commute, so instead of walking up one level at a time the step's edges (all rounds, all trees, all
depths) are gathered into flat arrays and updated together; np.add.at accumulates correctly where paths share
ancestors (several rounds of the same tree in one step).

Signs: a leaf's value v is from the leaf's side to move. A node on the path at depth d, with the leaf at depth D,
receives v when D - d is even and -v when it is odd (the side to move alternates at every ply). The root (d = 0)
follows the same rule.
"""
from __future__ import annotations

import numpy as np

from shared.search.puct import Selection
from shared.search.tree import ROOT, TreeStorage


def _step_edges(selections: list[Selection]) -> tuple[np.ndarray, ...]:
    """All edges of the step as flat arrays: (selection id, parent, action, child, child depth), each [E]."""
    count = selections[0].leaf_parent.shape[0]
    parts = []
    for k, sel in enumerate(selections):
        offset = k * count
        parts.append((sel.edge_row + offset, sel.edge_parent, sel.edge_action, sel.edge_child, sel.edge_depth))
        parts.append((np.arange(count) + offset, sel.leaf_parent, sel.leaf_action, sel.leaf_child, sel.leaf_depth))
    return tuple(np.concatenate(column).astype(np.int64) for column in zip(*parts))


def backup_step(tree: TreeStorage, slots: np.ndarray, selections: list[Selection], leaf_values: np.ndarray,
                collided: np.ndarray, virtual_loss: float) -> None:
    """Replace the virtual losses of a step by real values.

    slots [R]: the searched trees; selections: the step's rounds (each with one leaf per tree, children
    created); leaf_values [K*R] float32, leaf's side to move, ordered round-major (round k, tree r -> k*R + r);
    collided [K*R] bool: paths that stopped at a node still awaiting evaluation. Those paths only lose their
    virtual visits (no value is backed up twice for one evaluation).
    """
    capacity, num_actions = tree.capacity, tree.num_actions
    leaf_depth = np.concatenate([sel.leaf_depth for sel in selections]).astype(np.int64)   # [K*R]
    sel_id, parent, action, child, depth = _step_edges(selections)
    slot = slots[sel_id % slots.shape[0]]
    values = leaf_values[sel_id]
    # Flip the sign once per ply between the leaf and the node (see the module docstring).
    signed = np.where((leaf_depth[sel_id] - depth) % 2 == 1, -values, values)
    vl = np.float32(virtual_loss)
    delta_value = np.where(collided[sel_id], -vl, signed - vl).astype(np.float32)
    edge_flat = (slot * capacity + parent) * num_actions + action
    node_flat = slot * capacity + child
    np.add.at(tree.children_value_sum.reshape(-1), edge_flat, delta_value)
    np.add.at(tree.node_value_sum.reshape(-1), node_flat, delta_value)
    all_slots = np.tile(slots, len(selections))
    root_flat = all_slots * capacity + ROOT
    root_value = np.where(leaf_depth % 2 == 1, -leaf_values, leaf_values)      # root's own view
    np.add.at(tree.node_value_sum.reshape(-1), root_flat, np.where(collided, 0.0, root_value).astype(np.float32))
    if collided.any():
        minus_one = -collided[sel_id].astype(np.int32)
        np.add.at(tree.children_visits.reshape(-1), edge_flat, minus_one.astype(np.float32))
        np.add.at(tree.node_visits.reshape(-1), node_flat, minus_one)
        np.add.at(tree.node_visits.reshape(-1), root_flat, -collided.astype(np.int32))
