"""Connect Four's oracle set (shared.games.oracle_set): positions from games of a search player with some
randomness, labelled by the solver."""
from __future__ import annotations

import numpy as np

from shared.games.base import F_PLY, Game
from shared.games.oracle_set import OracleSet, from_solved_values, label_given_positions, search_play_positions

#: Plies of the sampled positions: from where the solver settles most positions within ORACLE_MAX_NODES.
ORACLE_PLIES = (12, 24)
#: The solver's node budget per position; positions it does not settle are skipped.
ORACLE_MAX_NODES = 300_000
#: Simulations per move of the search player whose games the positions come from.
ORACLE_PLAYER_SIMULATIONS = 64


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """`count` positions of games of a rollout search player (shared.games.oracle_set.search_play_positions),
    each stopped after a ply count drawn from ORACLE_PLIES, kept when the game is not over, the solver settles
    every move and the side to move is not lost."""
    from shared.games.connect4.solver import Connect4Solver
    from shared.players.tactics import labelled_positions

    rng = np.random.default_rng(seed)
    low, high = ORACLE_PLIES
    pool: list[np.ndarray] = []

    def draw() -> np.ndarray:
        while not pool:
            played = search_play_positions(game, rng, rng.integers(low, high + 1, max(8, count)),
                                           ORACLE_PLAYER_SIMULATIONS)
            pool.extend(played[~game.is_terminal(played)][::-1])
        return pool.pop()

    states, values, sampled, skipped = labelled_positions(
        game, count, draw, Connect4Solver(max_nodes=ORACLE_MAX_NODES).state_values)
    return from_solved_values(states, values, f"{states.shape[0]} positions after {low}-{high} plies of a "
                                              f"{ORACLE_PLAYER_SIMULATIONS}-simulation rollout search player "
                                              f"({sampled} sampled, {skipped} over the solver's budget), "
                                              "labelled by the solver")


def oracle_set_from_positions(game: Game, states: np.ndarray, count: int, seed: int) -> OracleSet:
    """Up to `count` of the given positions (states [M, S] int16, e.g. a run's self-play positions) labelled by the
    solver as oracle_set labels its own: those after ORACLE_PLIES plies, not over, settled within
    ORACLE_MAX_NODES and not lost for the side to move, drawn in an order shuffled with `seed`."""
    from shared.games.connect4.solver import Connect4Solver

    low, high = ORACLE_PLIES
    plies = states[:, game.num_cells + F_PLY]
    phase = states[(plies >= low) & (plies <= high) & ~game.is_terminal(states)]
    kept, values, labelled, skipped = label_given_positions(
        game, phase, count, seed, Connect4Solver(max_nodes=ORACLE_MAX_NODES).state_values)
    return from_solved_values(kept, values, f"{kept.shape[0]} given positions after {low}-{high} plies "
                                            f"({phase.shape[0]} in that range, {labelled} labelled, {skipped} over "
                                            "the solver's budget), labelled by the solver")
