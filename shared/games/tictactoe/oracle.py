"""Tic-tac-toe's oracle set (shared.games.oracle_set): reachable positions labelled by minimax, with exact scores
(the quickest win, the slowest loss) for the optimal moves."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from shared.games.base import Game
from shared.games.oracle_set import OracleSet, from_solved_values
from shared.games.tictactoe.minimax import move_values, reachable_positions


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """`count` distinct reachable positions, non-terminal and not lost for the side to move, drawn without
    replacement with `seed` (every such position, in reachable order, when count is at least their number),
    labelled by minimax; the optimal moves are those with the best exact score (minimax.solve_values, scored)."""
    return _labelled(game, np.concatenate(reachable_positions(game)), count, seed, "reachable positions")


def oracle_set_from_positions(game: Game, states: np.ndarray, count: int, seed: int) -> OracleSet:
    """As oracle_set, from the distinct rows of the given positions (states [M, S] int16, e.g. a run's self-play
    positions) instead of every reachable one."""
    return _labelled(game, np.unique(states, axis=0), count, seed, "given positions")


def _labelled(game: Game, states: np.ndarray, count: int, seed: int, what: str) -> OracleSet:
    """`count` of the distinct positions `states` [M, S] int16 that are live and not lost, drawn with `seed`,
    labelled by minimax with their optimal moves."""
    states = states[~game.is_terminal(states)]
    values = move_values(game, states)                                       # [M, A] float32, -inf illegal
    values = np.where(np.isfinite(values), values, -2).astype(np.int64)
    states, values = states[values.max(axis=1) >= 0], values[values.max(axis=1) >= 0]
    if count < states.shape[0]:
        rows = np.sort(np.random.default_rng(seed).choice(states.shape[0], count, replace=False))
        states, values = states[rows], values[rows]
    outcome = from_solved_values(states, values, f"{states.shape[0]} {what}, not lost, labelled by "
                                                 "minimax (optimal: quickest win, else the draw)")
    scores = move_values(game, states, scored=True)                          # [N, A] float32, -inf illegal
    return replace(outcome, optimal=scores == scores.max(axis=1, keepdims=True))
