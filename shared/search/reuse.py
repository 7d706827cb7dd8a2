"""Tree reuse: make the subtree below a played action the new, compact tree of its slot.

Compiled, one tree at a time: the kept subtree is numbered breadth first from the new root (children in
action order), every field of the kept nodes is copied to a scratch buffer and written back at the new indices
(so the move is safe in place), and child and parent links and the child lists are renumbered.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import kernel
from shared.search.tree import NO_ACTION, NO_CHILD, NO_PARENT, ROOT, UNVISITED, TreeStorage


def keep_subtrees(tree: TreeStorage, slots: np.ndarray, actions: np.ndarray, remap: np.ndarray | None = None) -> np.ndarray:
    """Advance the trees of `slots` [K] by `actions` [K]; returns kept [K] bool.

    A tree is kept when it is valid and the root's child for the action exists and is expanded (evaluated,
    non-terminal); other trees are invalidated (the next search starts them fresh). `remap` is unused (kept for
    callers of the former signature).
    """
    slots = np.ascontiguousarray(slots, np.int64)
    return _keep_kernel(slots, np.ascontiguousarray(actions, np.int64), tree.valid, tree.node_states,
                        tree.root_prior_clean, *tree.kernel_arrays())


@kernel
def _keep_kernel(slots, actions, valid, node_states, root_prior_clean, nodes, edges, edge_proven, top_actions,
                 num_nodes):
    capacity, num_actions = edges.shape[1], edges.shape[2]
    kept = np.zeros(slots.shape[0], np.bool_)
    order = np.empty(capacity, np.int64)                 # order[new] = old index
    remap = np.empty(capacity, np.int64)                 # remap[old] = new index
    # Scratch copies of the kept nodes' rows, in new order.
    s_nodes = np.empty(capacity, nodes.dtype)
    s_edges = np.empty((capacity, num_actions), edges.dtype)
    s_edge_proven = np.empty((capacity, num_actions), np.int8)
    s_top = np.empty((capacity, top_actions.shape[2]), np.int16)
    s_states = np.empty((capacity, node_states.shape[2]), np.int16)
    for k in range(slots.shape[0]):
        slot, action = slots[k], actions[k]
        new_root = edges[slot, ROOT, action].child if valid[slot] else UNVISITED
        if new_root == UNVISITED or not nodes[slot, new_root].expanded:
            num_nodes[slot] = 0                           # invalidate: the next search starts fresh
            valid[slot] = False
            continue
        kept[k] = True
        # Breadth-first numbering (a FIFO queue numbers level by level, children in action order).
        order[0], remap[new_root], count = new_root, 0, 1
        i = 0
        while i < count:
            old = order[i]
            if nodes[slot, old].first_child != NO_CHILD:
                for a in range(num_actions):
                    kid = edges[slot, old, a].child
                    if kid != UNVISITED:
                        order[count], remap[kid] = kid, count
                        count += 1
            i += 1
        # Gather every field of the kept nodes, then scatter them to the new indices, renumbering the links.
        for new in range(count):
            old = order[new]
            s_nodes[new] = nodes[slot, old]
            s_states[new] = node_states[slot, old]
            if nodes[slot, old].expanded:
                s_edges[new] = edges[slot, old]
                s_edge_proven[new] = edge_proven[slot, old]
                s_top[new] = top_actions[slot, old]
        for new in range(count):
            nodes[slot, new] = s_nodes[new]
            record = nodes[slot, new]
            record.parent = NO_PARENT if new == ROOT else remap[record.parent]
            if new == ROOT:
                record.action = NO_ACTION
            record.first_child = NO_CHILD
            node_states[slot, new] = s_states[new]
            if not record.expanded:
                continue                                  # a terminal node: no edge rows (see tree.py)
            for a in range(num_actions):
                edge = edges[slot, new, a]
                edge.prior = s_edges[new, a].prior
                edge.visits = s_edges[new, a].visits
                edge.value_sum = s_edges[new, a].value_sum
                kid = s_edges[new, a].child
                edge.child = kid if kid == UNVISITED else remap[kid]
            edge_proven[slot, new] = s_edge_proven[new]
            top_actions[slot, new] = s_top[new]
        # Child lists in the new numbering (pushed in descending order: the lists run by ascending action).
        for new in range(count - 1, 0, -1):
            parent = nodes[slot, new].parent
            nodes[slot, new].next_sibling = nodes[slot, parent].first_child
            nodes[slot, parent].first_child = new
        nodes[slot, ROOT].next_sibling = NO_CHILD
        num_nodes[slot] = count
        for a in range(num_actions):
            p = edges[slot, ROOT, a].prior
            root_prior_clean[slot, a] = p if np.isfinite(p) else np.float32(0.0)
        valid[slot] = True
    return kept
