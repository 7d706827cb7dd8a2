"""Connect Four's solver at the root of a move choice (`GameFamily.root_solver`, run by shared.search.root_solver).

In searches of `CONNECT4_MIN_SIMULATIONS` or more (analyze, play, gtp, `eval --sims 400`), once at least
`CONNECT4_ROOT_MIN_DISCS` discs are down, the perfect solver (shared.games.connect4.solver) values every column
within `CONNECT4_ROOT_NODES` nodes each; when it settles them all and the search's move is worse than the best (a
win given up, or a draw where a win or a draw was there), the most visited of the best moves is played instead.
The small searches of the gate, the anchor match and self-play keep the search's moves, so that they measure what
the network learnt.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from shared.games.base import Game
from shared.games.connect4.solver import Connect4Solver
from shared.search.root_solver import solved_root_moves

#: Connect Four: the root is solved from this many discs on, by searches of at least CONNECT4_MIN_SIMULATIONS,
#: with a budget of CONNECT4_ROOT_NODES nodes per column. On the positions of 30 match games (BENCHMARKS.md,
#: Strength, "connect4") 67% of the 14-disc positions were settled in that budget (median 240 ms), 90% at 16
#: discs (17 ms) and all from 18 (5 ms); fewer discs rarely settle and cost 1-2 s.
CONNECT4_ROOT_MIN_DISCS = 14
CONNECT4_ROOT_NODES = 1_000_000
CONNECT4_MIN_SIMULATIONS = 200


@lru_cache(maxsize=1)
def _connect4_solver() -> Connect4Solver:
    return Connect4Solver(max_nodes=CONNECT4_ROOT_NODES)


def connect4_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """states [B, S] int16 (non-terminal), the search's actions [B] int64 and root visits [B, A] float32
    -> actions [B] int64, where a settled solve of a position with at least CONNECT4_ROOT_MIN_DISCS discs
    proves the search's move worse than the best (module docstring)."""
    cells = game.num_cells
    return solved_root_moves(states, actions, visits,
                             lambda s: np.count_nonzero(s[:cells]) >= CONNECT4_ROOT_MIN_DISCS,
                             _connect4_solver().state_values)


def root_solver(game: Game, simulations: int | None):
    """The family's root hook: Connect Four's solver for searches of CONNECT4_MIN_SIMULATIONS or more."""
    if simulations is None or simulations < CONNECT4_MIN_SIMULATIONS:
        return None
    return lambda states, actions, visits: connect4_root_moves(game, states, actions, visits)
