"""Solvers at the root of a move choice: the search's moves, corrected where a solver proves a better one.

- Gomoku (any size): VCF attack and defence, and with searches of 200 simulations or more the opponent's quiet
  threats (shared.search.threats).
- Othello (8x8, 6x6): once at most `ROOT_ENDGAME_EMPTIES` squares are empty, the exact endgame solver
  (shared.search.othello_solver) values every move within `ROOT_ENDGAME_NODES` nodes; when it settles them all and
  the search's move is worse than the best (a win given up, or a draw where a win or a draw was there), the most
  visited of the best moves is played instead. A position the budget does not settle keeps the search's move.
- Other games pass through unchanged (tic-tac-toe and Connect Four are left to the search and its MCTS-solver, so
  that matches still measure what the network learnt).

Used by the match players (gate, eval, anchor) and position analysis (analyze, play, gtp, pbrain); self-play does
not call it (its cost per move is not shown to pay there).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from shared.games.base import Game
from shared.search.othello_solver import OthelloSolver
from shared.search.solved import UNKNOWN
from shared.search.threats import uses_threat_solver, vcf_root_moves

#: Othello positions with at most this many empty squares are solved at the root (median 15 ms at 16 empties,
#: BENCHMARKS.md "Othello endgames").
ROOT_ENDGAME_EMPTIES = 16
#: Node budget of one root endgame solve (at most about a second of one core; the solver's transposition table is
#: kept between the moves of a game, so after the first solve the next ones mostly look their positions up).
ROOT_ENDGAME_NODES = 8_000_000


def uses_endgame_solver(game: Game) -> bool:
    """True for Othello (any size): the games of the exact endgame solver."""
    return getattr(game, "family", None) == "othello"


def uses_root_solver(game: Game) -> bool:
    """True when `root_solver_moves` may change the moves of `game`: Gomoku (VCF) and Othello (endgames)."""
    return uses_threat_solver(game) or uses_endgame_solver(game)


@lru_cache(maxsize=4)
def _endgame_solver(game: Game) -> OthelloSolver:
    return OthelloSolver(game, max_nodes=ROOT_ENDGAME_NODES)


def endgame_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """Othello: states [B, S] int16 (non-terminal), the search's actions [B] int64 and root visits [B, A] float32
    -> actions [B] int64, where a settled endgame solve proves the search's move worse than the best
    (module docstring)."""
    actions = np.asarray(actions, np.int64).copy()
    solver = _endgame_solver(game)
    for row in range(states.shape[0]):
        if solver.empties(states[row]) > ROOT_ENDGAME_EMPTIES:
            continue
        values = solver.move_values(states[row])                             # [A] int64, the mover's view
        if np.any(values == UNKNOWN):
            continue
        best = values.max()
        if values[actions[row]] < best:
            options = np.flatnonzero(values == best)
            actions[row] = options[np.argmax(visits[row, options])]
    return actions


def root_solver_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray,
                      simulations: int | None = None) -> np.ndarray:
    """The moves to play: states [B, S] int16 (non-terminal), the search's choices actions [B] int64 and its root
    visit counts visits [B, A] float32 -> actions [B] int64, with the game's root solver applied (module
    docstring); unchanged for games without one. simulations: the search's, for the Gomoku quiet-threat check
    (shared.search.threats; None: not checked)."""
    if uses_threat_solver(game):
        return vcf_root_moves(game, states, actions, visits, simulations)
    if uses_endgame_solver(game):
        return endgame_root_moves(game, states, actions, visits)
    return np.asarray(actions, np.int64).copy()
