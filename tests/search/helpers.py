"""Test helpers: deterministic fake evaluators, a slow recursive reference PUCT, and a tree invariant checker."""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.search.policy import masked_softmax
from shared.search.tree import ROOT, UNVISITED, TreeStorage


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


def _ref_best_action(node: RefNode, c_puct: float, fpu_reduction: float) -> int:
    parent_n = np.float32(node.visits)
    fpu = np.clip(np.float32(node.value_sum) / parent_n - np.float32(fpu_reduction), np.float32(-1), np.float32(1))
    best, best_score = -1, None
    for action in np.flatnonzero(node.legal):
        child = node.children.get(int(action))
        n = np.float32(child.visits if child is not None else 0)
        q = -child.value_sum / n if n > 0 else fpu           # child's sum is from the child's view
        # Same float32 operation order as the batched search, so exact ties resolve identically.
        u = np.float32(node.prior[action] / (np.float32(1.0) + n)) * np.float32(np.float32(c_puct) * np.sqrt(parent_n))
        score = np.float32(q + u)
        if best_score is None or score > best_score:           # strict: ties keep the lowest action
            best, best_score = int(action), score
    return best


def _ref_expand(game: Game, evaluate, node: RefNode) -> np.float32:
    logits, values = evaluate(node.state[None])
    node.legal = game.legal_mask(node.state[None])[0]
    node.prior = masked_softmax(logits, node.legal[None])[0]
    return np.float32(values[0])


def _ref_simulate(game: Game, evaluate, node: RefNode, c_puct: float, fpu_reduction: float) -> np.float32:
    """One simulation below `node`; returns the value from node's side to move."""
    action = _ref_best_action(node, c_puct, fpu_reduction)
    child = node.children.get(action)
    if child is None:
        child = RefNode(game.step(node.state[None], np.array([action]))[0])
        node.children[action] = child
        if game.is_terminal(child.state[None])[0]:
            child.terminal_value = np.float32(game.terminal_value(child.state[None])[0])
            value = child.terminal_value
        else:
            value = _ref_expand(game, evaluate, child)
    elif child.terminal_value is not None:
        value = child.terminal_value
    else:
        value = _ref_simulate(game, evaluate, child, c_puct, fpu_reduction)
    child.visits += 1
    child.value_sum = np.float32(child.value_sum + value)
    return np.float32(-value)                                   # flip: the parent's mover is the opponent


def reference_search(game: Game, evaluate, state: np.ndarray, simulations: int, c_puct: float,
                     fpu_reduction: float) -> tuple[np.ndarray, float]:
    """Recursive PUCT from one state [S]: -> (root child visits [A], root mean value)."""
    root = RefNode(state)
    root.visits, root.value_sum = 1, _ref_expand(game, evaluate, root)
    for _ in range(simulations):
        value = _ref_simulate(game, evaluate, root, c_puct, fpu_reduction)
        root.visits += 1
        root.value_sum = np.float32(root.value_sum + value)
    visits = np.zeros(game.num_actions)
    for action, child in root.children.items():
        visits[action] = child.visits
    return visits, float(root.value_sum / root.visits)


def check_tree_invariants(tree: TreeStorage, slot: int) -> None:
    """Visit and value bookkeeping of one tree: mirrors agree, visits add up, no virtual loss is left."""
    for node in range(tree.num_nodes[slot]):
        kids = tree.children[slot, node]
        if tree.expanded[slot, node]:
            assert tree.node_visits[slot, node] == 1 + tree.children_visits[slot, node].sum(), node
            assert not tree.terminal[slot, node]
        for action in np.flatnonzero(kids != UNVISITED):
            child = kids[action]
            assert tree.parents[slot, child] == node and tree.action_from_parent[slot, child] == action
            assert tree.children_visits[slot, node, action] == tree.node_visits[slot, child]
            assert np.isclose(tree.children_value_sum[slot, node, action], tree.node_value_sum[slot, child])
            if tree.terminal[slot, child]:
                expected = tree.node_visits[slot, child] * tree.terminal_value[slot, child]
                assert np.isclose(tree.node_value_sum[slot, child], expected)
        unvisited = kids == UNVISITED
        if tree.expanded[slot, node]:
            assert (tree.children_visits[slot, node][unvisited] == 0).all()
    assert tree.node_visits[slot, ROOT] >= 1
