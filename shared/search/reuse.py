"""Tree reuse: make the subtree below a played action the new, compact tree of its slot.

The subtree is found breadth first, one level at a time for all trees together (vectorised): each level's
children get consecutive new indices per tree, in the order (tree, parent, action). Every field of the kept
nodes is gathered into temporaries first and then scattered to the new indices, so the remap is safe in place.
"""
from __future__ import annotations

import numpy as np

from shared.search.tree import NO_ACTION, NO_PARENT, ROOT, UNVISITED, TreeStorage


def _number_subtrees(tree: TreeStorage, slots: np.ndarray, new_roots: np.ndarray,
                     remap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Breadth-first numbering of the kept nodes.

    slots [T] sorted distinct int, new_roots [T] int32; fills remap[slot, old] = new ([B, N] int32, -1 elsewhere).
    Returns node_slot [M] and old_index [M] of every kept node, and counts [B] int32 (kept nodes per slot).
    """
    counts = np.zeros(tree.num_slots, np.int32)
    level_slot, level_old = slots, new_roots
    remap[level_slot, level_old] = ROOT
    counts[level_slot] = 1
    all_slot, all_old = [level_slot], [level_old]
    while level_slot.size:
        kids = tree.children[level_slot, level_old]                      # [F, A] int32
        rows, cols = np.nonzero(kids != UNVISITED)                         # row-major: grouped by slot (sorted)
        child_slot, child_old = level_slot[rows], kids[rows, cols]
        # rank of each child among its slot's children on this level (child_slot is sorted)
        rank = np.arange(child_slot.size) - np.searchsorted(child_slot, child_slot, side="left")
        remap[child_slot, child_old] = counts[child_slot] + rank
        counts += np.bincount(child_slot, minlength=tree.num_slots).astype(np.int32)
        all_slot.append(child_slot)
        all_old.append(child_old)
        level_slot, level_old = child_slot, child_old
    node_slot, old_index = np.concatenate(all_slot), np.concatenate(all_old)
    return node_slot, old_index, counts


def keep_subtrees(tree: TreeStorage, slots: np.ndarray, actions: np.ndarray, remap: np.ndarray) -> np.ndarray:
    """Advance the trees of `slots` [K] by `actions` [K]; returns kept [K] bool.

    A tree is kept when it is valid and the root's child for the action exists and is expanded (evaluated,
    non-terminal); other trees are invalidated (the next search starts them fresh). `remap` is a scratch
    [B, N] int32 array.
    """
    slots = np.asarray(slots, np.int64)
    kept = tree.valid[slots].copy()
    child = np.where(kept, tree.children[slots, ROOT, actions], UNVISITED)
    kept &= child != UNVISITED
    kept &= tree.expanded[slots, np.maximum(child, 0)]
    tree.invalidate(slots[~kept])
    if not kept.any():
        return kept
    order = np.argsort(slots[kept], kind="stable")
    keep_slots, new_roots = slots[kept][order], child[kept][order]
    remap[keep_slots] = -1
    node_slot, old, counts = _number_subtrees(tree, keep_slots, new_roots, remap)
    new = remap[node_slot, old]
    _move_nodes(tree, node_slot, old, new, remap)
    tree.num_nodes[keep_slots] = counts[keep_slots]
    tree.root_prior_clean[keep_slots] = np.where(np.isfinite(tree.prior[keep_slots, ROOT]),
                                                 tree.prior[keep_slots, ROOT], np.float32(0.0))
    tree.valid[keep_slots] = True
    return kept


def _move_nodes(tree: TreeStorage, node_slot: np.ndarray, old: np.ndarray, new: np.ndarray,
                remap: np.ndarray) -> None:
    """Gather every field of the kept nodes (copies), then scatter them to their new indices."""
    kids = tree.children[node_slot, old]                                   # [M, A] old indices
    kids = np.where(kids != UNVISITED, remap[node_slot[:, None], np.maximum(kids, 0)], UNVISITED)
    parent_old = tree.parents[node_slot, old]
    is_root = new == ROOT
    parents = np.where(is_root, NO_PARENT, remap[node_slot, np.maximum(parent_old, 0)])
    actions = np.where(is_root, NO_ACTION, tree.action_from_parent[node_slot, old])
    fields = {
        "node_visits": tree.node_visits[node_slot, old], "node_value_sum": tree.node_value_sum[node_slot, old],
        "expanded": tree.expanded[node_slot, old], "terminal": tree.terminal[node_slot, old],
        "terminal_value": tree.terminal_value[node_slot, old], "node_states": tree.node_states[node_slot, old],
        "children_visits": tree.children_visits[node_slot, old],
        "children_value_sum": tree.children_value_sum[node_slot, old], "prior": tree.prior[node_slot, old],
    }
    for name, values in fields.items():
        getattr(tree, name)[node_slot, new] = values
    tree.children[node_slot, new] = kids
    tree.parents[node_slot, new] = parents
    tree.action_from_parent[node_slot, new] = actions
