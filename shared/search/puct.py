"""PUCT selection: all trees descend together, one depth at a time, with vectorised numpy.

Score of action a at node s (from the point of view of the player to move at s):

    score(s, a) = Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))

N(s) is the node's own visit count (it includes the visit of its first evaluation, so it is >= 1 and the prior
orders the first choices). Q(s, a) = -W(child) / N(child): a child's value sum W is stored from the CHILD's
side to move, and the child's mover is the opponent of s's mover, hence the minus sign. An unvisited child gets
first-play urgency Q_fpu = clip(W(s) / N(s) - fpu_reduction, -1, 1): the node's own mean value (s's own view,
no flip) minus a reduction. The root uses the same rule, with or without noise. Illegal actions hold a prior of
-inf, so their score is -inf (c_puct > 0 is required). np.argmax breaks exact ties by the lowest action index.

Virtual loss: once a path is chosen (after the descent, so a path never sees its own virtual loss), every edge
on it gets one extra visit and `virtual_loss` added to the child's value sum (the child's own view: a win for the
child's mover is a loss for the player who chose the edge), and the root gets one extra visit. The next selection
of the same step then prefers other paths. Backup (`shared.search.backup`) replaces each virtual visit by the
real one. With leaves_per_step = 1 the search is therefore exactly sequential PUCT.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.search.tree import ROOT, UNVISITED, TreeStorage


def puct_actions(tree: TreeStorage, slots: np.ndarray, nodes: np.ndarray, c_puct: float,
                 fpu_reduction: float) -> np.ndarray:
    """Best PUCT action at each (slot, node): slots [R], nodes [R] (expanded nodes) -> actions [R] int64.

    Computed as u - (-Q) with in-place float32 passes over [R, A] rows (this is the search's hot loop).
    """
    num_actions = tree.num_actions
    flat = slots * tree.capacity + nodes                                            # [R] row of (slot, node)
    prior = tree.prior.reshape(-1, num_actions).take(flat, axis=0)                  # [R, A] float32, -inf illegal
    child_n = tree.children_visits.reshape(-1, num_actions).take(flat, axis=0)      # [R, A] float32
    child_w = tree.children_value_sum.reshape(-1, num_actions).take(flat, axis=0)   # [R, A] child's view
    parent_n = tree.node_visits.reshape(-1)[flat].astype(np.float32)               # [R]
    parent_q = tree.node_value_sum.reshape(-1)[flat] / parent_n                     # [R] node's own view (no flip)
    fpu = np.clip(parent_q - np.float32(fpu_reduction), np.float32(-1.0), np.float32(1.0))
    unvisited = child_n == 0
    # minus_q = -Q(s, a): the child's mean from the CHILD's view is minus the chooser's Q (sign flip), and
    # -fpu for unvisited children (their W is 0, and n + unvisited = max(n, 1) avoids a division by zero).
    minus_q = child_w / (child_n + unvisited)
    minus_q -= np.multiply(unvisited, fpu[:, None], dtype=np.float32)
    score = child_n + np.float32(1.0)
    np.divide(prior, score, out=score)                                               # P / (1 + N(s, a))
    score *= (np.float32(c_puct) * np.sqrt(parent_n))[:, None]
    score -= minus_q                                                                 # U + Q
    return score.argmax(axis=1)


@dataclass
class Selection:
    """One leaf per searched tree, plus the interior edges walked to reach it.

    leaf_parent, leaf_action [R] int32: the last edge of each path; leaf_child [R] int32 its child node
    (UNVISITED when the edge was never taken); leaf_depth [R] int32: depth of that child (root = 0).
    edge_row, edge_parent, edge_action, edge_child, edge_depth [E]: interior edges (child expanded), with
    edge_row indexing the searched trees (0..R-1) and edge_depth the child's depth.
    """

    leaf_parent: np.ndarray
    leaf_action: np.ndarray
    leaf_child: np.ndarray
    leaf_depth: np.ndarray
    edge_row: np.ndarray
    edge_parent: np.ndarray
    edge_action: np.ndarray
    edge_child: np.ndarray
    edge_depth: np.ndarray


def select_leaves(tree: TreeStorage, slots: np.ndarray, c_puct: float, fpu_reduction: float) -> Selection:
    """Descend every tree in `slots` [R] (distinct) from its root to a leaf edge.

    A path stops at the first edge whose child is UNVISITED (a new leaf), terminal, or created earlier in the
    same step but not yet evaluated (a collision). The caller creates new children, then calls
    `apply_virtual_loss`.
    """
    count = slots.shape[0]
    rows = np.arange(count)
    nodes = np.full(count, ROOT, np.int32)
    leaf = {k: np.empty(count, np.int32) for k in ("parent", "action", "child", "depth")}
    edges: list[tuple[np.ndarray, ...]] = []
    depth = 0
    while rows.size:
        tree_slots = slots[rows]
        actions = puct_actions(tree, tree_slots, nodes, c_puct, fpu_reduction)
        child = tree.children[tree_slots, nodes, actions]
        go_on = (child != UNVISITED) & tree.expanded[tree_slots, np.maximum(child, 0)]
        depth += 1
        stop = ~go_on
        stop_rows = rows[stop]
        leaf["parent"][stop_rows], leaf["action"][stop_rows] = nodes[stop], actions[stop]
        leaf["child"][stop_rows], leaf["depth"][stop_rows] = child[stop], depth
        rows, nodes, actions, child = rows[go_on], nodes[go_on], actions[go_on], child[go_on]
        if rows.size:
            edges.append((rows, nodes, actions, child, np.full(rows.size, depth, np.int32)))
            nodes = child
    if edges:
        parts = [np.concatenate(column) for column in zip(*edges)]
    else:
        parts = [np.empty(0, np.int32) for _ in range(5)]
    return Selection(leaf["parent"], leaf["action"], leaf["child"], leaf["depth"], *parts)


def _add_virtual_loss(tree: TreeStorage, slots: np.ndarray, parents: np.ndarray, actions: np.ndarray,
                      children: np.ndarray, virtual_loss: float) -> None:
    """One virtual visit with value +virtual_loss (child's view) on edges/children (all [K], no repeated edge)."""
    tree.children_visits[slots, parents, actions] += 1
    tree.children_value_sum[slots, parents, actions] += np.float32(virtual_loss)
    tree.node_visits[slots, children] += 1
    tree.node_value_sum[slots, children] += np.float32(virtual_loss)


def apply_virtual_loss(tree: TreeStorage, slots: np.ndarray, sel: Selection, virtual_loss: float) -> None:
    """Virtual loss on every path of a selection round (its leaf children must exist); slots [R] distinct.

    One path per tree never repeats an edge, so plain fancy-index additions are exact here.
    """
    tree.node_visits[slots, ROOT] += 1                                 # virtual visit of the root
    _add_virtual_loss(tree, slots[sel.edge_row], sel.edge_parent, sel.edge_action, sel.edge_child, virtual_loss)
    _add_virtual_loss(tree, slots, sel.leaf_parent, sel.leaf_action, sel.leaf_child, virtual_loss)
