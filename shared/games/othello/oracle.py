"""Othello's oracle set (shared.games.oracle_set): late positions labelled by the exact endgame solver."""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.oracle_set import OracleSet, from_solved_values, label_given_positions
from shared.games.random_positions import random_endgame

#: Empty squares of the sampled positions per board height, chosen so that a set of 200 positions is built in
#: about half a minute on two cores (at 17-22 empty squares most 8x8 positions exceed ORACLE_MAX_NODES).
ORACLE_EMPTIES = {8: (14, 16), 6: (12, 16)}
#: The solver's node budget per position; positions it does not settle are skipped.
ORACLE_MAX_NODES = 2_000_000


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """`count` positions of random games stopped at an empty-square count drawn from ORACLE_EMPTIES, kept when the
    solver settles every move and the side to move is not lost."""
    from shared.games.othello.solver import OthelloSolver
    from shared.players.tactics import labelled_positions

    rng = np.random.default_rng(seed)
    low, high = ORACLE_EMPTIES.get(game.height, ORACLE_EMPTIES[8])
    states, values, sampled, skipped = labelled_positions(
        game, count, lambda: random_endgame(game, rng, int(rng.integers(low, high + 1))),
        OthelloSolver(game, max_nodes=ORACLE_MAX_NODES).move_values)
    return from_solved_values(states, values, f"{states.shape[0]} random endgames with {low}-{high} empty squares "
                                              f"({sampled} sampled, {skipped} over the solver's budget), "
                                              "labelled by the exact solver")


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
