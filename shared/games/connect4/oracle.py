"""Connect Four's oracle set (shared.games.oracle_set): positions from careful play, labelled by the solver."""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.oracle_set import OracleSet, careful_position, from_solved_values

#: Plies of the sampled positions: from where the solver settles most positions within ORACLE_MAX_NODES.
ORACLE_PLIES = (12, 24)
#: The solver's node budget per position; positions it does not settle are skipped.
ORACLE_MAX_NODES = 300_000


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """`count` positions after a ply count drawn from ORACLE_PLIES of play that never blunders in one move
    (shared.games.oracle_set.careful_position: no move that lets the opponent win at once, none that ends the
    game), kept when the solver settles every move and the side to move is not lost."""
    from shared.games.connect4.solver import Connect4Solver
    from shared.players.tactics import labelled_positions

    rng = np.random.default_rng(seed)
    low, high = ORACLE_PLIES
    states, values, sampled, skipped = labelled_positions(
        game, count, lambda: careful_position(game, rng, int(rng.integers(low, high + 1))),
        Connect4Solver(max_nodes=ORACLE_MAX_NODES).state_values)
    return from_solved_values(states, values, f"{states.shape[0]} positions after {low}-{high} plies of careful play "
                                              f"({sampled} sampled, {skipped} over the solver's budget), "
                                              "labelled by the solver")
