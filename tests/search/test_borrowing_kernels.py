"""The hot search and line kernels run without numba's reference-counted runtime (shared.search.jit.borrowing_kernel):
with it, every array handed to an inlined helper cost atomic reference-count updates on each call, more than the
descent's own work (BENCHMARKS.md, "Search kernels without reference counting"). A kernel put back on the plain
decorator would still be correct, only slower, so this checks the setting itself, after a real search used them."""
from __future__ import annotations

import numpy as np
import pytest

from cli.bench.search import _TableEvaluator
from shared.games import lines, make_game
from shared.search import backup, puct, tree
from shared.search.mcts import BatchedMCTS, SearchConfig

HOT_KERNELS = [puct._select_kernel, tree._expand_nodes, tree._softmax_shift, tree._gather_states,
               tree._mark_leaves, tree._root_statistics, backup._backup_kernel, lines._step_stored,
               lines._bitboard_outcomes, lines._row_mask_outcomes]


@pytest.fixture(scope="module", autouse=True)
def searched() -> None:
    """One short search on each board layout, so that every hot kernel was compiled (or loaded) and called."""
    for name in ("connect4", "gomoku-8x8-5", "gomoku-9x9-5"):
        game = make_game(name)
        rng = np.random.default_rng(0)
        mcts = BatchedMCTS(game, _TableEvaluator(game.num_cells, game.num_actions, rng),
                           SearchConfig(num_simulations=8), rng)
        result = mcts.search(game.initial_states(3), add_noise=True)
        assert result.visits.sum(axis=1).tolist() == [8.0, 8.0, 8.0]


@pytest.mark.parametrize("kernel", HOT_KERNELS, ids=lambda k: k.py_func.__qualname__)
def test_hot_kernel_runs_without_reference_counting(kernel) -> None:
    assert kernel.signatures, f"{kernel.py_func.__qualname__} was not called by the search"
    assert kernel.targetoptions.get("_nrt") is False


def test_borrowing_kernel_cannot_allocate() -> None:
    """What the setting costs: a borrowing kernel cannot make arrays, so its wrapper passes every buffer in."""
    from numba.core.errors import NumbaError

    from shared.search.jit import borrowing_kernel

    @borrowing_kernel
    def allocates(count):
        return np.zeros(count, np.int64).sum()

    with pytest.raises(NumbaError):
        allocates(3)
