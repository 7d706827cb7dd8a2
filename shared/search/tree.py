"""Struct-of-arrays storage for a batch of search trees (no Python object per node).

Every array has the tree ("slot") index first and the node index second:

    node_visits        [B, N]     int32    visits of the node (real + virtual)
    node_value_sum     [B, N]     float32  sum of backed-up values, from the node's OWN side to move
    parents            [B, N]     int32    parent node index (NO_PARENT for the root)
    action_from_parent [B, N]     int32    action that led here (NO_ACTION for the root)
    expanded           [B, N]     bool     evaluated, priors known (never set for terminal nodes)
    terminal           [B, N]     bool     the node's position is finished
    terminal_value     [B, N]     float32  exact result of a terminal node, from its side to move
    node_states        [B, N, S]  int16    the node's position
    children           [B, N, A]  int32    child node index, UNVISITED when the edge was never taken
    children_visits    [B, N, A]  float32  mirror of node_visits of each child (0 when UNVISITED; float32 so the
                                           PUCT loop needs no cast; counts are exact integers below 2**24)
    children_value_sum [B, N, A]  float32  mirror of node_value_sum of each child: from the CHILD's side to move
    prior              [B, N, A]  float32  policy prior; ILLEGAL actions hold -inf so their PUCT score is -inf
    num_nodes          [B]        int32    nodes in use; the next free node index
    root_prior_clean   [B, A]     float32  the root's prior before Dirichlet noise (re-noised at each search)
    valid              [B]        bool     the slot holds an expanded root that a search may reuse

The children_* mirrors make PUCT selection a contiguous row gather (`arr[b, node]` -> [R, A]) instead of a 2-D
gather through `children`. Rows of a node are initialised when the node is created (lazy initialisation), so
resetting a tree is O(1): set num_nodes and valid. All arrays are C-contiguous: backup updates them through flat
reshape(-1) views.
"""
from __future__ import annotations

import numpy as np

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
        # The big arrays are left uninitialised: a node's rows are written when the node is created.
        self.node_states = np.empty((num_slots, capacity, state_size), np.int16)
        self.children = np.empty(shape_a, np.int32)
        self.children_visits = np.empty(shape_a, np.float32)
        self.children_value_sum = np.empty(shape_a, np.float32)
        self.prior = np.empty(shape_a, np.float32)
        self.num_nodes = np.zeros(num_slots, np.int32)
        self.root_prior_clean = np.zeros((num_slots, num_actions), np.float32)
        self.valid = np.zeros(num_slots, bool)

    def invalidate(self, slots: np.ndarray) -> None:
        """Forget the trees in `slots` [K] (O(1) per tree thanks to lazy node initialisation)."""
        self.num_nodes[slots] = 0
        self.valid[slots] = False

    def init_nodes(self, slots: np.ndarray, nodes: np.ndarray, parents: np.ndarray, actions: np.ndarray,
                   states: np.ndarray, terminal: np.ndarray, terminal_value: np.ndarray) -> None:
        """Write fresh, unvisited, unexpanded nodes: [K] arrays, states [K, S] int16, distinct (slot, node) pairs."""
        self.node_visits[slots, nodes] = 0
        self.node_value_sum[slots, nodes] = 0.0
        self.parents[slots, nodes] = parents
        self.action_from_parent[slots, nodes] = actions
        self.expanded[slots, nodes] = False
        self.terminal[slots, nodes] = terminal
        self.terminal_value[slots, nodes] = terminal_value
        self.node_states[slots, nodes] = states
        self.children[slots, nodes] = UNVISITED
        self.children_visits[slots, nodes] = 0.0
        self.children_value_sum[slots, nodes] = 0.0

    def init_roots(self, slots: np.ndarray, states: np.ndarray) -> None:
        """Start new trees in `slots` [K] with root positions `states` [K, S] int16 (non-terminal, not yet expanded)."""
        count = slots.shape[0]
        zeros_f = np.zeros(count, np.float32)
        self.init_nodes(slots, np.full(count, ROOT, np.int32), np.full(count, NO_PARENT, np.int32),
                        np.full(count, NO_ACTION, np.int32), states, np.zeros(count, bool), zeros_f)
        self.num_nodes[slots] = 1
        self.valid[slots] = False

    def add_children(self, slots: np.ndarray, parents: np.ndarray, actions: np.ndarray, states: np.ndarray,
                     terminal: np.ndarray, terminal_value: np.ndarray) -> np.ndarray:
        """Allocate one new child per slot (slots [K] distinct) for edge (parent, action); returns node ids [K] int32.

        The caller has checked capacity before the search (see `BatchedMCTS`), so allocation cannot overflow.
        """
        nodes = self.num_nodes[slots].copy()
        self.num_nodes[slots] = nodes + 1
        self.init_nodes(slots, nodes, parents, actions, states, terminal, terminal_value)
        self.children[slots, parents, actions] = nodes
        self.children_visits[slots, parents, actions] = 0.0
        self.children_value_sum[slots, parents, actions] = 0.0
        return nodes

    def set_priors(self, slots: np.ndarray, nodes: np.ndarray, priors: np.ndarray, legal: np.ndarray) -> None:
        """Mark nodes expanded with priors [K, A] float32 (legal actions only; illegal stored as -inf)."""
        self.prior[slots, nodes] = np.where(legal, priors, np.float32(-np.inf))
        self.expanded[slots, nodes] = True

    def root_prior(self, slots: np.ndarray) -> np.ndarray:
        """The prior in use at the roots of `slots`: [K, A] float32 with 0 for illegal actions."""
        prior = self.prior[slots, ROOT]
        return np.where(np.isfinite(prior), prior, np.float32(0.0))
