"""PUCT selection: one compiled pass descends every searched tree from its root to a leaf edge.

Score of action a at node s (from the point of view of the player to move at s):

    score(s, a) = Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))

N(s) is the node's own visit count (it includes the visit of its first evaluation, so it is >= 1 and the prior
orders the first choices); N(s, a) and W(s, a) are the child's own visits and value sum (read from its node
record). Q(s, a) = -W(child) / N(child): a child's value sum W is stored from the CHILD's side to move, and the
child's mover is the opponent of s's mover, hence the minus sign. An unvisited child gets
first-play urgency Q_fpu = clip(W(s) / N(s) - fpu_reduction, -1, 1): the node's own mean value (s's own view,
no flip) minus a reduction. The root uses the same rule, with or without noise. Illegal actions hold a prior of
-inf and are never chosen. Exact ties go to the lowest action index. The kernel evaluates the score in float32
in exactly the order of the former numpy formula (u = P / (1 + N(s, a)) * (c_puct * sqrt(N(s))); score = u - (-Q)),
so results match the recursive reference search bit for bit.

Games of few actions (tree.ROW_SCAN_ACTIONS, e.g. Connect Four) keep no lists: one pass over the node's [A] rows
(`scan_row`) scores every legal action, created or not, in action order. Larger games read no [A] row on the
common path: a node's created children are walked through its child list (each child's record holds its visits,
value sum and its copy of P(s, a)), and among the children not created yet (W = 0, N = 0) the score
P * c - (0 - Q_fpu) only grows with P, so the best of them is found by walking the node's top_actions and their
top_prior (prior descending, action ascending) until a score drops below the first one (all tied actions are
seen; the lowest index wins). The list is ranked when the node is expanded (and at a root's first visit after
its priors were re-noised); an entry is marked TAKEN when its child is created, and the list is rebuilt from the
rows when its K actions run out (taken, or lost or tied: at most once per K new children of a node); only if that
does not settle it either is the whole row scanned.

Solver rules (SearchConfig.solver, see `shared.search.backup` for how results are proven): at a node whose
mover has a proven winning action, that action is taken at once (the lowest such index); actions proven to
lose for the mover are skipped unless every legal action is proven lost. A path also stops at a proven node
(its value is exact), as it does at a terminal one.

Forced root actions (the Gumbel root, shared.search.gumbel): `select_leaves(..., forced=)` gives each tree a
root action to take instead of the PUCT choice (-1 = PUCT); only the root's choice changes, the rest of the
path (virtual loss, creating the child, the solver's stops below the root) is as above.

Virtual loss: every node below the root on a path gets one extra visit and `virtual_loss` added to its value sum
(the node's own view: a win for its mover is a loss for the player who chose it), and the root one extra visit;
each node gets them as the descent leaves it (once its own statistics were read), the leaf when it is reached,
so a path never sees its own virtual loss. The next selection of the same step then prefers other paths. Backup
(`shared.search.backup`) replaces each virtual visit by the real one. With leaves_per_step = 1 the search is
therefore exactly sequential PUCT.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.search.jit import borrowing_kernel, f32, inline, prefetch_line
from shared.search.tree import NO_CHILD, RANK_ACTION_BASE, ROOT, TAKEN, UNVISITED, TreeStorage

#: Kinds of leaf a path can end on.
LEAF_NEW, LEAF_TERMINAL, LEAF_PROVEN, LEAF_PENDING = 0, 1, 2, 3
#: Trees a selection descends together (see _select_kernel), and the most nodes in use of a tree it loads whole
#: first (measured: a help up to 2 x 128 simulations on gomoku-8x8-5, a loss at 2 x 400).
GROUP, TOUCH_NODES = 64, 256
#: The largest [A] row (prior, children) of a new leaf that selection prefetches (see prefetch_leaf_rows).
PREFETCH_ROW_BYTES = 256


@dataclass
class Selection:
    """One leaf per searched tree (arrays [R], row r = slots[r]).

    leaf_parent, leaf_action [R] int64: the last edge of each path; leaf_child [R] int64 its child node (created
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
                  virtual_loss: float, solver: bool, forced: np.ndarray | None = None) -> Selection:
    """Descend every tree in `slots` [R] (distinct) to a leaf edge, create the new children and add virtual loss.

    forced [R] int32 (None = all -1): the root action row r's path takes, -1 = the PUCT choice at the root (the
    Gumbel root's sequential halving sets it, see shared.search.gumbel); below the root PUCT always chooses.
    A path stops at the first edge whose child is UNVISITED (the child is created, unexpanded), terminal, proven,
    or created earlier in the same step but not yet evaluated (a collision).
    """
    count = slots.shape[0]
    sel = Selection(np.empty(count, np.int64), np.empty(count, np.int64), np.empty(count, np.int64),
                    np.empty(count, np.int8), np.zeros(count, np.float32))
    if forced is None:
        forced = np.full(count, -1, np.int32)
    _select_kernel(np.ascontiguousarray(slots, np.int64), f32(c_puct), f32(fpu_reduction), f32(virtual_loss),
                   solver, np.ascontiguousarray(forced, np.int32), *tree.kernel_arrays(), sel.leaf_parent,
                   sel.leaf_action, sel.leaf_child, sel.leaf_kind, sel.leaf_value, np.empty(count, np.int64),
                   np.empty(count, np.int32), tree.prior_bits, tree.node_states)
    return sel


