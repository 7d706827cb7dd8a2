"""Tree reuse: make the subtree below a played action the new tree of its slot, in place.

Compiled, one tree at a time: the new root's record and rows move to index ROOT (its children's parent links
follow); the old root's other subtrees are dropped. Then the tree is renumbered so that its M nodes are again at
indices 0..M-1 (see shared.search.tree): each kept node at or above M moves into an index below M that was
dropped, with its record, rows and links (nothing reads an index at or above M). An advance thus costs a walk
of the kept nodes and a copy of those that move, not a copy of the tree; in exchange selection's whole-tree touch
reads only nodes in use (measured: on gomoku-8x8-5 a search's trees held 57 nodes in use below a high-water
mark of 105 before, see BENCHMARKS.md).
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import inline, kernel
from shared.search.tree import NO_ACTION, NO_CHILD, NO_PARENT, ROOT, UNVISITED, TreeStorage


def keep_subtrees(tree: TreeStorage, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Advance the trees of `slots` [K] by `actions` [K]; returns kept [K] bool.

    A tree is kept when it is valid and the root's child for the action exists and is expanded (evaluated,
    non-terminal); other trees are invalidated (the next search starts them fresh).
    """
    slots = np.ascontiguousarray(slots, np.int64)
    return _keep_kernel(slots, np.ascontiguousarray(actions, np.int64), tree.valid, tree.node_states,
                        tree.root_prior_clean, *tree.kernel_arrays())


@kernel
def _keep_kernel(slots, actions, valid, node_states, root_prior_clean, nodes, children, prior, edge_proven,
                 top_actions, top_prior, num_nodes):
    capacity, num_actions = children.shape[1], children.shape[2]
    kept = np.zeros(slots.shape[0], np.bool_)
    stack = np.empty(capacity, np.int64)
    in_use = np.empty(capacity, np.bool_)
    for k in range(slots.shape[0]):
        slot, action = slots[k], actions[k]
        new_root = children[slot, ROOT, action] if valid[slot] else UNVISITED
        if new_root == UNVISITED or not nodes[slot, new_root].expanded:
            num_nodes[slot] = 0                           # invalidate: the next search starts fresh
            valid[slot] = False
            continue
        kept[k] = True
        # Move the new root to index ROOT (the old root and its other subtrees are dropped).
        nodes[slot, ROOT] = nodes[slot, new_root]
        root = nodes[slot, ROOT]
        root.parent, root.action, root.next_sibling, root.prior = NO_PARENT, NO_ACTION, NO_CHILD, 0.0
        prior[slot, ROOT] = prior[slot, new_root]
        children[slot, ROOT] = children[slot, new_root]
        edge_proven[slot, ROOT] = edge_proven[slot, new_root]
        top_actions[slot, ROOT] = top_actions[slot, new_root]
        top_prior[slot, ROOT] = top_prior[slot, new_root]
        node_states[slot, ROOT] = node_states[slot, new_root]
        child = root.first_child
        while child != NO_CHILD:
            nodes[slot, child].parent = ROOT
            child = nodes[slot, child].next_sibling
        for a in range(num_actions):
            p = prior[slot, ROOT, a]
            root_prior_clean[slot, a] = p if np.isfinite(p) else np.float32(0.0)
        compact(slot, in_use, stack, nodes, children, prior, edge_proven, top_actions, top_prior, node_states,
                num_nodes)
        valid[slot] = True
    return kept


@inline
def compact(slot, in_use, stack, nodes, children, prior, edge_proven, top_actions, top_prior, node_states,
            num_nodes):
    """Renumber the kept tree of `slot` (root at ROOT, indices below num_nodes[slot] in use before the advance) to
    indices 0..M-1, M its node count, which becomes num_nodes[slot]: each kept node at or above M moves into an index
    below M that the advance dropped. in_use [N] bool, stack [N] int64: scratch."""
    used = num_nodes[slot]
    for node in range(used):
        in_use[node] = False
    in_use[ROOT], stack[0], depth, live = True, ROOT, 1, 1
    while depth > 0:                                      # mark the kept nodes, depth first
        depth -= 1
        child = nodes[slot, stack[depth]].first_child
        while child != NO_CHILD:
            in_use[child], stack[depth] = True, child
            depth += 1
            live += 1
            child = nodes[slot, child].next_sibling
    hole = 0
    for node in range(live, used):
        if in_use[node]:
            while in_use[hole]:
                hole += 1
            move_node(slot, node, hole, nodes, children, prior, edge_proven, top_actions, top_prior, node_states)
            in_use[hole] = True
    num_nodes[slot] = live


@inline
def move_node(slot, source, target, nodes, children, prior, edge_proven, top_actions, top_prior, node_states):
    """Move a node (not the root) from index source to the free index target: its record and rows, its parent's
    children entry and child-list link, its children's parent links."""
    nodes[slot, target] = nodes[slot, source]
    record = nodes[slot, target]
    node_states[slot, target] = node_states[slot, source]
    if record.expanded:
        prior[slot, target] = prior[slot, source]
        children[slot, target] = children[slot, source]
        edge_proven[slot, target] = edge_proven[slot, source]
        top_actions[slot, target] = top_actions[slot, source]
        top_prior[slot, target] = top_prior[slot, source]
    parent = nodes[slot, record.parent]
    children[slot, record.parent, record.action] = target
    if parent.first_child == source:
        parent.first_child = target
    else:
        sibling = parent.first_child
        while nodes[slot, sibling].next_sibling != source:
            sibling = nodes[slot, sibling].next_sibling
        nodes[slot, sibling].next_sibling = target
    child = record.first_child
    while child != NO_CHILD:
        nodes[slot, child].parent = target
        child = nodes[slot, child].next_sibling
