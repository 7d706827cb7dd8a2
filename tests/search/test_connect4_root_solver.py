"""Connect Four's perfect solver at the root of searches of CONNECT4_MIN_SIMULATIONS or more: it corrects a move
the solver proves worse than the best, keeps every move that is as good, and leaves small searches and positions
with few discs to the search."""
from __future__ import annotations

import numpy as np

from shared.games.random_positions import random_endgame
from shared.players.tactics_scores import critical_rows
from shared.games import make_game
from shared.players.analysis import analyze_states
from shared.players.player import MCTSPlayer
from shared.search import SearchConfig
from shared.games.connect4.solver import Connect4Solver
from shared.games.connect4.root import (CONNECT4_MIN_SIMULATIONS, CONNECT4_ROOT_MIN_DISCS, CONNECT4_ROOT_NODES,
                                        connect4_root_moves)
from shared.search.root_solver import keep_best_outcome, root_solver_moves, uses_root_solver
from shared.search.solved import DRAW, ILLEGAL, LOSS, UNKNOWN, WIN
from tests.search.helpers import UniformEvaluator

CONNECT4 = make_game("connect4")
CELLS = CONNECT4.height * CONNECT4.width


def _values(state: np.ndarray) -> np.ndarray:
    """Solved values [7] int64 within the root solver's own budget (so every kept position is one it settles)."""
    return Connect4Solver(CONNECT4_ROOT_NODES).state_values(state)


def critical_positions(count: int, discs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` random positions with `discs` discs (or up to 3 more) where some legal move gives up the solved
    outcome: (states [N, S] int16, solved values [N, 7] int64)."""
    rng = np.random.default_rng(seed)
    states, values = [], []
    while len(states) < count:
        state = random_endgame(CONNECT4, rng, CELLS - discs - int(rng.integers(0, 4)))
        moves = _values(state)
        if not np.any(moves == UNKNOWN) and critical_rows(moves[None])[0]:
            states.append(state)
            values.append(moves)
    return np.array(states, np.int16), np.array(values, np.int64)


def test_keep_best_outcome_rule():
    values = np.array([LOSS, WIN, DRAW, ILLEGAL, WIN, LOSS, DRAW], np.int64)
    visits = np.array([50, 3, 10, 0, 7, 1, 2], np.float32)
    assert keep_best_outcome(4, values, visits) == 4                 # a win is kept as it is
    assert keep_best_outcome(0, values, visits) == 4                 # the most visited win
    drawn = np.where(values == WIN, LOSS, values)
    assert keep_best_outcome(6, drawn, visits) == 6 and keep_best_outcome(1, drawn, visits) == 2


def test_only_searches_of_the_threshold_or_more_use_the_solver():
    assert not uses_root_solver(CONNECT4) and not uses_root_solver(CONNECT4, CONNECT4_MIN_SIMULATIONS - 1)
    assert uses_root_solver(CONNECT4, CONNECT4_MIN_SIMULATIONS)
    assert not uses_root_solver(make_game("tictactoe"), 100_000)
    states, values = critical_positions(6, CONNECT4_ROOT_MIN_DISCS + 6, seed=1)
    worst = np.array([np.flatnonzero((v != ILLEGAL) & (v < v.max()))[0] for v in values], np.int64)
    visits = np.zeros((states.shape[0], CONNECT4.num_actions), np.float32)
    small = root_solver_moves(CONNECT4, states, worst, visits, CONNECT4_MIN_SIMULATIONS - 1)
    assert small.tolist() == worst.tolist()
    corrected = root_solver_moves(CONNECT4, states, worst, visits, CONNECT4_MIN_SIMULATIONS)
    assert all(values[row, a] == values[row].max() for row, a in enumerate(corrected))


def test_positions_with_fewer_discs_are_left_to_the_search():
    rng = np.random.default_rng(3)
    state = random_endgame(CONNECT4, rng, CELLS - (CONNECT4_ROOT_MIN_DISCS - 1))
    assert np.count_nonzero(state[:CELLS]) == CONNECT4_ROOT_MIN_DISCS - 1
    action = np.flatnonzero(CONNECT4.legal_mask(state[None])[0])[:1]
    visits = np.zeros((1, CONNECT4.num_actions), np.float32)
    assert connect4_root_moves(CONNECT4, state[None], action, visits).tolist() == action.tolist()


def test_match_players_and_analysis_keep_the_solved_outcome():
    """A network that knows nothing, searched CONNECT4_MIN_SIMULATIONS times, gives up the outcome in some of these
    positions by its search alone; with the root solver the match player and analyze keep it in every one."""
    states, values = critical_positions(24, CONNECT4_ROOT_MIN_DISCS, seed=7)
    search = SearchConfig(num_simulations=CONNECT4_MIN_SIMULATIONS)
    evaluate = UniformEvaluator(CONNECT4)
    played = MCTSPlayer(CONNECT4, evaluate, search).select_actions(states)
    analysed = [a.action for a in analyze_states(CONNECT4, evaluate, states, search=search)]
    for actions in (played, analysed):
        assert all(values[row, a] == values[row].max() for row, a in enumerate(actions))
    alone = [a.action for a in analyze_states(CONNECT4, evaluate, states, search=search, root_solver=False)]
    assert any(values[row, a] < values[row].max() for row, a in enumerate(alone))
