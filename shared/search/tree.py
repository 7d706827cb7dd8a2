"""Struct-of-arrays storage for a batch of search trees (no Python object per node).

Every array has the tree ("slot") index first and the node index second:

    node_visits        [B, N]     int32    visits of the node (real + virtual)
    node_value_sum     [B, N]     float32  sum of backed-up values, from the node's OWN side to move
    parents            [B, N]     int32    parent node index (NO_PARENT for the root)
    action_from_parent [B, N]     int32    action that led here (NO_ACTION for the root)
    expanded           [B, N]     bool     evaluated, priors known (never set for terminal nodes)
    terminal           [B, N]     bool     the node's position is finished
    terminal_value     [B, N]     float32  exact result of a terminal node, from its side to move
    proven             [B, N]     int8     solver result for the node's side to move: +1 proven win, -1 proven
                                           loss, 0 unknown (draws are never "proven": see shared.search.backup)
    node_states        [B, N, S]  int16    the node's position
    children           [B, N, A]  int32    child node index, UNVISITED when the edge was never taken
    children_visits    [B, N, A]  float32  mirror of node_visits of each child (0 when UNVISITED; float32 so the
                                           PUCT loop needs no cast; counts are exact integers below 2**24)
    children_value_sum [B, N, A]  float32  mirror of node_value_sum of each child: from the CHILD's side to move
    prior              [B, N, A]  float32  policy prior; ILLEGAL actions hold -inf so their PUCT score is -inf
    edge_proven        [B, N, A]  int8     solver result of playing the action, for the NODE's side to move:
                                           +1 wins, -1 loses, 0 unknown. Known before the child exists when the
                                           game's `move_outcomes` says so; else = -proven[child] (sign flip:
                                           the child's side to move is the opponent)
    num_nodes          [B]        int32    nodes in use; the next free node index
    root_prior_clean   [B, A]     float32  the root's prior before Dirichlet noise (re-noised at each search)
    valid              [B]        bool     the slot holds an expanded root that a search may reuse

The children_* mirrors make PUCT selection read one contiguous [A] row per node. Rows of a node are initialised
when the node is created (lazy initialisation), so resetting a tree is O(1): set num_nodes and valid.
The node-creation and expansion kernels below are the "expand" half of a search step; selection lives in
`shared.search.puct`, backup in `shared.search.backup`.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import f32, kernel

ROOT = 0
NO_PARENT = -1
UNVISITED = -1
NO_ACTION = -1


class TreeStorage:
    """Preallocated arrays for `num_slots` trees of `capacity` nodes, `num_actions` actions, states of `state_size`."""

    def __init__(self, num_slots: int, capacity: int, num_actions: int, state_size: int) -> None:
        shape, shape_a = (num_slots, capacity), (num_slots, capacity, num_actions)
        self.num_slots, self.capacity, self.num_actions = num_slots, capacity, num_actions
        self.node_visits = np.zeros(shape, np.int32)
        self.node_value_sum = np.zeros(shape, np.float32)
        self.parents = np.full(shape, NO_PARENT, np.int32)
        self.action_from_parent = np.full(shape, NO_ACTION, np.int32)
        self.expanded = np.zeros(shape, bool)
        self.terminal = np.zeros(shape, bool)
        self.terminal_value = np.zeros(shape, np.float32)
        self.proven = np.zeros(shape, np.int8)
        # The big arrays are left uninitialised: a node's rows are written when the node is created.
        self.node_states = np.empty((num_slots, capacity, state_size), np.int16)
        self.children = np.empty(shape_a, np.int32)
        self.children_visits = np.empty(shape_a, np.float32)
        self.children_value_sum = np.empty(shape_a, np.float32)
        self.prior = np.empty(shape_a, np.float32)
        self.edge_proven = np.empty(shape_a, np.int8)
        self.num_nodes = np.zeros(num_slots, np.int32)
        self.root_prior_clean = np.zeros((num_slots, num_actions), np.float32)
        self.valid = np.zeros(num_slots, bool)

    def node_arrays(self) -> tuple[np.ndarray, ...]:
        """The per-node arrays in the argument order of the kernels (`NODE_ARRAYS`)."""
        return tuple(getattr(self, name) for name in NODE_ARRAYS)

    def invalidate(self, slots: np.ndarray) -> None:
        """Forget the trees in `slots` [K] (O(1) per tree thanks to lazy node initialisation)."""
        self.num_nodes[slots] = 0
        self.valid[slots] = False

    def init_roots(self, slots: np.ndarray, states: np.ndarray) -> None:
        """Start new trees in `slots` [K] with root positions `states` [K, S] int16 (non-terminal, not yet expanded)."""
        slots = np.ascontiguousarray(slots, np.int64)
        _init_roots(slots, *self.node_arrays())
        self.node_states[slots, ROOT] = states
        self.num_nodes[slots] = 1
        self.valid[slots] = False

    def set_leaf_states(self, slots: np.ndarray, nodes: np.ndarray, states: np.ndarray, terminal: np.ndarray,
                        terminal_value: np.ndarray, solver: bool) -> None:
        """Store the positions of new nodes: slots, nodes [K], states [K, S] int16, terminal [K] bool, terminal_value
        [K] float32 (side to move). With the solver a decided terminal node is proven: sign of its value."""
        self.node_states[slots, nodes] = states
        self.terminal[slots, nodes] = terminal
        self.terminal_value[slots, nodes] = terminal_value
        if solver:
            self.proven[slots, nodes] = np.sign(terminal_value).astype(np.int8)

    def expand(self, slots: np.ndarray, nodes: np.ndarray, priors: np.ndarray, legal: np.ndarray,
               outcomes: np.ndarray | None) -> np.ndarray:
        """Mark nodes expanded with priors [K, A] float32 (illegal stored as -inf) and, with the solver, the game's
        move outcomes [K, A] int8 (+1 wins at once, -1 lets the opponent win at once, for the node's side to move).

        Returns proven [K] int8, each node's solver result for its side to move (0 without outcomes).
        """
        slots = np.ascontiguousarray(slots, np.int64)
        nodes = np.ascontiguousarray(nodes, np.int64)
        no_outcomes = outcomes is None
        if no_outcomes:
            outcomes = np.zeros((1, 1), np.int8)
        return _expand_nodes(slots, nodes, np.ascontiguousarray(priors, np.float32), np.ascontiguousarray(legal),
                             outcomes, no_outcomes, self.prior, self.edge_proven, self.expanded, self.proven)

    def root_prior(self, slots: np.ndarray) -> np.ndarray:
        """The prior in use at the roots of `slots`: [K, A] float32 with 0 for illegal actions."""
        prior = self.prior[slots, ROOT]
        return np.where(np.isfinite(prior), prior, np.float32(0.0))


#: Argument order of the per-node arrays passed to the kernels.
NODE_ARRAYS = ("node_visits", "node_value_sum", "parents", "action_from_parent", "expanded", "terminal",
               "terminal_value", "proven", "children", "children_visits", "children_value_sum", "edge_proven",
               "num_nodes")


@kernel
def init_node(slot, node, parent, action, node_visits, node_value_sum, parents, action_from_parent, expanded,
              terminal, terminal_value, proven, children, children_visits, children_value_sum, edge_proven):
    """Write a fresh, unvisited, unexpanded, non-terminal node (its edge rows empty)."""
    node_visits[slot, node] = 0
    node_value_sum[slot, node] = f32(0.0)
    parents[slot, node] = parent
    action_from_parent[slot, node] = action
    expanded[slot, node] = False
    terminal[slot, node] = False
    terminal_value[slot, node] = f32(0.0)
    proven[slot, node] = 0
    children[slot, node, :] = UNVISITED
    children_visits[slot, node, :] = f32(0.0)
    children_value_sum[slot, node, :] = f32(0.0)
    edge_proven[slot, node, :] = 0


@kernel
def _init_roots(slots, node_visits, node_value_sum, parents, action_from_parent, expanded, terminal,
                terminal_value, proven, children, children_visits, children_value_sum, edge_proven, num_nodes):
    for slot in slots:
        init_node(slot, ROOT, NO_PARENT, NO_ACTION, node_visits, node_value_sum, parents, action_from_parent,
                  expanded, terminal, terminal_value, proven, children, children_visits, children_value_sum,
                  edge_proven)


@kernel
def _expand_nodes(slots, nodes, priors, legal, outcomes, no_outcomes, prior, edge_proven, expanded, proven):
    """Write prior rows (-inf where illegal) and solver edge results; prove nodes (a winning move: +1; every legal
    move losing: -1). Returns proven [K] int8."""
    count, num_actions = priors.shape
    result = np.zeros(count, np.int8)
    minus_inf = f32(-np.inf)
    for k in range(count):
        slot, node = slots[k], nodes[k]
        wins, all_lose = False, True
        for a in range(num_actions):
            if legal[k, a]:
                prior[slot, node, a] = priors[k, a]
                outcome = 0 if no_outcomes else outcomes[k, a]
                edge_proven[slot, node, a] = outcome
                wins |= outcome == 1
                all_lose &= outcome == -1
            else:
                prior[slot, node, a] = minus_inf
                edge_proven[slot, node, a] = 0
        expanded[slot, node] = True
        result[k] = 1 if wins else (-1 if (all_lose and not no_outcomes) else 0)
        proven[slot, node] = result[k]
    return result
