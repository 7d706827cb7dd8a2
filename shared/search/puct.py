"""PUCT selection: one compiled pass descends every searched tree from its root to a leaf edge.

Score of action a at node s (from the point of view of the player to move at s):

    score(s, a) = Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))

N(s) is the node's own visit count (it includes the visit of its first evaluation, so it is >= 1 and the prior
orders the first choices). Q(s, a) = -W(child) / N(child): a child's value sum W is stored from the CHILD's
side to move, and the child's mover is the opponent of s's mover, hence the minus sign. An unvisited child gets
first-play urgency Q_fpu = clip(W(s) / N(s) - fpu_reduction, -1, 1): the node's own mean value (s's own view,
no flip) minus a reduction. The root uses the same rule, with or without noise. Illegal actions hold a prior of
-inf and are never chosen. Exact ties go to the lowest action index. The kernel evaluates the score in float32
in exactly the order of the former numpy formula (u = P / (1 + N(s, a)) * (c_puct * sqrt(N(s))); score = u - (-Q)),
so results match the recursive reference search bit for bit.

Solver rules (SearchConfig.solver, see `shared.search.backup` for how results are proven): at a node whose
mover has a proven winning action, that action is taken at once (the lowest such index); actions proven to
lose for the mover are skipped unless every legal action is proven lost. A path also stops at a proven node
(its value is exact), as it does at a terminal one.

Virtual loss: once a path is chosen (after the descent, so a path never sees its own virtual loss), every edge
on it gets one extra visit and `virtual_loss` added to the child's value sum (the child's own view: a win for the
child's mover is a loss for the player who chose the edge), and the root gets one extra visit. The next selection
of the same step then prefers other paths. Backup (`shared.search.backup`) replaces each virtual visit by the
real one. With leaves_per_step = 1 the search is therefore exactly sequential PUCT.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.search.jit import f32, kernel
from shared.search.tree import ROOT, UNVISITED, TreeStorage, init_node

#: Kinds of leaf a path can end on.
LEAF_NEW, LEAF_TERMINAL, LEAF_PROVEN, LEAF_PENDING = 0, 1, 2, 3


@dataclass
class Selection:
    """One leaf per searched tree (arrays [R], row r = slots[r]).

    leaf_parent, leaf_action [R] int32: the last edge of each path; leaf_child [R] int32 its child node (created
    by the selection when the edge was new); leaf_kind [R] int8: LEAF_NEW (a child created now, its position still
    to be computed), LEAF_TERMINAL (a finished position), LEAF_PROVEN (a solved node: exact value), LEAF_PENDING
    (created earlier in this step, awaiting evaluation: a collision); leaf_value [R] float32: the exact value of
    terminal and proven leaves from the leaf's side to move (0 for the other kinds).
    """

    leaf_parent: np.ndarray
    leaf_action: np.ndarray
    leaf_child: np.ndarray
    leaf_kind: np.ndarray
    leaf_value: np.ndarray


def select_leaves(tree: TreeStorage, slots: np.ndarray, c_puct: float, fpu_reduction: float,
                  virtual_loss: float, solver: bool) -> Selection:
    """Descend every tree in `slots` [R] (distinct) to a leaf edge, create the new children and add virtual loss.

    A path stops at the first edge whose child is UNVISITED (the child is created, unexpanded), terminal, proven,
    or created earlier in the same step but not yet evaluated (a collision).
    """
    count = slots.shape[0]
    sel = Selection(np.empty(count, np.int32), np.empty(count, np.int32), np.empty(count, np.int32),
                    np.empty(count, np.int8), np.zeros(count, np.float32))
    _select_kernel(np.ascontiguousarray(slots, np.int64), f32(c_puct), f32(fpu_reduction), f32(virtual_loss),
                   solver, tree.prior, *tree.node_arrays(), sel.leaf_parent, sel.leaf_action, sel.leaf_child,
                   sel.leaf_kind, sel.leaf_value)
    return sel


@kernel
def best_action(slot, node, c_puct, fpu_reduction, solver, prior, node_visits, node_value_sum, proven,
                children_visits, children_value_sum, edge_proven):
    """The PUCT choice at an expanded node under the solver rules of the module docstring: -> action (int)."""
    num_actions = prior.shape[2]
    if solver and proven[slot, node] == 1:
        for a in range(num_actions):
            if edge_proven[slot, node, a] == 1:
                return a
    skip_lost = solver and proven[slot, node] != -1
    parent_n = f32(node_visits[slot, node])
    parent_q = node_value_sum[slot, node] / parent_n                     # node's own view (no flip)
    fpu = min(max(parent_q - fpu_reduction, f32(-1.0)), f32(1.0))
    scale = c_puct * f32(np.sqrt(parent_n))
    best, best_score = -1, f32(-np.inf)
    for a in range(num_actions):
        p = prior[slot, node, a]
        if p == f32(-np.inf) or (skip_lost and edge_proven[slot, node, a] == -1):
            continue                                                     # illegal, or proven to lose
        n = children_visits[slot, node, a]
        if n > f32(0.0):
            # -Q(s, a): the child's mean from the CHILD's view is minus the chooser's Q (sign flip).
            minus_q = children_value_sum[slot, node, a] / n
        else:
            minus_q = children_value_sum[slot, node, a] - fpu            # W = 0 here: -Q_fpu
        score = p / (n + f32(1.0)) * scale - minus_q
        if score > best_score:
            best, best_score = a, score
    return best


@kernel
def _select_kernel(slots, c_puct, fpu_reduction, virtual_loss, solver, prior, node_visits, node_value_sum,
                   parents, action_from_parent, expanded, terminal, terminal_value, proven, children,
                   children_visits, children_value_sum, edge_proven, num_nodes,
                   leaf_parent, leaf_action, leaf_child, leaf_kind, leaf_value):
    for r in range(slots.shape[0]):
        slot = slots[r]
        node = ROOT
        while True:
            action = best_action(slot, node, c_puct, fpu_reduction, solver, prior, node_visits, node_value_sum,
                                 proven, children_visits, children_value_sum, edge_proven)
            child = children[slot, node, action]
            if child == UNVISITED:
                kind = LEAF_NEW
                child = num_nodes[slot]                                  # capacity was checked by the caller
                num_nodes[slot] = child + 1
                init_node(slot, child, node, action, node_visits, node_value_sum, parents, action_from_parent,
                          expanded, terminal, terminal_value, proven, children, children_visits,
                          children_value_sum, edge_proven)
                children[slot, node, action] = child
                children_visits[slot, node, action] = f32(0.0)
                children_value_sum[slot, node, action] = f32(0.0)
            elif terminal[slot, child]:
                kind = LEAF_TERMINAL
                leaf_value[r] = terminal_value[slot, child]                 # leaf's side to move
            elif proven[slot, child] != 0:
                kind = LEAF_PROVEN
                leaf_value[r] = f32(proven[slot, child])                    # exact: +1 won, -1 lost
            elif not expanded[slot, child]:
                kind = LEAF_PENDING
            else:
                node = child
                continue
            leaf_parent[r], leaf_action[r], leaf_child[r], leaf_kind[r] = node, action, child, kind
            break
        # Virtual loss on the path, walking up from the leaf (one path never repeats an edge).
        node = leaf_child[r]
        while node != ROOT:
            parent, action = parents[slot, node], action_from_parent[slot, node]
            children_visits[slot, parent, action] += f32(1.0)
            children_value_sum[slot, parent, action] += virtual_loss
            node_visits[slot, node] += 1
            node_value_sum[slot, node] += virtual_loss
            node = parent
        node_visits[slot, ROOT] += 1                                     # virtual visit of the root