@inline
def allocate_node(slot, num_nodes):
    """A new node index of tree `slot`: the first unused one (the nodes in use are 0..num_nodes - 1, see
    shared.search.tree)."""
    node = num_nodes[slot]
    num_nodes[slot] = node + 1
    return node


@inline
def init_node(slot, node, parent, action, edge_prior, nodes):
    """Write a fresh, unvisited, unexpanded, non-terminal node without children, reached from `parent` by `action`
    whose prior is `edge_prior`. Its [A] rows (priors, children, solver results) and top actions are written when
    it is expanded; a terminal node never gets any."""
    record = nodes[slot, node]
    record.visits = 0
    record.value_sum = f32(0.0)
    record.parent = parent
    record.prior = edge_prior
    record.action = action
    record.first_child = NO_CHILD
    record.next_sibling = NO_CHILD
    record.expanded = False
    record.terminal = False
    record.terminal_value = 0
    record.proven = 0
    record.top_count = 0
    record.edges_proven = False


@inline
def rank_top_actions(slot, node, nodes, children, prior, prior_bits, top_actions, top_prior):
    """(Re)rank top_actions[slot, node] and their top_prior: the K legal actions with the highest priors (prior
    descending, action ascending) among those whose child is not created yet; sets the node's top_count.
    prior_bits [B, N, A] int32: the prior array's bits (the same memory viewed as int32).

    Each action has a unique int64 key, its prior's bits above RANK_ACTION_BASE - action (the bits of non-negative
    float32 numbers order as the numbers do; an illegal action's -inf has the sign bit set: a negative key). K
    passes over the row each take the largest key below the previous pass's: branch-free integer maxima, which
    vectorise. (The same helper is in shared.search.tree: kernels only call helpers of their own module, see
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


@inline
def scan_row(slot, node, scale, fpu, skip_lost, nodes, children, prior, edge_proven):
    """The best PUCT score of a node found by one pass over its whole [A] row (games of few actions): -> action.

    The same scores as `best_action`'s two lists, in action order, so the first best is the lowest index."""
    best, best_score = -1, f32(-np.inf)
    for a in range(prior.shape[2]):
        p = prior[slot, node, a]
        if p == f32(-np.inf) or (skip_lost and edge_proven[slot, node, a] == -1):
            continue                                                     # illegal, or proven lost
        child = children[slot, node, a]
        if child == UNVISITED:
            score = p * scale - (f32(0.0) - fpu)
        else:
            kid = nodes[slot, child]
            n = f32(kid.visits)
            score = p / (n + f32(1.0)) * scale - kid.value_sum / n      # -Q(s, a): sign flip, see best_action
        if score > best_score:
            best, best_score = a, score
    return best


