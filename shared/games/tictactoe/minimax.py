"""Exact game values of tic-tac-toe by negamax over every reachable position (solved once, then cached), and
the perfect player that plays by them (`MinimaxPlayer`, the "minimax" baseline).

Positions are enumerated ply by ply with the batched game API; values are then computed backwards from the last
ply: value(s) = max over legal a of -value(step(s, a)) (negamax: a child's value is from the opponent's view).
Keys are the board cells' bytes: in tic-tac-toe the board alone determines the side to move and the result.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from shared.games.base import Game, GameError
from shared.search.action_selection import pick_among_best


def _children(game: Game, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every legal move of every state: -> (row [K] int, action [K] int, child states [K, S] int16)."""
    rows, actions = np.nonzero(game.legal_mask(states))
    return rows, actions, game.step(states[rows], actions)


def board_keys(game: Game, states: np.ndarray) -> list[bytes]:
    cells = np.ascontiguousarray(states[:, : game.num_cells])
    return [row.tobytes() for row in cells]


def reachable_positions(game: Game) -> list[np.ndarray]:
    """Distinct reachable positions, one [n_k, S] int16 array per ply k."""
    levels = [game.initial_states(1)]
    while True:
        live = levels[-1][~game.is_terminal(levels[-1])]
        if live.shape[0] == 0:
            return levels
        _, _, kids = _children(game, live)
        _, first = np.unique(kids[:, : game.num_cells], axis=0, return_index=True)
        levels.append(kids[np.sort(first)])


@lru_cache(maxsize=8)
def solve_values(game: Game, scored: bool = False) -> dict[bytes, int]:
    """Value of every reachable position, from the side to move: board bytes -> +1 win, 0 draw, -1 loss.

    scored: the exact score instead, whose sign is that value: a finished game scores +-(1 + its empty cells) for
    the side to move, so that of two moves that keep a win the quicker one scores higher (of two that lose, the
    slower one)."""
    if game.name != "tictactoe":
        raise GameError(f"minimax solving is only available for tictactoe, not {game.name}; "
                        "use PureMCTSPlayer or MCTSPlayer for other games")
    values: dict[bytes, int] = {}
    for level in reversed(reachable_positions(game)):
        keys = board_keys(game, level)
        done = game.is_terminal(level)
        result = game.terminal_value(level).astype(np.int64)          # side to move at each position
        if scored:
            result *= 1 + np.count_nonzero(level[:, : game.num_cells] == 0, axis=1)
        live = np.flatnonzero(~done)
        if live.size:
            rows, _, kids = _children(game, level[live])
            # Negamax sign flip: a child's value is from the opponent's view.
            child_values = -np.array([values[k] for k in board_keys(game, kids)], np.int64)
            best = np.full(live.size, -(game.num_cells + 2), np.int64)
            np.maximum.at(best, rows, child_values)
            result[live] = best
        values.update(zip(keys, result.tolist()))
    return values


def move_values(game: Game, states: np.ndarray, scored: bool = False) -> np.ndarray:
    """Exact value (scored: score, see solve_values) of each move for the player to move: states [B, S] -> [B, A]
    float32 (-inf for illegal moves)."""
    values = solve_values(game, scored)
    out = np.full((states.shape[0], game.num_actions), -np.inf, np.float32)
    rows, actions, kids = _children(game, states)
    # Sign flip: the child's value is from the opponent's view.
    out[rows, actions] = [-values[k] for k in board_keys(game, kids)]
    return out


class MinimaxPlayer:
    """Perfect tic-tac-toe: always an optimal move (GameError for any other game).

    Among equally optimal moves: the lowest action index when rng is None, else a uniformly random one.
    """

    def __init__(self, game: Game, rng: np.random.Generator | None = None, name: str = "minimax") -> None:
        solve_values(game)                      # raises GameError for games other than tic-tac-toe
        self.game, self.rng, self.name = game, rng, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        return pick_among_best(move_values(self.game, states), self.rng)

    def reset(self) -> None:
        """Nothing to forget (the solution is cached per process)."""
