"""The hot search, line, solver and playout kernels run without numba's reference-counted runtime
(shared.search.jit.borrowing_kernel): with it, every array handed to a helper cost atomic reference-count updates
on each call, more than the descent's own work (BENCHMARKS.md, "Search kernels without reference counting").
A kernel put back on the plain decorator would still be correct, only slower, so this checks the setting itself,
after a real search, solve and playout used them."""
from __future__ import annotations

import numpy as np
import pytest

from cli.bench.search import _TableEvaluator
from shared.games import lines, make_game
from shared.games.go import playout as go_playout
from shared.games.othello import playout as othello_playout
from shared.games.connect4 import solver as connect4_solver
from shared.games.othello import solver as othello_solver
from shared.search import backup, puct, tree
from shared.search.mcts import BatchedMCTS
from shared.search.types import SearchConfig

HOT_KERNELS = [puct._select_kernel, tree._expand_nodes, tree._softmax_shift, tree._gather_states,
               tree._mark_leaves, tree._root_statistics, backup._backup_kernel, lines._step_stored,
               lines._bitboard_outcomes, lines._row_mask_outcomes, othello_solver._move_values,
               connect4_solver._move_values, go_playout._play_out, go_playout._area_scores,
               othello_playout._play_out, othello_playout._disc_winners]
#: Kernels only other kernels call (their code is compiled into the caller's, so their dispatcher may stay empty).
INNER_KERNELS = [othello_solver._solve, connect4_solver._solve, connect4_solver._negamax]


@pytest.fixture(scope="module", autouse=True)
def searched() -> None:
    """One short search on each board layout, one solve by each perfect solver and a few random playouts, so that
    every hot kernel was compiled (or loaded) and called."""
    for name in ("connect4", "gomoku-8x8-5", "gomoku-9x9-5"):
        game = make_game(name)
        rng = np.random.default_rng(0)
        mcts = BatchedMCTS(game, _TableEvaluator(game.num_cells, game.num_actions, rng),
                           SearchConfig(num_simulations=8), rng)
        result = mcts.search(game.initial_states(3), add_noise=True)
        assert result.visits.sum(axis=1).tolist() == [8.0, 8.0, 8.0]
    game, rng = make_game("othello-6x6"), np.random.default_rng(1)
    state = game.initial_states(1)
    while (state[0, : game.num_cells] == 0).sum() > 8 and not game.is_terminal(state)[0]:
        state = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))
    if not game.is_terminal(state)[0]:
        othello_solver.OthelloSolver(game).move_values(state[0])
    connect4 = make_game("connect4")
    state = connect4.step(connect4.initial_states(1), np.array([3]))
    connect4_solver.Connect4Solver(max_nodes=1000).state_values(state[0])
    for name in ("othello-6x6", "go-9x9"):                   # the pure-MCTS yardstick's random playouts
        game = make_game(name)
        assert game.playout_winners(game.initial_states(2), np.random.default_rng(0)).shape == (2,)


@pytest.mark.parametrize("kernel", HOT_KERNELS + INNER_KERNELS, ids=lambda k: k.py_func.__qualname__)
def test_hot_kernel_runs_without_reference_counting(kernel) -> None:
    if kernel not in INNER_KERNELS:
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
