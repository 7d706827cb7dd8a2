"""Solvers at the root of a move choice: the search's moves, corrected where a solver proves a better one.

- Gomoku (any size): VCF attack and defence, and with searches of 200 simulations or more the opponent's quiet
  threats (shared.search.threats).
- Othello (8x8, 6x6): once at most `ROOT_ENDGAME_EMPTIES` squares are empty, the exact endgame solver
  (shared.search.othello_solver) values every move within `ROOT_ENDGAME_NODES` nodes; when it settles them all and
  the search's move is worse than the best (a win given up, or a draw where a win or a draw was there), the most
  visited of the best moves is played instead. A position the budget does not settle keeps the search's move.
- Connect Four: in searches of `CONNECT4_MIN_SIMULATIONS` or more (analyze, play, gtp, `eval --sims 400`), once at
  least `CONNECT4_ROOT_MIN_DISCS` discs are down, the perfect solver (shared.search.connect4_solver) values every
  column within `CONNECT4_ROOT_NODES` nodes each, with the same correction rule as Othello's. The small searches of
  the gate, the anchor match and self-play keep the search's moves, so that they measure what the network learnt.
- Other games (tic-tac-toe, Go) pass through unchanged.

Used by the match players (gate, eval, anchor) and position analysis (analyze, play, gtp, pbrain); self-play does
not call it (its cost per move is not shown to pay there).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from shared.games.base import Game
from shared.search.connect4_solver import Connect4Solver
from shared.search.othello_solver import OthelloSolver
from shared.search.solved import UNKNOWN
from shared.search.threats import uses_threat_solver, vcf_root_moves

#: Othello positions with at most this many empty squares are solved at the root (median 15 ms at 16 empties,
#: BENCHMARKS.md "Othello endgames").
ROOT_ENDGAME_EMPTIES = 16
#: Node budget of one root endgame solve (at most about a second of one core; the solver's transposition table is
#: kept between the moves of a game, so after the first solve the next ones mostly look their positions up).
ROOT_ENDGAME_NODES = 8_000_000
#: Connect Four: the root is solved from this many discs on, by searches of at least CONNECT4_MIN_SIMULATIONS,
#: with a budget of CONNECT4_ROOT_NODES nodes per column. On the positions of 30 match games (BENCHMARKS.md,
#: Strength, "connect4", stop 22) 67% of the 14-disc positions were settled in that budget
#: (median 240 ms), 90% at 16 discs (17 ms) and all from 18 (5 ms); fewer discs rarely settle and cost 1-2 s.
CONNECT4_ROOT_MIN_DISCS = 14
CONNECT4_ROOT_NODES = 1_000_000
CONNECT4_MIN_SIMULATIONS = 200


def uses_endgame_solver(game: Game) -> bool:
    """True for Othello (any size): the games of the exact endgame solver."""
    return getattr(game, "family", None) == "othello"


def uses_connect4_solver(game: Game, simulations: int | None) -> bool:
    """True for Connect Four searched with `simulations` >= CONNECT4_MIN_SIMULATIONS (None: never)."""
    return (getattr(game, "family", None) == "connect4" and simulations is not None
            and simulations >= CONNECT4_MIN_SIMULATIONS)


def uses_root_solver(game: Game, simulations: int | None = None) -> bool:
    """True when `root_solver_moves` may change the moves of `game` searched with `simulations`: Gomoku (VCF) and
    Othello (endgames) at any size, Connect Four from CONNECT4_MIN_SIMULATIONS."""
    return uses_threat_solver(game) or uses_endgame_solver(game) or uses_connect4_solver(game, simulations)


@lru_cache(maxsize=4)
def _endgame_solver(game: Game) -> OthelloSolver:
    return OthelloSolver(game, max_nodes=ROOT_ENDGAME_NODES)


@lru_cache(maxsize=1)
def _connect4_solver() -> Connect4Solver:
    return Connect4Solver(max_nodes=CONNECT4_ROOT_NODES)


def keep_best_outcome(action: int, values: np.ndarray, visits: np.ndarray) -> int:
    """The move to play given solved move values [A] int64 (the mover's view: WIN 1, DRAW 0, LOSS -1, ILLEGAL -2;
    none UNKNOWN) and root visits [A] float32: `action` itself unless it is worth less than the best value, else
    the most visited of the moves worth the best value."""
    best = values.max()
    if values[action] >= best:
        return int(action)
    options = np.flatnonzero(values == best)
    return int(options[np.argmax(visits[options])])


def _solved_root_moves(states: np.ndarray, actions: np.ndarray, visits: np.ndarray, in_reach,
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


def endgame_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """Othello: states [B, S] int16 (non-terminal), the search's actions [B] int64 and root visits [B, A] float32
    -> actions [B] int64, where a settled endgame solve proves the search's move worse than the best
    (module docstring)."""
    solver = _endgame_solver(game)
    return _solved_root_moves(states, actions, visits, lambda s: solver.empties(s) <= ROOT_ENDGAME_EMPTIES,
                              solver.move_values)


def connect4_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """Connect Four: states [B, S] int16 (non-terminal), the search's actions [B] int64 and root visits [B, A]
    float32 -> actions [B] int64, where a settled solve of a position with at least CONNECT4_ROOT_MIN_DISCS discs
    proves the search's move worse than the best (module docstring)."""
    cells = game.num_cells
    return _solved_root_moves(states, actions, visits,
                              lambda s: np.count_nonzero(s[:cells]) >= CONNECT4_ROOT_MIN_DISCS,
                              _connect4_solver().state_values)


def root_solver_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray,
                      simulations: int | None = None) -> np.ndarray:
    """The moves to play: states [B, S] int16 (non-terminal), the search's choices actions [B] int64 and its root
    visit counts visits [B, A] float32 -> actions [B] int64, with the game's root solver applied (module
    docstring); unchanged for games without one. simulations: the search's, for the Gomoku quiet-threat check
    (shared.search.threats) and Connect Four's solver (None: neither runs)."""
    if uses_threat_solver(game):
        return vcf_root_moves(game, states, actions, visits, simulations)
    if uses_endgame_solver(game):
        return endgame_root_moves(game, states, actions, visits)
    if uses_connect4_solver(game, simulations):
        return connect4_root_moves(game, states, actions, visits)
    return np.asarray(actions, np.int64).copy()
