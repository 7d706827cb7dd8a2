"""Solvers at the root of a move choice: the search's moves, corrected where a solver proves a better one.

Each game family may bring its own (`GameFamily.root_solver`, shared.games.family): a hook that, given the game
and the search's number of simulations, returns the function correcting a batch of moves, or None where the
family's solver does not run for searches of that size. This module is the one entry point for all games;
games without a root solver pass through unchanged. The families' solvers share the correction rule of
`keep_best_outcome` (`solved_root_moves`): when a solver settles every move of a position and the search's move
is worse than the best (a win given up, or a draw where a win or a draw was there), the most visited of the best
moves is played instead.

Used by the match players (gate, eval, anchor) and position analysis (analyze, play, gtp, pbrain); self-play does
not call it (its cost per move is not shown to pay there).
"""
from __future__ import annotations

import numpy as np

from shared.games import family_of
from shared.games.base import Game
from shared.search.solved import UNKNOWN


def _root_moves(game: Game, simulations: int | None):
    hook = family_of(game).root_solver
    return None if hook is None else hook(game, simulations)


def uses_root_solver(game: Game, simulations: int | None = None) -> bool:
    """True when `root_solver_moves` may change the moves of `game` searched with `simulations` (the game's
    family has a root solver that runs for searches of that size)."""
    return _root_moves(game, simulations) is not None


def keep_best_outcome(action: int, values: np.ndarray, visits: np.ndarray) -> int:
    """The move to play given solved move values [A] int64 (the mover's view: WIN 1, DRAW 0, LOSS -1, ILLEGAL -2;
    none UNKNOWN) and root visits [A] float32: `action` itself unless it is worth less than the best value, else
    the most visited of the moves worth the best value."""
    best = values.max()
    if values[action] >= best:
        return int(action)
    options = np.flatnonzero(values == best)
    return int(options[np.argmax(visits[options])])


def solved_root_moves(states: np.ndarray, actions: np.ndarray, visits: np.ndarray, in_reach,
                      move_values) -> np.ndarray:
    """For each row whose state [S] `in_reach(state)` accepts: `move_values(state)` -> [A] int64 solved values, and,
    when none is UNKNOWN, the action kept or corrected by `keep_best_outcome`. Returns actions [B] int64."""
    actions = np.asarray(actions, np.int64).copy()
    for row in range(states.shape[0]):
        if not in_reach(states[row]):
            continue
        values = move_values(states[row])
        if not np.any(values == UNKNOWN):
            actions[row] = keep_best_outcome(int(actions[row]), values, visits[row])
    return actions


def root_solver_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray,
                      simulations: int | None = None) -> np.ndarray:
    """The moves to play: states [B, S] int16 (non-terminal), the search's choices actions [B] int64 and its root
    visit counts visits [B, A] float32 -> actions [B] int64, with the game's root solver applied (module
    docstring); unchanged for games without one. simulations: the search's, which decides whether the family's
    solver runs (None: the search's size is unknown, and the solvers that depend on it do not run)."""
    moves = _root_moves(game, simulations)
    if moves is None:
        return np.asarray(actions, np.int64).copy()
    return moves(states, actions, visits)
