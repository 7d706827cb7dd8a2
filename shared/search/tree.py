"""Struct-of-arrays storage for a batch of search trees (no Python object per node).

Two record arrays hold the statistics, tree ("slot") index first and node index second, so that one node visit
reads few cache lines:

    nodes  [B, N]     NODE_DTYPE (32 bytes): one node
        visits          int32    visits of the node (real + virtual)
        value_sum       float32  sum of backed-up values, from the node's OWN side to move
        parent          int32    parent node index (NO_PARENT for the root)
        action          int32    action that led here (NO_ACTION for the root)
        first_child     int32    the most recently created child (NO_CHILD if none); with
        next_sibling    int32    the next older sibling: a list of each node's created children
        expanded        bool     evaluated, priors known (never set for terminal nodes)
        terminal        bool     the node's position is finished
        terminal_value  int8     exact result of a terminal node, from its side to move (-1, 0, +1 per Game)
        proven          int8     solver result for the node's side to move: +1 proven win, -1 proven loss,
                                 0 unknown (draws are never "proven": see shared.search.backup)
        top_count       int8     entries of top_actions in use; -1: not built yet (selection builds the list
                                 at the node's first visit)
        edges_proven    bool     some entry of the node's edge_proven row is not 0
    edges  [B, N, A]  EDGE_DTYPE (16 bytes): one action of one node
        prior           float32  policy prior; ILLEGAL actions hold -inf
        visits          float32  mirror of the child's visits (0 when never taken; float32 so the PUCT formula
                                 needs no cast; counts are exact integers below 2**24)
        value_sum       float32  mirror of the child's value_sum: from the CHILD's side to move
        child           int32    child node index, UNVISITED when the edge was never taken

plus plain arrays:

    edge_proven        [B, N, A]  int8     solver result of playing the action, for the NODE's side to move: +1 wins,
                                           -1 loses, 0 unknown. Known before the child exists when the game's
                                           `move_outcomes` says so; else = -proven[child] (sign flip: the child's
                                           side to move is the opponent)
    top_actions        [B, N, K]  int16    K legal actions with the highest priors, by prior descending and action
                                           ascending, among those not created when the list was last built
                                           (K = TOP_K); see `shared.search.puct`
    node_states        [B, N, S]  int16    the node's position
    num_nodes          [B]        int32    nodes in use; the next free node index
    root_prior_clean   [B, A]     float32  the root's prior before Dirichlet noise (re-noised at each search)
    valid              [B]        bool     the slot holds an expanded root that a search may reuse

Every field is also an attribute under its former name, as a numpy view (node_visits, node_value_sum, parents,
action_from_parent, first_child, next_sibling, expanded, terminal, terminal_value, proven, top_count;
children, children_visits, children_value_sum, prior). Rows of a node are initialised when the node is created
(lazy initialisation: a node's record when it is created, its edge rows when it is expanded), so resetting a
tree is O(1): set num_nodes and valid. The expansion kernels below are the
"expand" step of a search; selection lives in `shared.search.puct`, backup in `shared.search.backup`.
"""
from __future__ import annotations

import numpy as np

from shared.search.jit import f32, inline, kernel

ROOT = 0
NO_PARENT = -1
UNVISITED = -1
NO_ACTION = -1
NO_CHILD = -1
#: How many best-prior actions each node keeps sorted for selection.
TOP_K = 8


NODE_DTYPE = np.dtype([("visits", np.int32), ("value_sum", np.float32), ("parent", np.int32), ("action", np.int32),
                       ("first_child", np.int32), ("next_sibling", np.int32), ("expanded", np.bool_),
                       ("terminal", np.bool_), ("terminal_value", np.int8), ("proven", np.int8),
                       ("top_count", np.int8), ("edges_proven", np.bool_)], align=True)
EDGE_DTYPE = np.dtype([("prior", np.float32), ("visits", np.float32), ("value_sum", np.float32),
                       ("child", np.int32)], align=True)
