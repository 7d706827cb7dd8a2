"""Test helpers: deterministic fake evaluators, a slow recursive reference PUCT (optionally with the MCTS-solver
rules of shared.search.backup / puct), and a tree invariant checker."""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.search.priors import masked_softmax
from shared.search.tree import ROOT, TAKEN, UNVISITED, TreeStorage


class HashEvaluator:
    """Deterministic evaluator: logits and values are fixed functions of the state (values multiples of 1/8).

    Values on the 1/8 grid are exact in float32, so sums do not depend on the order of additions. It also
    asserts that it is never given a terminal state and counts its calls.
    """

    def __init__(self, game: Game, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.game = game
        self.weights = rng.integers(1, 1000, size=game.state_size).astype(np.int64)
        self.logit_table = rng.normal(size=(97, game.num_actions)).astype(np.float32)
        self.calls = 0
        self.positions = 0

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert not self.game.is_terminal(states).any(), "evaluator received a terminal state"
        self.calls += 1
        self.positions += states.shape[0]
        code = (states[:, : self.game.num_cells].astype(np.int64) + 1) @ self.weights[: self.game.num_cells]
        values = ((code % 17) - 8).astype(np.float32) / np.float32(8.0)
        return self.logit_table[code % 97].copy(), values


class RecordingEvaluator:
    """HashEvaluator that records the batch size of every call (list.append is atomic: several server threads
    may call it at once)."""

    def __init__(self, game: Game) -> None:
        self.inner = HashEvaluator(game)
        self.batches: list[int] = []

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.batches.append(states.shape[0])
        return self.inner(states)


class UniformEvaluator:
    """Zero logits and value 0 for every state (asserts non-terminal input)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert not self.game.is_terminal(states).any(), "evaluator received a terminal state"
        count = states.shape[0]
        return np.zeros((count, self.game.num_actions), np.float32), np.zeros(count, np.float32)


class RefNode:
    """A node of the reference search: plain Python, one object per node, float32 statistics."""

    def __init__(self, state: np.ndarray) -> None:
        self.state = state
        self.visits = 0
        self.value_sum = np.float32(0.0)        # from this node's side to move
        self.children: dict[int, RefNode] = {}
        self.prior: np.ndarray | None = None
        self.legal: np.ndarray | None = None
        self.terminal_value: np.float32 | None = None
        self.proven = 0                         # solver: +1 won / -1 lost for this node's side to move, 0 unknown
        self.edge_proven: np.ndarray | None = None   # [A] int8, for this node's side to move


def _ref_best_action(node: RefNode, c_puct: float, fpu_reduction: float, solver: bool = False) -> int:
    if solver and node.proven == 1:
        return int(np.flatnonzero(node.edge_proven == 1)[0])   # take a proven win at once
    skip_lost = solver and node.proven != -1
    parent_n = np.float32(node.visits)
    fpu = np.clip(np.float32(node.value_sum) / parent_n - np.float32(fpu_reduction), np.float32(-1), np.float32(1))
    best, best_score = -1, None
    for action in np.flatnonzero(node.legal):
        if skip_lost and node.edge_proven[action] == -1:
            continue                                            # never walk into a proven loss
        child = node.children.get(int(action))
        n = np.float32(child.visits if child is not None else 0)
        q = -child.value_sum / n if n > 0 else fpu           # child's sum is from the child's view
        # Same float32 operation order as the batched search, so exact ties resolve identically.
        u = np.float32(node.prior[action] / (np.float32(1.0) + n)) * np.float32(np.float32(c_puct) * np.sqrt(parent_n))
        score = np.float32(q + u)
        if best_score is None or score > best_score:           # strict: ties keep the lowest action
            best, best_score = int(action), score
    return best


def _ref_expand(game: Game, evaluate, node: RefNode, outcomes: bool = False) -> np.float32:
    """Evaluate the node; with `outcomes` also apply the game's move outcomes. Returns the value to back up."""
    logits, values = evaluate(node.state[None])
    node.legal = game.search_mask(node.state[None])[0]
    node.prior = masked_softmax(logits, node.legal[None])[0]
    node.edge_proven = np.zeros(game.num_actions, np.int8)
    if outcomes:
        node.edge_proven = np.where(node.legal, game.move_outcomes(node.state[None])[0], 0).astype(np.int8)
        if (node.edge_proven == 1).any():
            node.proven = 1
        elif (node.edge_proven[node.legal] == -1).all():
            node.proven = -1
    return np.float32(node.proven) if node.proven else np.float32(values[0])


def _ref_simulate(game: Game, evaluate, node: RefNode, c_puct: float, fpu_reduction: float,
                  solver: bool = False) -> np.float32:
    """One simulation below `node`; returns the value from node's side to move."""
    action = _ref_best_action(node, c_puct, fpu_reduction, solver)
    child = node.children.get(action)
    if child is None:
        child = RefNode(game.step(node.state[None], np.array([action]))[0])
        node.children[action] = child
        if game.is_terminal(child.state[None])[0]:
            child.terminal_value = np.float32(game.terminal_value(child.state[None])[0])
            child.proven = int(np.sign(child.terminal_value)) if solver else 0
            value = child.terminal_value
        else:
            value = _ref_expand(game, evaluate, child, solver and game.fast_move_outcomes)
    elif child.terminal_value is not None:
        value = child.terminal_value
    elif child.proven:
        value = np.float32(child.proven)                        # a solved node: its exact value
    else:
        value = _ref_simulate(game, evaluate, child, c_puct, fpu_reduction, solver)
    child.visits += 1
    child.value_sum = np.float32(child.value_sum + value)
    if solver and child.proven and not node.proven:
        node.edge_proven[action] = -child.proven                # flip: the child's mover is the opponent
        if node.edge_proven[action] == 1:
            node.proven = 1
        elif (node.edge_proven[node.legal] == -1).all():
            node.proven = -1
    elif solver and child.proven:
        node.edge_proven[action] = -child.proven
    return np.float32(-value)                                   # flip: the parent's mover is the opponent


def reference_search(game: Game, evaluate, state: np.ndarray, simulations: int, c_puct: float,
                     fpu_reduction: float, solver: bool = False) -> tuple[np.ndarray, float]:
    """Recursive PUCT from one state [S]: -> (root child visits [A], root mean value).

    With `solver` it follows the MCTS-solver rules of the batched search (move outcomes at the root and, for
    games with fast_move_outcomes, at every expansion; proven nodes end a simulation with their exact value).
    """
    root = _reference_tree(game, evaluate, state, simulations, c_puct, fpu_reduction, solver)
    visits = np.zeros(game.num_actions)
    for action, child in root.children.items():
        visits[action] = child.visits
    return visits, float(root.value_sum / root.visits)


def _reference_tree(game: Game, evaluate, state: np.ndarray, simulations: int, c_puct: float,
                    fpu_reduction: float, solver: bool) -> RefNode:
    root = RefNode(state)
    logits, values = evaluate(state[None])
    _ref_expand(game, lambda _: (logits, values), root, solver)
    root.visits, root.value_sum = 1, np.float32(values[0])     # the root keeps its network value
    for _ in range(simulations):
        value = _ref_simulate(game, evaluate, root, c_puct, fpu_reduction, solver)
        root.visits += 1
        root.value_sum = np.float32(root.value_sum + value)
    return root


def reference_root_proofs(game: Game, evaluate, state: np.ndarray, simulations: int, c_puct: float = 1.5,
                          fpu_reduction: float = 0.25) -> tuple[np.ndarray, int]:
    """The solver's root results of the reference search: (edge results [A] int8, root result)."""
    root = _reference_tree(game, evaluate, state, simulations, c_puct, fpu_reduction, True)
    return root.edge_proven.copy(), root.proven


def check_tree_invariants(tree: TreeStorage, slot: int) -> None:
    """Visit and value bookkeeping of one tree: visits add up, no virtual loss is left, the child lists hold exactly
    the created children, links agree, the nodes in use are numbered 0..num_nodes - 1."""
    children_visits, children_value_sum = tree.children_visits[slot], tree.children_value_sum[slot]
    in_use = tree.nodes_in_use(slot)
    assert in_use.size == tree.num_nodes[slot] == np.unique(in_use).size
    assert np.array_equal(np.sort(in_use), np.arange(in_use.size))          # the nodes in use are 0..num_nodes - 1
    for node in in_use:
        if not tree.nodes["expanded"][slot, node]:
            assert tree.nodes["first_child"][slot, node] == -1, node           # [A] rows are written at expansion
            continue
        assert not tree.nodes["terminal"][slot, node]
        kids = tree.children[slot, node]
        if tree.nodes["proven"][slot, node]:
            # A proven node also ends simulations itself (exact value), so it has visits of its own.
            assert tree.nodes["visits"][slot, node] >= 1 + children_visits[node].sum(), node
        else:
            assert tree.nodes["visits"][slot, node] == 1 + children_visits[node].sum(), node
        listed, child = [], tree.nodes["first_child"][slot, node]
        while child != -1:
            listed.append(int(child))
            child = tree.nodes["next_sibling"][slot, child]
        assert sorted(listed) == sorted(kids[kids != UNVISITED].tolist()), node
        for action in np.flatnonzero(kids != UNVISITED):
            child = kids[action]
            assert tree.nodes["parent"][slot, child] == node and tree.nodes["action"][slot, child] == action
            assert np.isfinite(tree.prior[slot, node, action])          # only legal actions get children
            assert tree.nodes["prior"][slot, child] == tree.prior[slot, node, action]   # the child's copy of P
        for j in range(max(int(tree.nodes["top_count"][slot, node]), 0)):   # ranked, not created: TAKEN once created
            action = int(tree.top_actions[slot, node, j])
            assert action == TAKEN or (kids[action] == UNVISITED and tree.top_prior[slot, node, j] == tree.prior[
                slot, node, action]), (node, j)
            if tree.nodes["terminal"][slot, child]:
                expected = tree.nodes["visits"][slot, child] * tree.nodes["terminal_value"][slot, child]
                assert np.isclose(tree.nodes["value_sum"][slot, child], expected)
        assert (children_visits[node][kids == UNVISITED] == 0).all()
        assert (children_value_sum[node][kids == UNVISITED] == 0).all()
    assert tree.nodes["visits"][slot, ROOT] >= 1