@inline
def best_action(slot, node, c_puct, fpu_reduction, solver, nodes, children, prior, edge_proven, top_actions,
                top_prior, prior_bits):
    """The PUCT choice at an expanded node under the solver rules of the module docstring: -> (action, its child
    node, UNVISITED when not created yet). prior_bits: the prior array viewed as int32 (to re-rank the node's list)."""
    record = nodes[slot, node]
    if solver and record.proven == 1:
        for a in range(prior.shape[2]):
            if edge_proven[slot, node, a] == 1:
                return a, children[slot, node, a]                       # take a proven win at once
    skip_lost = solver and record.proven != -1 and record.edges_proven
    parent_n = f32(record.visits)
    parent_q = record.value_sum / parent_n                               # node's own view (no flip)
    fpu = min(max(parent_q - fpu_reduction, f32(-1.0)), f32(1.0))
    scale = c_puct * f32(np.sqrt(parent_n))
    if top_actions.shape[2] == 0:                                        # few actions: no lists (tree.top_k)
        a = scan_row(slot, node, scale, fpu, skip_lost, nodes, children, prior, edge_proven)
        return a, children[slot, node, a]
    # Created children (N >= 1: a created child always holds its first, possibly virtual, visit).
    best, best_child, best_score = -1, UNVISITED, f32(-np.inf)
    child = record.first_child
    while child != NO_CHILD:
        kid = nodes[slot, child]
        a = kid.action
        if not (skip_lost and edge_proven[slot, node, a] == -1):
            n = f32(kid.visits)
            # -Q(s, a): the child's mean from the CHILD's view is minus the chooser's Q (sign flip); P(s, a) is the
            # child's copy of the prior.
            score = kid.prior / (n + f32(1.0)) * scale - kid.value_sum / n
            if score > best_score or (score == best_score and a < best):
                best, best_child, best_score = a, child, score
        child = kid.next_sibling
    # Children not created yet: P / (0 + 1) is exactly P and -Q_fpu = W - fpu with W = 0.
    fresh, fresh_score = -1, f32(-np.inf)
    if record.top_count < 0:
        # A root re-noised: rank its list again.
        rank_top_actions(slot, node, nodes, children, prior, prior_bits, top_actions, top_prior)
    for attempt in range(2):
        fresh, fresh_score, complete = -1, f32(-np.inf), False
        listed = record.top_count
        for j in range(listed):
            a = np.int64(top_actions[slot, node, j])
            if a == TAKEN or (skip_lost and edge_proven[slot, node, a] == -1):
                continue                                                 # created since ranked, or proven lost
            score = top_prior[slot, node, j] * scale - (f32(0.0) - fpu)
            if fresh == -1 or score > fresh_score:
                fresh, fresh_score = a, score
            elif score == fresh_score:
                fresh = min(fresh, a)
            else:
                complete = True                                          # lower from here on: no more ties
                break
        if complete or listed < top_actions.shape[2]:
            break                                                        # every candidate was seen
        if attempt == 0:
            # The list ran out (its actions were created, lost, or tied): rank the row again once...
            rank_top_actions(slot, node, nodes, children, prior, prior_bits, top_actions, top_prior)
        else:
            # ... and if that does not settle it either (many lost or tied actions), scan the whole row.
            fresh, fresh_score = -1, f32(-np.inf)
            for a in range(prior.shape[2]):
                if prior[slot, node, a] == f32(-np.inf) or children[slot, node, a] != UNVISITED:
                    continue
                if skip_lost and edge_proven[slot, node, a] == -1:
                    continue
                score = prior[slot, node, a] * scale - (f32(0.0) - fpu)
                if score > fresh_score:
                    fresh, fresh_score = a, score
    if fresh != -1 and (fresh_score > best_score or (fresh_score == best_score and fresh < best) or best == -1):
        return fresh, UNVISITED                                          # listed and not TAKEN: not created
    return best, best_child


