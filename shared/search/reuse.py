"""Tree reuse: make the subtree below a played action the new tree of its slot, in place.

Compiled, one tree at a time: every node outside the kept subtree (the old root and its other children's
subtrees) goes onto the slot's free list (see shared.search.tree), and the new root's record and rows move to
index ROOT (its old index is freed; its children's parent links follow). Kept nodes other than the root stay
where they are, so an advance costs one node's rows plus a touch of each discarded node, not a copy of the tree.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import kernel
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
                 top_actions, top_prior, num_nodes, alloc):
    capacity, num_actions = children.shape[1], children.shape[2]
    kept = np.zeros(slots.shape[0], np.bool_)
    stack = np.empty(capacity, np.int64)
    for k in range(slots.shape[0]):
        slot, action = slots[k], actions[k]
        new_root = children[slot, ROOT, action] if valid[slot] else UNVISITED
        if new_root == UNVISITED or not nodes[slot, new_root].expanded:
            num_nodes[slot] = 0                           # invalidate: the next search starts fresh
            alloc[slot, 0], alloc[slot, 1] = 0, NO_CHILD
            valid[slot] = False
            continue
        kept[k] = True
        # Free the old root's other subtrees (depth first), then the old root's index is the new root's.
        depth, freed = 0, 0
        child = nodes[slot, ROOT].first_child
        while child != NO_CHILD:
            if child != new_root:
                stack[depth] = child
                depth += 1
            child = nodes[slot, child].next_sibling
        while depth > 0:
            depth -= 1
            node = stack[depth]
            child = nodes[slot, node].first_child
            while child != NO_CHILD:
                stack[depth] = child
                depth += 1
                child = nodes[slot, child].next_sibling
            record = nodes[slot, node]
            record.expanded = False                       # a free node: no stale flags for readers
            record.first_child = NO_CHILD
            record.next_sibling = alloc[slot, 1]          # push onto the free list
            alloc[slot, 1] = node
            freed += 1
        # Move the new root to index ROOT and free its old index.
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
        old = nodes[slot, new_root]
        old.expanded, old.first_child = False, NO_CHILD
        old.next_sibling = alloc[slot, 1]
        alloc[slot, 1] = new_root
        num_nodes[slot] -= freed + 1                      # the discarded subtrees and the old root
        for a in range(num_actions):
            p = prior[slot, ROOT, a]
            root_prior_clean[slot, a] = p if np.isfinite(p) else np.float32(0.0)
        valid[slot] = True
    return kept