#: Former array names -> (record array, field).
_FIELD_VIEWS = {"node_visits": ("nodes", "visits"), "node_value_sum": ("nodes", "value_sum"),
                "parents": ("nodes", "parent"), "action_from_parent": ("nodes", "action"),
                "first_child": ("nodes", "first_child"), "next_sibling": ("nodes", "next_sibling"),
                "expanded": ("nodes", "expanded"), "terminal": ("nodes", "terminal"),
                "terminal_value": ("nodes", "terminal_value"), "proven": ("nodes", "proven"),
                "top_count": ("nodes", "top_count"), "children": ("edges", "child"),
                "children_visits": ("edges", "visits"), "children_value_sum": ("edges", "value_sum"),
                "prior": ("edges", "prior")}


class TreeStorage:
    """Preallocated arrays for `num_slots` trees of `capacity` nodes, `num_actions` actions, states of `state_size`."""

    def __init__(self, num_slots: int, capacity: int, num_actions: int, state_size: int) -> None:
        self.num_slots, self.capacity, self.num_actions = num_slots, capacity, num_actions
        self.nodes = np.zeros((num_slots, capacity), NODE_DTYPE)
        # The big arrays are left uninitialised: a node's rows are written when the node is created.
        self.edges = np.empty((num_slots, capacity, num_actions), EDGE_DTYPE)
        self.edge_proven = np.empty((num_slots, capacity, num_actions), np.int8)
        self.top_actions = np.empty((num_slots, capacity, TOP_K), np.int16)
        self.node_states = np.empty((num_slots, capacity, state_size), np.int16)
        self.num_nodes = np.zeros(num_slots, np.int32)
        self.root_prior_clean = np.zeros((num_slots, num_actions), np.float32)
        self.valid = np.zeros(num_slots, bool)
        for name, (records, field) in _FIELD_VIEWS.items():
            setattr(self, name, getattr(self, records)[field])

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """(nodes, edges, edge_proven, top_actions, num_nodes): the arrays the search kernels work on."""
        return self.nodes, self.edges, self.edge_proven, self.top_actions, self.num_nodes

    def invalidate(self, slots: np.ndarray) -> None:
        """Forget the trees in `slots` [K] (O(1) per tree thanks to lazy node initialisation)."""
        self.num_nodes[slots] = 0
        self.valid[slots] = False

    def init_roots(self, slots: np.ndarray, states: np.ndarray) -> None:
        """Start new trees in `slots` [K] with root positions `states` [K, S] int16 (non-terminal, not yet expanded)."""
        root = np.zeros((), NODE_DTYPE)
        root["parent"], root["action"], root["first_child"], root["next_sibling"] = (NO_PARENT, NO_ACTION,
                                                                                     NO_CHILD, NO_CHILD)
        self.nodes[slots, ROOT] = root
        edge = np.zeros((), EDGE_DTYPE)
        edge["child"] = UNVISITED
        self.edges[slots, ROOT] = edge
        self.edge_proven[slots, ROOT] = 0
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

    def expand(self, slots: np.ndarray, nodes: np.ndarray, logits: np.ndarray, legal: np.ndarray,
               outcomes: np.ndarray | None) -> np.ndarray:
        """Mark nodes expanded: slots, nodes [K]; logits [K, A] float32 -> priors = masked_softmax(logits, legal)
        (bit for bit the numpy function of shared.search.policy, fused; illegal actions stored as -inf); with the
        solver, the game's move outcomes [K, A] int8 (+1 wins at once, -1 lets the opponent win at once, for the
        node's side to move) become edge results and may prove the node.

        Returns proven [K] int8, each node's solver result for its side to move (0 without outcomes).
        """
        slots = np.ascontiguousarray(slots, np.int64)
        nodes = np.ascontiguousarray(nodes, np.int64)
        legal = np.ascontiguousarray(legal, bool)
        shifted, no_mass = _softmax_shift(np.ascontiguousarray(logits, np.float32), legal)
        weights = np.exp(shifted, out=shifted)                       # the same numpy exp as masked_softmax
        if no_mass.any():
            weights[no_mass] = legal[no_mass]                         # no mass: uniform over legal actions
        totals = weights.sum(axis=1)                                  # the same numpy summation order
        no_outcomes = outcomes is None
        if no_outcomes:
            outcomes = np.zeros((1, 1), np.int8)
        return _expand_nodes(slots, nodes, weights, totals, legal, outcomes, no_outcomes, self.nodes, self.edges,
                             self.edge_proven, self.top_actions)

    def forget_top_actions(self, slots: np.ndarray, nodes: np.ndarray) -> None:
        """Mark top_actions of (slots, nodes) [K] stale after their priors changed (root noise): selection rebuilds
        them at the next visit."""
        self.top_count[slots, nodes] = -1

    def root_prior(self, slots: np.ndarray) -> np.ndarray:
        """The prior in use at the roots of `slots`: [K, A] float32 with 0 for illegal actions."""
        prior = self.prior[slots, ROOT]
        return np.where(np.isfinite(prior), prior, np.float32(0.0))