@inline
def touch_tree(slot, nodes, top_actions, top_prior, num_nodes):
    """Load every cache line of a small tree's node records and top-action lists (at most TOUCH_NODES nodes in
    use; 0 for a larger one) in one loop of independent loads: -> a sum of what was read (so the loads stay)."""
    used = num_nodes[slot]
    touched = f32(0.0)
    if used > TOUCH_NODES:
        return touched
    for n in range(0, used, 2):                                          # two 32-byte records a line
        touched += f32(nodes[slot, n].visits)
    if top_actions.shape[2] > 0:
        for n in range(0, used, max(1, 32 // top_actions.shape[2])):
            touched += f32(top_actions[slot, n, 0])
        for n in range(0, used, max(1, 16 // top_actions.shape[2])):
            touched += top_prior[slot, n, 0]
    return touched


@inline
def descend_group(start, stop, slots, c_puct, fpu_reduction, virtual_loss, solver, forced, nodes, children, prior,
                  edge_proven, top_actions, top_prior, num_nodes, leaf_parent, leaf_action, leaf_child, leaf_kind,
                  leaf_value, rows, at, prior_bits, node_states):
    """Descend the trees of rows start..stop-1 level by level, over the trees still descending (their loads
    overlap), each to its leaf edge, creating the new children and adding the virtual loss: fills the leaf_*
    outputs of those rows. rows [R] int64 and at [R] int32: scratch for the trees still descending and their
    current nodes; node_states: the tree's positions, only prefetched here; forced [R] int32: a root action to take
    instead of the PUCT choice (-1 = none). -> a sum of what the touches read."""
    touched = f32(0.0)
    count = stop - start
    for i in range(count):
        rows[i], at[i] = start + i, 0                                    # every path starts at the root
    while count > 0:
        for i in range(count):
            # First touch what this level reads and is not loaded yet (the node of a tree too large for
            # touch_tree, the rows scan_row reads), in a tight loop of independent loads.
            slot, node = slots[rows[i]], at[i]
            if num_nodes[slot] > TOUCH_NODES:
                touched += f32(nodes[slot, node].visits)
            if top_actions.shape[2] == 0:
                touched += prior[slot, node, 0] + f32(children[slot, node, 0])
        still = 0
        for i in range(count):
            r, node = rows[i], at[i]
            slot = slots[r]
            if node == ROOT and forced[r] >= 0:
                action = np.int64(forced[r])
                child = children[slot, node, action]
            else:
                action, child = best_action(slot, node, c_puct, fpu_reduction, solver, nodes, children, prior,
                                            edge_proven, top_actions, top_prior, prior_bits)
            add_virtual_loss(slot, node, virtual_loss, nodes)            # the node's statistics were read
            if child == UNVISITED:
                kind = LEAF_NEW
                child = allocate_node(slot, num_nodes)                   # capacity was checked by the caller
                init_node(slot, child, node, action, prior[slot, node, action], nodes)
                children[slot, node, action] = child
                for j in range(nodes[slot, node].top_count):             # its top_actions entry is taken
                    if top_actions[slot, node, j] == action:
                        top_actions[slot, node, j] = TAKEN
                nodes[slot, child].next_sibling = nodes[slot, node].first_child   # push onto the child list
                nodes[slot, node].first_child = child
                prefetch_leaf_rows(slot, node, child, node_states, prior, children, edge_proven)
            else:
                kid = nodes[slot, child]
                if kid.terminal:
                    kind = LEAF_TERMINAL
                    leaf_value[r] = f32(kid.terminal_value)              # leaf's side to move
                elif kid.proven != 0:
                    kind = LEAF_PROVEN
                    leaf_value[r] = f32(kid.proven)                      # exact: +1 won, -1 lost
                elif not kid.expanded:
                    kind = LEAF_PENDING
                else:
                    rows[still], at[still] = r, child                    # descend further at the next level
                    still += 1
                    continue
            add_virtual_loss(slot, child, virtual_loss, nodes)
            leaf_parent[r], leaf_action[r], leaf_child[r], leaf_kind[r] = node, action, child, kind
        count = still
    return touched


@inline
def prefetch_row(array, slot, node):
    """Start loading the cache lines of array[slot, node] (a row of a [B, N, ...] array). (The same helper is in
    shared.search.tree: kernels only call helpers of their own module.)"""
    start = slot * array.strides[0] + node * array.strides[1]
    for offset in range(start - start % 64, start + array.strides[1], 64):
        prefetch_line(array, offset)


@inline
def prefetch_leaf_rows(slot, parent, leaf, node_states, prior, children, edge_proven):
    """Start loading what the leaf step and the expansion of a new leaf read and write, usually out of cache: its
    parent's position, its own position and, when they are at most PREFETCH_ROW_BYTES, its [A] rows. The loads
    then go on while selection does (measured against no prefetch: the whole search 1.15x on gomoku-8x8-5, 1.28x
    on Connect Four; prefetching the 900-byte rows of gomoku-15 too made its selection 0.78x, without them 1.08x
    against that)."""
    prefetch_row(node_states, slot, parent)
    prefetch_row(node_states, slot, leaf)
    if prior.strides[1] <= PREFETCH_ROW_BYTES:
        prefetch_row(prior, slot, leaf)
        prefetch_row(children, slot, leaf)
        prefetch_row(edge_proven, slot, leaf)


@inline
def add_virtual_loss(slot, node, virtual_loss, nodes):
    """Virtual loss on one node of a path: one more visit, and +virtual_loss below the root (the node's own view:
    a win for the node's mover is a loss for the player who chose it)."""
    record = nodes[slot, node]
    record.visits += 1
    if node != ROOT:
        record.value_sum += virtual_loss


@borrowing_kernel
def _select_kernel(slots, c_puct, fpu_reduction, virtual_loss, solver, forced, nodes, children, prior, edge_proven,
                   top_actions, top_prior, num_nodes, leaf_parent, leaf_action, leaf_child, leaf_kind,
                   leaf_value, rows, at, prior_bits, node_states):
    # One tree's descent is a chain of dependent loads, so the processor is kept busy with many trees at once.
    # The trees go in groups of GROUP, whose records fit in the core's L2 cache: the group's small trees are first
    # loaded whole (touch_tree: independent loads that overlap), then the group descends level by level, adding
    # each path's virtual loss on the way down (its nodes are in cache then).
    touched = f32(0.0)
    for start in range(0, slots.shape[0], GROUP):
        stop = min(start + GROUP, slots.shape[0])
        for r in range(start, stop):
            touched += touch_tree(slots[r], nodes, top_actions, top_prior, num_nodes)
        touched += descend_group(start, stop, slots, c_puct, fpu_reduction, virtual_loss, solver, forced, nodes,
                                 children, prior, edge_proven, top_actions, top_prior, num_nodes, leaf_parent,
                                 leaf_action, leaf_child, leaf_kind, leaf_value, rows, at, prior_bits, node_states)
    return touched                                                       # returned so the touches are not removed
