"""Backup of one search step, and the MCTS-solver's propagation of proven results.

Every selected path is walked up from its leaf through the `parent` links (compiled, one tree after the other,
rounds in order), replacing the virtual visit of selection by the real one. Edge statistics are the child's
own (see shared.search.tree), so each node on the path is updated once.

Signs: a leaf's value v is from the leaf's side to move. Walking up one ply flips the sign (the side to move
alternates at every ply), so a node at depth d with the leaf at depth D receives (-1)^(D - d) * v; the root
follows the same rule.

Solver (MCTS-solver): a node is a proven WIN for its side to move when one of its actions is a proven win
(its child is a proven loss for the child's mover, or the game says the action wins at once); it is a proven
LOSS when every legal action is a proven loss (its child is a proven win for the child's mover, or the game
says the opponent then wins at once). Terminal nodes are proven by their exact value. Draws are not proven:
a drawn terminal node backs up its exact 0, but a node is never marked as a proven draw (so a proven loss
needs every legal action to LOSE; a node whose best option is a draw stays unproven and is searched as usual).
Paths stop at proven nodes, whose value is exact (+1 / -1, side to move there), so backed-up values from
proven nodes are exact. After each path's values are backed up, its leaf's result is propagated upwards for
as long as it proves the parent.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import borrowing_kernel, f32, inline
from shared.search.puct import Selection
from shared.search.tree import ROOT, TreeStorage


def backup_step(tree: TreeStorage, slots: np.ndarray, selections: list[Selection], leaf_values: np.ndarray,
                collided: np.ndarray, virtual_loss: float, solver: bool) -> None:
    """Replace the virtual losses of a step by real values, then propagate proven results.

    slots [R]: the searched trees; selections: the step's rounds (each with one leaf per tree, children
    created); leaf_values [K*R] float32, leaf's side to move, ordered round-major (round k, tree r -> k*R + r);
    collided [K*R] bool: paths that stopped at a node still awaiting evaluation. Those paths only lose their
    virtual visits (no value is backed up twice for one evaluation).
    """
    leaves = np.concatenate([sel.leaf_child for sel in selections]) if len(selections) > 1 else selections[0].leaf_child
    _backup_kernel(np.ascontiguousarray(slots, np.int64), leaves, np.ascontiguousarray(leaf_values, np.float32),
                   np.ascontiguousarray(collided), f32(virtual_loss), solver, *tree.kernel_arrays())


@inline
def propagate_proof(slot, node, nodes, prior, edge_proven):
    """Carry a proven result of `node` up the tree while it proves its parent (MCTS-solver rules)."""
    while node != ROOT and nodes[slot, node].proven != 0:
        record = nodes[slot, node]
        parent, action = record.parent, record.action
        up = nodes[slot, parent]
        # Sign flip: a win for the child's side to move is a loss for the parent's side to move.
        edge_proven[slot, parent, action] = -record.proven
        up.edges_proven = True
        if up.proven != 0:
            return                                                     # already proven: nothing new above
        if record.proven == -1:
            up.proven = 1                                              # one winning action suffices
        else:
            for a in range(prior.shape[2]):
                if prior[slot, parent, a] != f32(-np.inf) and edge_proven[slot, parent, a] != -1:
                    return                                             # a legal action not (yet) lost
            up.proven = -1                                             # every legal action loses
        node = parent


@borrowing_kernel
def _backup_kernel(slots, leaves, leaf_values, collided, virtual_loss, solver, nodes, children, prior, edge_proven,
                   top_actions, top_prior, num_nodes):
    count = slots.shape[0]
    for i in range(leaves.shape[0]):
        slot, node = slots[i % count], leaves[i]
        value = leaf_values[i]                                          # side to move at `node`
        if collided[i]:
            while node != ROOT:                                         # only undo the virtual visit
                record = nodes[slot, node]
                record.visits -= 1
                record.value_sum -= virtual_loss
                node = record.parent
            nodes[slot, ROOT].visits -= 1
            continue
        while node != ROOT:
            record = nodes[slot, node]
            record.value_sum += value - virtual_loss                    # the real value replaces the virtual loss
            value = -value                                              # one ply up: the other side to move
            node = record.parent
        nodes[slot, ROOT].value_sum += value                            # root's own view (no virtual value)
        if solver:
            propagate_proof(slot, leaves[i], nodes, prior, edge_proven)
