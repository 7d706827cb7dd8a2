"""Players for matches: batched move choosers over non-terminal states.

Every player maps states [B, S] int16 (all non-terminal, possibly from different games of a match) to actions
[B] int64. Search players start fresh trees at each call (no reuse between calls: the states of successive
calls need not follow each other), search without noise and play the most visited move (temperature 0).
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from shared.games.base import Game
from shared.search.mcts import BatchedMCTS, Evaluator, SearchConfig
from shared.search.minimax import move_values, solve_values
from shared.search.policy import choose_moves
from shared.search.rollout import RolloutEvaluator


class Player(Protocol):
    """A batched move chooser."""

    name: str

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16, all non-terminal -> actions [B] int64."""

    def reset(self) -> None:
        """Forget any state kept between calls (called at the start of a match)."""


def _pick_among_best(scores: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """Argmax per row of scores [B, A]; ties -> lowest index when rng is None, else uniformly random."""
    if rng is None:
        return scores.argmax(axis=1).astype(np.int64)
    best = scores == scores.max(axis=1, keepdims=True)
    return np.where(best, rng.random(scores.shape), -1.0).argmax(axis=1).astype(np.int64)


class RandomPlayer:
    """Uniformly random legal moves."""

    def __init__(self, game: Game, rng: np.random.Generator, name: str = "random") -> None:
        self.game, self.rng, self.name = game, rng, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        legal = self.game.legal_mask(states)
        return _pick_among_best(np.where(legal, 0.0, -1.0), self.rng)

    def reset(self) -> None:
        """Nothing to forget."""


class MinimaxPlayer:
    """Perfect tic-tac-toe: always an optimal move (GameError for any other game).

    Among equally optimal moves: the lowest action index when rng is None, else a uniformly random one.
    """

    def __init__(self, game: Game, rng: np.random.Generator | None = None, name: str = "minimax") -> None:
        solve_values(game)                      # raises GameError for games other than tic-tac-toe
        self.game, self.rng, self.name = game, rng, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        return _pick_among_best(move_values(self.game, states), self.rng)

    def reset(self) -> None:
        """Nothing to forget (the solution is cached per process)."""


class MCTSPlayer:
    """Network-guided PUCT search: no noise, temperature 0 (ties among most visited broken at random by rng)."""

    def __init__(self, game: Game, evaluate: Evaluator, num_simulations: int = 100, c_puct: float = 1.5, *,
                 leaves_per_step: int = 1, fpu_reduction: float = 0.25, rng: np.random.Generator | None = None,
                 name: str = "mcts") -> None:
        config = SearchConfig(num_simulations=num_simulations, c_puct=c_puct, fpu_reduction=fpu_reduction,
                              leaves_per_step=leaves_per_step, reuse_tree=False)
        self.game, self.name = game, name
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.mcts = BatchedMCTS(game, evaluate, config, self.rng)

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        self.mcts.reset()
        result = self.mcts.search(states, add_noise=False)
        return choose_moves(result, 0.0, self.rng)

    def reset(self) -> None:
        self.mcts.reset()


class PureMCTSPlayer(MCTSPlayer):
    """Classic pure MCTS baseline: uniform priors, random-rollout values, `playouts` simulations per move.

    Uses BatchedMCTS with a RolloutEvaluator (rollouts batched over all leaves of a step), c_puct 5 and first-
    play urgency equal to the parent's mean value (fpu_reduction 0).
    """

    def __init__(self, game: Game, playouts: int, rng: np.random.Generator, *, c_puct: float = 5.0,
                 leaves_per_step: int = 8, name: str | None = None) -> None:
        super().__init__(game, RolloutEvaluator(game, rng), num_simulations=playouts, c_puct=c_puct,
                         leaves_per_step=leaves_per_step, fpu_reduction=0.0, rng=rng,
                         name=name or f"pure-mcts-{playouts}")