@kernel
def _softmax_shift(logits, legal):
    """First half of masked_softmax: logits [K, A] float32 with NaN -> -inf and +inf -> the largest float32,
    illegal -> -inf, minus each row's maximum (0 when the row has no finite maximum). -> (shifted [K, A]
    float32, no_mass [K] bool)."""
    count, num_actions = logits.shape
    shifted = np.empty((count, num_actions), np.float32)
    no_mass = np.zeros(count, np.bool_)
    minus_inf, big = f32(-np.inf), f32(np.finfo(np.float32).max)
    for k in range(count):
        row_max = minus_inf
        for a in range(num_actions):
            x = logits[k, a]
            if not legal[k, a] or np.isnan(x):
                x = minus_inf
            elif x == f32(np.inf):
                x = big
            shifted[k, a] = x
            row_max = max(row_max, x)
        if not np.isfinite(row_max):
            no_mass[k] = True
            row_max = f32(0.0)
        for a in range(num_actions):
            shifted[k, a] -= row_max
    return shifted, no_mass


@kernel
def _expand_nodes(slots, node_ids, weights, totals, legal, outcomes, no_outcomes, nodes, edges, edge_proven,
                  top_actions):
    """Last step of masked_softmax (weights [K, A] float32 = exp(shifted), totals [K] their row sums), written into
    the prior rows (-inf where illegal), plus solver edge results; prove nodes (a winning move: +1; every legal
    move losing: -1). Returns proven [K] int8."""
    count, num_actions = weights.shape
    result = np.zeros(count, np.int8)
    minus_inf = f32(-np.inf)
    for k in range(count):
        slot, node = slots[k], node_ids[k]
        total = max(totals[k], f32(1e-30))
        wins, all_lose, any_proven = False, True, False
        for a in range(num_actions):
            edge = edges[slot, node, a]                                 # a node is expanded once, childless:
            edge.visits, edge.value_sum, edge.child = f32(0.0), f32(0.0), UNVISITED   # empty edges + priors
            if legal[k, a]:
                edge.prior = weights[k, a] / total
                outcome = 0 if no_outcomes else outcomes[k, a]
                edge_proven[slot, node, a] = outcome
                wins |= outcome == 1
                all_lose &= outcome == -1
                any_proven |= outcome != 0
            else:
                edge.prior = minus_inf
                edge_proven[slot, node, a] = 0
        record = nodes[slot, node]
        record.top_count = -1                                           # top_actions built at the first visit
        record.expanded = True
        record.edges_proven = any_proven
        result[k] = 1 if wins else (-1 if (all_lose and not no_outcomes) else 0)
        record.proven = result[k]
    return result
