"""Othello's oracle sets (shared.games.oracle_set): random positions labelled by the exact endgame solver.

The pipeline's set (`oracle_set`) holds endgames, cheap enough to build at the start of every run; the late-midgame
set (`late_midgame_set`, `zeroforge bench oracle --phase late-midgame`) holds positions a few moves earlier, where
the solver needs far more nodes per position: a 400-position set takes about 25 minutes of one core (the endgame
set's 400 take 40 s), so it is built on demand and kept in a set file.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.oracle_set import OracleSet, from_solved_values, label_given_positions
from shared.games.random_positions import random_endgame

#: Empty squares of the pipeline set's positions per board height, chosen so that a set of 200 positions is built in
#: about half a minute on two cores (at 17-22 empty squares most 8x8 positions exceed ORACLE_MAX_NODES).
ORACLE_EMPTIES = {8: (14, 16), 6: (12, 16)}
#: The solver's node budget per position of the pipeline set; positions it does not settle are skipped.
ORACLE_MAX_NODES = 2_000_000
#: Empty squares of the late-midgame set's positions (both board sizes).
LATE_MIDGAME_EMPTIES = (17, 22)
#: The solver's node budget per late-midgame position (on 8x8 about 12 s of one core): it settled 92% of the positions
#: sampled for a 400-position set, which took 25 minutes of one core (BENCHMARKS.md, "othello").
LATE_MIDGAME_MAX_NODES = 200_000_000


def _random_positions_set(game: Game, count: int, seed: int, empties: tuple[int, int], max_nodes: int,
                          name: str) -> OracleSet:
    """`count` positions of uniformly random games stopped at an empty-square count drawn uniformly from
    `empties` (low, high), kept when the solver settles every move within `max_nodes` and the side to move is not
    lost; `name` says what they are in the set's source line."""
    from shared.games.othello.solver import OthelloSolver
    from shared.players.tactics import labelled_positions

    rng = np.random.default_rng(seed)
    low, high = empties
    states, values, sampled, skipped = labelled_positions(
        game, count, lambda: random_endgame(game, rng, int(rng.integers(low, high + 1))),
        OthelloSolver(game, max_nodes=max_nodes).move_values)
    return from_solved_values(states, values, f"{states.shape[0]} random {name} with {low}-{high} empty squares "
                                              f"({sampled} sampled, {skipped} over the solver's budget), "
                                              "labelled by the exact solver")


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """The pipeline's set: `count` endgames ([S] int16 states of random games stopped at an empty-square count
    drawn from ORACLE_EMPTIES), kept when the solver settles every move and the side to move is not lost."""
    empties = ORACLE_EMPTIES.get(game.height, ORACLE_EMPTIES[8])
    return _random_positions_set(game, count, seed, empties, ORACLE_MAX_NODES, "endgames")


def late_midgame_set(game: Game, count: int, seed: int) -> OracleSet:
    """`count` late-midgame positions (random games stopped at LATE_MIDGAME_EMPTIES empty squares), labelled as
    oracle_set labels its own with a budget of LATE_MIDGAME_MAX_NODES per position; the source line says how many
    were skipped over it (those are the hardest positions, so the set leans slightly towards easier ones)."""
    return _random_positions_set(game, count, seed, LATE_MIDGAME_EMPTIES, LATE_MIDGAME_MAX_NODES,
                                 "late-midgame positions")


def oracle_set_from_positions(game: Game, states: np.ndarray, count: int, seed: int) -> OracleSet:
    """Up to `count` of the given positions (states [M, S] int16, e.g. a run's self-play positions) labelled by the
    exact solver as oracle_set labels its own: those with ORACLE_EMPTIES empty squares, not over, settled within
    ORACLE_MAX_NODES and not lost for the side to move, drawn in an order shuffled with `seed`."""
    from shared.games.othello.solver import OthelloSolver

    low, high = ORACLE_EMPTIES.get(game.height, ORACLE_EMPTIES[8])
    empties = (states[:, :game.num_cells] == 0).sum(axis=1)
    phase = states[(empties >= low) & (empties <= high) & ~game.is_terminal(states)]
    kept, values, labelled, skipped = label_given_positions(
        game, phase, count, seed, OthelloSolver(game, max_nodes=ORACLE_MAX_NODES).move_values)
    return from_solved_values(kept, values, f"{kept.shape[0]} given positions with {low}-{high} empty squares "
                                            f"({phase.shape[0]} in that range, {labelled} labelled, {skipped} over "
                                            "the solver's budget), labelled by the exact solver")
