"""Othello's solver at the root of a move choice (`GameFamily.root_solver`, run by shared.search.root_solver).

Once at most `ROOT_ENDGAME_EMPTIES` squares are empty, the exact endgame solver (shared.games.othello.solver)
values every move within `ROOT_ENDGAME_NODES` nodes; when it settles them all and the search's move is worse than
the best (a win given up, or a draw where a win or a draw was there), the most visited of the best moves is played
instead. A position the budget does not settle keeps the search's move.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from shared.games.base import Game
from shared.games.othello.solver import OthelloSolver
from shared.search.root_solver import solved_root_moves

#: Othello positions with at most this many empty squares are solved at the root (median 15 ms at 16 empties,
#: BENCHMARKS.md "Othello endgames").
ROOT_ENDGAME_EMPTIES = 16
#: Node budget of one root endgame solve (at most about a second of one core; the solver's transposition table is
#: kept between the moves of a game, so after the first solve the next ones mostly look their positions up).
ROOT_ENDGAME_NODES = 8_000_000


@lru_cache(maxsize=4)
def _endgame_solver(game: Game) -> OthelloSolver:
    return OthelloSolver(game, max_nodes=ROOT_ENDGAME_NODES)


def endgame_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """states [B, S] int16 (non-terminal), the search's actions [B] int64 and root visits [B, A] float32
    -> actions [B] int64, where a settled endgame solve proves the search's move worse than the best
    (module docstring)."""
    solver = _endgame_solver(game)
    return solved_root_moves(states, actions, visits, lambda s: solver.empties(s) <= ROOT_ENDGAME_EMPTIES,
                             solver.move_values)


def root_solver(game: Game, simulations: int | None):
    """The family's root hook: the endgame solver, whatever the number of simulations."""
    return lambda states, actions, visits: endgame_root_moves(game, states, actions, visits)
