"""Storage for a batch of search trees: preallocated arrays, tree ("slot") index first, node index second;
no Python object per node.

    nodes  [B, N]  NODE_DTYPE (32 bytes, one cache line holds two): one node's record
        visits          int32    visits of the node (real + virtual)
        value_sum       float32  sum of backed-up values, from the node's OWN side to move
        parent          int32    parent node index (NO_PARENT for the root)
        prior           float32  the edge's prior P(parent, action), a copy of prior[parent, action] (kept with the
                                 child so that selection's walk of a child list reads no [A] row; the root's
                                 children are refreshed when its priors are re-noised, `set_root_prior`; 0 for a root)
        first_child     int32    the most recently created child (NO_CHILD if none); with
        next_sibling    int32    the next older sibling: a list of each node's created children
        action          int16    action that led here (NO_ACTION for the root)
        expanded        bool     evaluated, priors known (never set for terminal nodes)
        terminal        bool     the node's position is finished
        terminal_value  int8     exact result of a terminal node, from its side to move (-1, 0, +1 per Game)
        proven          int8     solver result for the node's side to move: +1 proven win, -1 proven loss,
                                 0 unknown (draws are never "proven": see shared.search.backup)
        top_count       int8     entries of top_actions in use; -1: stale (a root whose priors were re-noised:
                                 selection ranks them again at its next visit)
        edges_proven    bool     some entry of the node's edge_proven row is not 0
    prior              [B, N, A]  float32  policy prior; ILLEGAL actions hold -inf
    children           [B, N, A]  int32    child node index, UNVISITED when the edge was never taken
    edge_proven        [B, N, A]  int8     solver result of playing the action, for the NODE's side to move: +1 wins,
                                           -1 loses, 0 unknown. Known before the child exists when the game's
                                           `move_outcomes` says so; else = -proven[child] (sign flip: the child's
                                           side to move is the opponent)
    top_actions        [B, N, K]  int16    K legal actions with the highest priors, by prior descending and action
                                           ascending, among those not created when the list was last ranked
                                           (K = top_k(A), 0 in games of few actions); an entry becomes TAKEN once
                                           selection creates its child; see `shared.search.puct`
    top_prior          [B, N, K]  float32  the priors of those actions (so that selection reads no [A] row for them)
    node_states        [B, N, S]  int16    the node's position
    num_nodes          [B]        int32    nodes in use, which are always the indices 0..num_nodes - 1 (new nodes are
                                           taken at num_nodes, see `allocate_node`; a tree advance renumbers the
                                           kept nodes, see shared.search.reuse)
    root_prior_clean   [B, A]     float32  the root's prior before Dirichlet noise (re-noised at each search)
    valid              [B]        bool     the slot holds an expanded root that a search may reuse

An edge's statistics are its child's: N(s, a) = visits and W(s, a) = value_sum of children[s, a] (0 and 0 when
UNVISITED). `children_visits` and `children_value_sum` compute them as [B, N, A] float32 arrays for tests and
diagnostics. A node field is read and written under its one name, in the kernels as `nodes[slot, node].visits`
and in numpy code as `nodes["visits"][slots, node_ids]`. Rows are initialised lazily (a node's record when it
is created, its [A] rows when it is expanded: a terminal node never gets any), so resetting a tree is O(1): set
num_nodes and valid.
The expansion kernels below are the "expand" step of a search; selection lives in `shared.search.puct`, backup
in `shared.search.backup`.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.search.jit import borrowing_kernel, f32, inline, prefetch_line

ROOT = 0
NO_PARENT = -1
UNVISITED = -1
NO_ACTION = -1
NO_CHILD = -1
#: A top_actions entry whose child has been created since the list was ranked.
TAKEN = -1
#: Most actions a tree can hold (the node record keeps an action as int16).
MAX_ACTIONS = 32767


#: Games with at most this many actions choose by one pass over a node's [A] rows (shared.search.puct.scan_row)
#: and keep no top_actions; measured faster for Connect Four (7), slower for 8x8 Gomoku (64).
ROW_SCAN_ACTIONS = 16


def top_k(num_actions: int) -> int:
    """How many best-prior actions each node keeps ranked for selection: none in games of up to ROW_SCAN_ACTIONS
    actions (selection scans the rows), else 4 (the ranking cost per expanded node grows with K; a node whose list
    runs out ranks its row again)."""
    return 0 if num_actions <= ROW_SCAN_ACTIONS else 4


NODE_DTYPE = np.dtype([("visits", np.int32), ("value_sum", np.float32), ("parent", np.int32), ("prior", np.float32),
                       ("first_child", np.int32), ("next_sibling", np.int32), ("action", np.int16),
                       ("expanded", np.bool_), ("terminal", np.bool_), ("terminal_value", np.int8), ("proven", np.int8),
                       ("top_count", np.int8), ("edges_proven", np.bool_)], align=True)
assert NODE_DTYPE.itemsize == 32


class TreeStorage:
    """Preallocated arrays for `num_slots` trees of `capacity` nodes, `num_actions` actions, states of `state_size`."""

    def __init__(self, num_slots: int, capacity: int, num_actions: int, state_size: int) -> None:
        if not 1 <= num_actions <= MAX_ACTIONS:
            raise ValueError(f"TreeStorage: {num_actions} actions; a tree holds 1 to {MAX_ACTIONS}")
        self.num_slots, self.capacity, self.num_actions = num_slots, capacity, num_actions
        self.nodes = np.zeros((num_slots, capacity), NODE_DTYPE)
        # The [A] rows are written when a node is expanded (children starts all UNVISITED so that the diagnostic
        # views below never index out of range).
        self.prior = np.empty((num_slots, capacity, num_actions), np.float32)
        self.children = np.full((num_slots, capacity, num_actions), UNVISITED, np.int32)
        self.edge_proven = np.empty((num_slots, capacity, num_actions), np.int8)
        self.top_actions = np.empty((num_slots, capacity, top_k(num_actions)), np.int16)
        self.top_prior = np.empty((num_slots, capacity, top_k(num_actions)), np.float32)
        self.node_states = np.empty((num_slots, capacity, state_size), np.int16)
        self.num_nodes = np.zeros(num_slots, np.int32)
        self.root_prior_clean = np.zeros((num_slots, num_actions), np.float32)
        self.valid = np.zeros(num_slots, bool)
        #: the prior array's bits (the same memory): the ranking of top actions compares them as integers
        self.prior_bits = self.prior.view(np.int32)

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """(nodes, children, prior, edge_proven, top_actions, top_prior, num_nodes): the arrays the kernels work
        on."""
        return (self.nodes, self.children, self.prior, self.edge_proven, self.top_actions, self.top_prior,
                self.num_nodes)

    def nodes_in_use(self, slot: int) -> np.ndarray:
        """The nodes of one tree, breadth first from the root (children in action order): [M] int64."""
        if self.num_nodes[slot] == 0:
            return np.zeros(0, np.int64)
        order, i = [ROOT], 0
        while i < len(order):
            if self.nodes["expanded"][slot, order[i]]:
                kids = self.children[slot, order[i]]
                order.extend(int(kid) for kid in kids[kids != UNVISITED])
            i += 1
        return np.array(order, np.int64)

    def _child_field(self, field: str) -> np.ndarray:
        kids = self.children
        slots = np.arange(self.num_slots)[:, None, None]
        values = self.nodes[field][slots, np.maximum(kids, 0)]
        return np.where(kids != UNVISITED, values, 0).astype(np.float32)

    @property
    def children_visits(self) -> np.ndarray:
        """N(s, a) for every edge: [B, N, A] float32, the child's visits (0 when UNVISITED). A computed copy, for
        tests and diagnostics (meaningful on expanded nodes)."""
        return self._child_field("visits")

    @property
    def children_value_sum(self) -> np.ndarray:
        """W(s, a) for every edge: [B, N, A] float32, the child's value_sum, from the CHILD's side to move."""
        return self._child_field("value_sum")

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
        self.children[slots, ROOT] = UNVISITED
        self.edge_proven[slots, ROOT] = 0
        self.node_states[slots, ROOT] = states
        self.num_nodes[slots] = 1
        self.valid[slots] = False

    def states_of(self, slots: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """The positions of (slots, nodes) [K]: [K, S] int16 (a new array)."""
        slots = np.ascontiguousarray(slots, np.int64)
        out = np.empty((slots.shape[0], self.node_states.shape[2]), np.int16)
        _gather_states(slots, np.ascontiguousarray(nodes, np.int64), self.node_states, out)
        return out

    def play_leaves(self, game: Game, slots: np.ndarray, parents: np.ndarray, nodes: np.ndarray, actions: np.ndarray,
                    solver: bool) -> tuple[np.ndarray, np.ndarray]:
        """Compute the positions of new nodes: slots, parents, nodes, actions [K]; node k's position is its parent's
        after actions[k] (`game.step_stored`, written in place). Marks the terminal ones; with the solver a decided
        terminal node is proven: sign of its value. Returns (terminal [K] bool, terminal_value [K] float32, for
        the new node's side to move)."""
        slots = np.ascontiguousarray(slots, np.int64)
        nodes = np.ascontiguousarray(nodes, np.int64)
        terminal, terminal_value = game.step_stored(self.node_states, slots, np.ascontiguousarray(parents, np.int64),
                                                    nodes, np.ascontiguousarray(actions, np.int64))
        _mark_leaves(slots, nodes, np.ascontiguousarray(terminal, np.bool_),
                     np.ascontiguousarray(terminal_value, np.float32), solver, self.nodes)
        return terminal, terminal_value

    def expand(self, slots: np.ndarray, nodes: np.ndarray, logits: np.ndarray, legal: np.ndarray,
               outcomes: np.ndarray | None) -> np.ndarray:
        """Mark nodes expanded: slots, nodes [K]; logits [K, A] float32 -> priors = masked_softmax(logits, legal)
        (bit for bit the numpy function of shared.search.priors, fused; illegal actions stored as -inf); with the
        solver, the game's move outcomes [K, A] int8 (+1 wins at once, -1 lets the opponent win at once, for the
        node's side to move) become edge results and may prove the node.

        Returns proven [K] int8, each node's solver result for its side to move (0 without outcomes).
        """
        slots = np.ascontiguousarray(slots, np.int64)
        nodes = np.ascontiguousarray(nodes, np.int64)
        legal = np.ascontiguousarray(legal, bool)
        logits = np.ascontiguousarray(logits, np.float32)
        shifted, no_mass = np.empty(logits.shape, np.float32), np.zeros(logits.shape[0], np.bool_)
        _softmax_shift(logits, legal, shifted, no_mass)
        weights = np.exp(shifted, out=shifted)                       # the same numpy exp as masked_softmax
        if no_mass.any():
            weights[no_mass] = legal[no_mass]                         # no mass: uniform over legal actions
        no_outcomes = outcomes is None
        if no_outcomes:
            outcomes = np.zeros((1, 1), np.int8)
        proven = np.zeros(slots.shape[0], np.int8)
        _expand_nodes(slots, nodes, weights, legal, outcomes, no_outcomes, self.nodes, self.children, self.prior,
                      self.prior_bits, self.edge_proven, self.top_actions, self.top_prior, proven,
                      *_pairwise_scratch())
        return proven

    def set_root_prior(self, slots: np.ndarray, prior: np.ndarray) -> None:
        """Use prior [K, A] float32 (-inf for illegal actions) at the roots of `slots` [K] (root noise): the roots'
        prior rows, the copies in their created children's records, and their top_actions marked stale (selection
        ranks them again at its next visit)."""
        self.prior[slots, ROOT] = prior
        kids = self.children[slots, ROOT]                                # [K, A]
        rows, actions = np.nonzero(kids != UNVISITED)
        self.nodes["prior"][slots[rows], kids[rows, actions]] = prior[rows, actions]
        self.nodes["top_count"][slots, ROOT] = -1

    def root_statistics(self, slots: np.ndarray) -> tuple[np.ndarray, ...]:
        """Root statistics of the trees of `slots` [K], in one compiled pass: (visits [K, A] float32, the root
        children's visit counts; q [K, A] float32, their mean values from the ROOT player's view, 0 when unvisited;
        prior [K, A] float32, the root prior in use with 0 for illegal actions; proven [K, A] int8, the roots' edge
        results, 0 for illegal actions; root_value [K] float32, the root's mean value for its side to move;
        proven_value [K] int8, the roots' solver results)."""
        count, num_actions = slots.shape[0], self.num_actions
        visits, q = np.zeros((count, num_actions), np.float32), np.zeros((count, num_actions), np.float32)
        prior, proven = np.zeros((count, num_actions), np.float32), np.zeros((count, num_actions), np.int8)
        root_value, proven_value = np.empty(count, np.float32), np.empty(count, np.int8)
        _root_statistics(np.ascontiguousarray(slots, np.int64), self.nodes, self.children, self.prior,
                         self.edge_proven, visits, q, prior, proven, root_value, proven_value)
        return visits, q, prior, proven, root_value, proven_value

    def root_prior(self, slots: np.ndarray) -> np.ndarray:
        """The prior in use at the roots of `slots`: [K, A] float32 with 0 for illegal actions."""
        prior = self.prior[slots, ROOT]
        return np.where(np.isfinite(prior), prior, np.float32(0.0))


@borrowing_kernel
def _gather_states(slots, node_ids, node_states, out):
    for k in range(slots.shape[0]):
        slot, node = slots[k], node_ids[k]
        for i in range(node_states.shape[2]):                          # element loop: no array views per row
            out[k, i] = node_states[slot, node, i]


@borrowing_kernel
def _root_statistics(slots, nodes, children, prior, edge_proven, visits, q, root_prior, proven, root_value,
                     proven_value):
    """Fill the outputs of `TreeStorage.root_statistics` (all zeros on entry but root_value, proven_value)."""
    for k in range(slots.shape[0]):
        slot = slots[k]
        for a in range(children.shape[2]):
            p = prior[slot, ROOT, a]
            if p == f32(-np.inf):
                continue                                                # illegal: zeros
            root_prior[k, a] = p
            proven[k, a] = edge_proven[slot, ROOT, a]
            child = children[slot, ROOT, a]
            if child != UNVISITED and nodes[slot, child].visits > 0:
                kid = nodes[slot, child]
                n = f32(kid.visits)
                visits[k, a] = n
                # Sign flip: the child's value sum is from the child's side to move, Q from the root player's.
                q[k, a] = -kid.value_sum / n
        root = nodes[slot, ROOT]
        root_value[k] = root.value_sum / f32(root.visits)
        proven_value[k] = root.proven


@borrowing_kernel
def _mark_leaves(slots, node_ids, terminal, terminal_value, solver, nodes):
    for k in range(slots.shape[0]):
        record = nodes[slots[k], node_ids[k]]
        record.terminal = terminal[k]
        record.terminal_value = np.int8(terminal_value[k])             # -1, 0 or +1 (Game.terminal_value)
        if solver:
            # A decided terminal node is proven: its exact result, for its side to move (draws stay 0).
            record.proven = np.int8(np.sign(terminal_value[k]))


@borrowing_kernel
def _softmax_shift(logits, legal, shifted, no_mass):
    """First half of masked_softmax: logits [K, A] float32 with NaN -> -inf and +inf -> the largest float32,
    illegal -> -inf, minus each row's maximum (0 when the row has no finite maximum), into shifted [K, A]
    float32; no_mass [K] bool (False on entry) marks the rows without a finite maximum."""
    count, num_actions = logits.shape
    minus_inf, big = f32(-np.inf), f32(np.finfo(np.float32).max)
    for k in range(count):
        row, out = logits[k], shifted[k]
        for a in range(num_actions):                                    # branch-free, so it vectorises
            x = row[a]
            keep = legal[k, a] and x == x                               # x == x: not NaN
            out[a] = min(x, big) if keep else minus_inf
        row_max = minus_inf
        for a in range(num_actions):
            row_max = max(row_max, out[a])
        if row_max == minus_inf:
            no_mass[k] = True                                           # no finite maximum: shift by 0
        else:
            for a in range(num_actions):
                out[a] -= row_max


#: The low 16 bits of a ranking key hold RANK_ACTION_BASE - action, so that among equal priors the lower action
#: ranks first (actions are below MAX_ACTIONS).
RANK_ACTION_BASE = MAX_ACTIONS


@inline
def rank_top_actions(slot, node, nodes, children, prior, prior_bits, top_actions, top_prior):
    """(Re)rank top_actions[slot, node] and their top_prior: the K legal actions with the highest priors (prior
    descending, action ascending) among those whose child is not created yet; sets the node's top_count.
    prior_bits [B, N, A] int32: the prior array's bits (the same memory viewed as int32).

    Each action has a unique int64 key, its prior's bits above RANK_ACTION_BASE - action (the bits of non-negative
    float32 numbers order as the numbers do; an illegal action's -inf has the sign bit set: a negative key). K
    passes over the row each take the largest key below the previous pass's: branch-free integer maxima, which
    vectorise. (The same helper is in shared.search.puct: kernels only call helpers of their own module, see
    shared.search.jit.)"""
    below = np.int64(0x7FFFFFFFFFFFFFFF)
    ranked = 0
    for j in range(top_actions.shape[2]):
        best = np.int64(-1)
        for a in range(prior.shape[2]):
            key = (np.int64(prior_bits[slot, node, a]) << 16) | np.int64(RANK_ACTION_BASE - a)
            eligible = key < below and children[slot, node, a] == UNVISITED
            best = max(best, key if eligible else np.int64(-1))
        if best < 0:
            break                                                       # no legal, uncreated action left
        action = RANK_ACTION_BASE - (best & 0xFFFF)
        top_actions[slot, node, j] = action
        top_prior[slot, node, j] = prior[slot, node, action]
        below = best
        ranked += 1
    nodes[slot, node].top_count = ranked


#: Rows longer than this are summed in halves, as numpy's pairwise summation does.
PAIRWISE_BLOCK = 128


def _pairwise_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch of `pairwise_sum`: (spans [64, 2] int64, span_done [64] bool, sums [64] float32); the stacks grow by
    about one entry per halving, so 64 is far more than rows of MAX_ACTIONS need."""
    return np.empty((64, 2), np.int64), np.empty(64, np.bool_), np.empty(64, np.float32)


@inline
def block_sum(row, start, length):
    """numpy's float32 sum of row[start:start + length], length <= PAIRWISE_BLOCK: sequential below 8 elements,
    else 8 running sums (elements i, i + 8, ...) added pairwise, then the last length % 8 elements in order."""
    if length < 8:
        total = f32(0.0)
        for i in range(length):
            total += row[start + i]
        return total
    r0, r1, r2, r3 = row[start], row[start + 1], row[start + 2], row[start + 3]
    r4, r5, r6, r7 = row[start + 4], row[start + 5], row[start + 6], row[start + 7]
    stop = start + length - length % 8
    for i in range(start + 8, stop, 8):
        r0 += row[i]
        r1 += row[i + 1]
        r2 += row[i + 2]
        r3 += row[i + 3]
        r4 += row[i + 4]
        r5 += row[i + 5]
        r6 += row[i + 6]
        r7 += row[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(stop, start + length):
        total += row[i]
    return total


@inline
def pairwise_sum(row, spans, span_done, sums):
    """The sum of a float32 row [A] exactly as numpy's `row.sum()` (and `weights.sum(axis=1)` of a contiguous
    array) computes it, bit for bit: 0 plus the pairwise sum, a row longer than PAIRWISE_BLOCK split into a first
    part of n // 2 rounded down to a multiple of 8 and the rest, each summed the same way, then added. The
    recursion runs on an explicit stack: spans [D, 2] int64 (start, length), span_done [D] bool (both halves
    pushed), sums [D] float32 (the finished parts, in order)."""
    length = row.shape[0]
    if length <= PAIRWISE_BLOCK:
        return f32(0.0) + block_sum(row, 0, length)
    depth, finished = 1, 0
    spans[0, 0], spans[0, 1], span_done[0] = 0, length, False
    while depth > 0:
        start, size = spans[depth - 1, 0], spans[depth - 1, 1]
        if size <= PAIRWISE_BLOCK:
            depth -= 1
            sums[finished] = block_sum(row, start, size)
            finished += 1
        elif span_done[depth - 1]:
            depth -= 1
            finished -= 1
            sums[finished - 1] = sums[finished - 1] + sums[finished]   # first part + second part
        else:
            span_done[depth - 1] = True
            half = size // 2
            half -= half % 8
            spans[depth, 0], spans[depth, 1], span_done[depth] = start + half, size - half, False
            spans[depth + 1, 0], spans[depth + 1, 1], span_done[depth + 1] = start, half, False
            depth += 2                                                  # the first part on top: summed first
    return f32(0.0) + sums[0]


#: How many nodes ahead the expansion starts loading the rows it will write.
EXPAND_AHEAD = 4


@inline
def prefetch_row(array, slot, node):
    """Start loading the cache lines of array[slot, node] (a row of a [B, N, ...] array). (The same helper is in
    shared.search.puct: kernels only call helpers of their own module.)"""
    start = slot * array.strides[0] + node * array.strides[1]
    for offset in range(start - start % 64, start + array.strides[1], 64):
        prefetch_line(array, offset)


@borrowing_kernel
def _expand_nodes(slots, node_ids, weights, legal, outcomes, no_outcomes, nodes, children, prior, prior_bits,
                  edge_proven, top_actions, top_prior, result, spans, span_done, sums):
    """Last step of masked_softmax (weights [K, A] float32 = exp(shifted), divided by their row sums), written into
    the prior rows (-inf where illegal), plus the top actions and solver edge results; prove nodes (a winning
    move: +1; every legal move losing: -1) into result [K] int8. prior_bits: the prior array viewed as int32;
    spans, span_done, sums: scratch of `pairwise_sum`.
    """
    count, num_actions = weights.shape
    minus_inf = f32(-np.inf)
    for k in range(count):
        slot, node = slots[k], node_ids[k]
        if k + EXPAND_AHEAD < count:                                    # rows written EXPAND_AHEAD nodes later
            prefetch_row(prior, slots[k + EXPAND_AHEAD], node_ids[k + EXPAND_AHEAD])
            prefetch_row(children, slots[k + EXPAND_AHEAD], node_ids[k + EXPAND_AHEAD])
            prefetch_row(edge_proven, slots[k + EXPAND_AHEAD], node_ids[k + EXPAND_AHEAD])
        total = max(pairwise_sum(weights[k], spans, span_done, sums), f32(1e-30))
        # Separate simple passes over the rows (element loops, no array views, no branches: they vectorise; the
        # node is expanded once, childless).
        for a in range(num_actions):
            prior[slot, node, a] = weights[k, a] / total if legal[k, a] else minus_inf
        for a in range(num_actions):
            children[slot, node, a] = UNVISITED
        wins, all_lose, any_proven = False, False, False
        if no_outcomes:
            for a in range(num_actions):
                edge_proven[slot, node, a] = 0
        else:
            # Counts and a multiply by the legal mask rather than and/or chains and selects (those do not
            # vectorise).
            winning, losing_or_illegal, known = 0, 0, 0
            for a in range(num_actions):
                is_legal = legal[k, a]
                outcome = outcomes[k, a] * np.int8(is_legal)
                edge_proven[slot, node, a] = outcome
                winning += outcome == 1
                losing_or_illegal += (outcome == -1) | (not is_legal)
                known += outcome != 0
            wins, all_lose, any_proven = winning > 0, losing_or_illegal == num_actions, known > 0
        rank_top_actions(slot, node, nodes, children, prior, prior_bits, top_actions, top_prior)   # none if K = 0
        record = nodes[slot, node]
        record.expanded = True
        record.edges_proven = any_proven
        result[k] = 1 if wins else (-1 if all_lose else 0)
        record.proven = result[k]
