"""TreeStorage.expand against plain numpy: the prior rows (masked_softmax bit for bit), the solver edge results and
node proofs, and the ranked top actions (prior descending, action ascending) on rows full of ties, zero priors and
illegal moves, for action counts around the vector widths of the ranking's passes."""
from __future__ import annotations

import numpy as np
import pytest

from shared.search.priors import masked_softmax
from shared.search.tree import ROOT, UNVISITED, TreeStorage, top_k


@pytest.mark.parametrize("num_actions", [7, 17, 36, 64, 65, 100, 225])
def test_expand_matches_numpy(num_actions: int) -> None:
    rng = np.random.default_rng(num_actions)
    count = 300
    logits = rng.integers(-2, 3, size=(count, num_actions)).astype(np.float32)   # a handful of values: many ties
    logits[::7] = rng.normal(size=(logits[::7].shape)).astype(np.float32)
    logits[::11, : num_actions // 2 + 1] = -1e4                                 # priors of exactly 0, tied
    legal = rng.random((count, num_actions)) < rng.choice([0.02, 0.3, 0.9, 1.0], size=(count, 1))
    legal[5] = False                                                              # no legal move at all
    outcomes = rng.choice(np.array([-1, 0, 0, 0, 1], np.int8), size=(count, num_actions))
    outcomes[::3] = np.where(rng.random((outcomes[::3].shape)) < 0.5, -1, 0)    # rows without a win
    tree = TreeStorage(count, 4, num_actions, 1)
    slots, nodes = np.arange(count), np.full(count, 2)
    proven = tree.expand(slots, nodes, logits, legal, outcomes)

    prior = masked_softmax(logits, legal)
    stored = tree.prior[slots, 2]
    assert np.array_equal(np.where(legal, stored, 0), np.where(legal, prior, 0))
    assert np.isneginf(stored[~legal]).all()
    assert (tree.children[slots, 2] == UNVISITED).all()
    edges = np.where(legal, outcomes, 0)
    assert np.array_equal(tree.edge_proven[slots, 2], edges)
    expected_proven = np.where((edges == 1).any(axis=1), 1, np.where((legal & (edges != -1)).any(axis=1), 0, -1))
    assert np.array_equal(proven, expected_proven) and np.array_equal(tree.nodes["proven"][slots, 2], expected_proven)
    assert np.array_equal(tree.nodes["edges_proven"][slots, 2], (edges != 0).any(axis=1))
    k = top_k(num_actions)
    for row in range(count):
        legal_actions = np.flatnonzero(legal[row])
        order = legal_actions[np.lexsort((legal_actions, -stored[row, legal_actions]))][:k]
        listed = int(tree.nodes["top_count"][row, 2])
        assert listed == order.size, row
        assert np.array_equal(tree.top_actions[row, 2, :listed], order), row
        assert np.array_equal(tree.top_prior[row, 2, :listed], stored[row, order]), row


def test_expand_without_outcomes_proves_nothing() -> None:
    tree = TreeStorage(3, 2, 40, 1)
    legal = np.ones((3, 40), bool)
    proven = tree.expand(np.arange(3), np.full(3, ROOT), np.zeros((3, 40), np.float32), legal, None)
    assert (proven == 0).all() and (tree.edge_proven[:, ROOT] == 0).all()
    assert (tree.top_actions[:, ROOT] == np.arange(4)).all()                    # all tied: the lowest actions


@pytest.mark.parametrize("length", [1, 7, 8, 9, 64, 128, 129, 225, 362, 1000])
def test_row_sums_match_numpy_bit_for_bit(length: int) -> None:
    """The expansion's compiled row sum (tree.pairwise_sum) is numpy's `sum(axis=1)`, bit for bit, on rows short
    enough to be summed in one block and on rows split in halves (more than tree.PAIRWISE_BLOCK)."""
    import numba

    from shared.search import tree

    @numba.njit
    def sum_rows(weights, out, spans, span_done, sums):
        for k in range(weights.shape[0]):
            out[k] = tree.pairwise_sum(weights[k], spans, span_done, sums)

    rng = np.random.default_rng(length)
    weights = np.exp(3 * rng.normal(size=(500, length))).astype(np.float32)
    weights[rng.random(weights.shape) < 0.3] = 0
    out = np.empty(500, np.float32)
    sum_rows(weights, out, *tree._pairwise_scratch())
    np.testing.assert_array_equal(out, weights.sum(axis=1))
