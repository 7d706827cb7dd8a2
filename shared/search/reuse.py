"""Tree reuse: make the subtree below a played action the new, compact tree of its slot.

Compiled, one tree at a time: the kept subtree is numbered breadth first from the new root (children in
action order), every field of the kept nodes is copied to a scratch buffer and written back at the new indices
(so the move is safe in place), and child and parent links are renumbered.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import kernel
from shared.search.tree import NO_ACTION, NO_PARENT, ROOT, UNVISITED, TreeStorage


def keep_subtrees(tree: TreeStorage, slots: np.ndarray, actions: np.ndarray, remap: np.ndarray | None = None) -> np.ndarray:
    """Advance the trees of `slots` [K] by `actions` [K]; returns kept [K] bool.

    A tree is kept when it is valid and the root's child for the action exists and is expanded (evaluated,
    non-terminal); other trees are invalidated (the next search starts them fresh). `remap` is unused (kept for
    callers of the former signature).
    """
    slots = np.ascontiguousarray(slots, np.int64)
    kept = _keep_kernel(slots, np.ascontiguousarray(actions, np.int64), tree.valid, tree.node_states, tree.prior,
                        tree.root_prior_clean, *tree.node_arrays())
    return kept


@kernel
def _keep_kernel(slots, actions, valid, node_states, prior, root_prior_clean, node_visits, node_value_sum, parents,
                 action_from_parent, expanded, terminal, terminal_value, proven, children, children_visits,
                 children_value_sum, edge_proven, num_nodes):
    capacity, num_actions = children.shape[1], children.shape[2]
    kept = np.zeros(slots.shape[0], np.bool_)
    order = np.empty(capacity, np.int64)                 # order[new] = old index
    remap = np.empty(capacity, np.int64)                 # remap[old] = new index
    # Scratch copies of the kept nodes' rows, in new order.
    s_children = np.empty((capacity, num_actions), np.int32)
    s_visits = np.empty((capacity, num_actions), np.float32)
    s_values = np.empty((capacity, num_actions), np.float32)
    s_prior = np.empty((capacity, num_actions), np.float32)
    s_edge = np.empty((capacity, num_actions), np.int8)
    s_states = np.empty((capacity, node_states.shape[2]), np.int16)
    s_node_visits = np.empty(capacity, np.int32)
    s_node_values = np.empty(capacity, np.float32)
    s_parents = np.empty(capacity, np.int32)
    s_actions = np.empty(capacity, np.int32)
    s_expanded = np.empty(capacity, np.bool_)
    s_terminal = np.empty(capacity, np.bool_)
    s_terminal_value = np.empty(capacity, np.float32)
    s_proven = np.empty(capacity, np.int8)
    for k in range(slots.shape[0]):
        slot, action = slots[k], actions[k]
        new_root = children[slot, ROOT, action] if valid[slot] else UNVISITED
        if new_root == UNVISITED or not expanded[slot, new_root]:
            num_nodes[slot] = 0                           # invalidate: the next search starts fresh
            valid[slot] = False
            continue
        kept[k] = True
        # Breadth-first numbering (a FIFO queue numbers level by level, children in action order).
        order[0], remap[new_root], count = new_root, 0, 1
        i = 0
        while i < count:
            old = order[i]
            for a in range(num_actions):
                kid = children[slot, old, a]
                if kid != UNVISITED:
                    order[count], remap[kid] = kid, count
                    count += 1
            i += 1
        # Gather every field of the kept nodes, renumbering links, then scatter to the new indices.
        for new in range(count):
            old = order[new]
            for a in range(num_actions):
                kid = children[slot, old, a]
                s_children[new, a] = kid if kid == UNVISITED else remap[kid]
            s_visits[new] = children_visits[slot, old]
            s_values[new] = children_value_sum[slot, old]
            s_prior[new] = prior[slot, old]
            s_edge[new] = edge_proven[slot, old]
            s_states[new] = node_states[slot, old]
            s_node_visits[new] = node_visits[slot, old]
            s_node_values[new] = node_value_sum[slot, old]
            s_parents[new] = NO_PARENT if new == ROOT else remap[parents[slot, old]]
            s_actions[new] = NO_ACTION if new == ROOT else action_from_parent[slot, old]
            s_expanded[new] = expanded[slot, old]
            s_terminal[new] = terminal[slot, old]
            s_terminal_value[new] = terminal_value[slot, old]
            s_proven[new] = proven[slot, old]
        children[slot, :count] = s_children[:count]
        children_visits[slot, :count] = s_visits[:count]
        children_value_sum[slot, :count] = s_values[:count]
        prior[slot, :count] = s_prior[:count]
        edge_proven[slot, :count] = s_edge[:count]
        node_states[slot, :count] = s_states[:count]
        node_visits[slot, :count] = s_node_visits[:count]
        node_value_sum[slot, :count] = s_node_values[:count]
        parents[slot, :count] = s_parents[:count]
        action_from_parent[slot, :count] = s_actions[:count]
        expanded[slot, :count] = s_expanded[:count]
        terminal[slot, :count] = s_terminal[:count]
        terminal_value[slot, :count] = s_terminal_value[:count]
        proven[slot, :count] = s_proven[:count]
        num_nodes[slot] = count
        for a in range(num_actions):
            p = prior[slot, ROOT, a]
            root_prior_clean[slot, a] = p if np.isfinite(p) else np.float32(0.0)
        valid[slot] = True
    return kept
