"""What a player is (the `Player` protocol) and the generic players: random moves, network-guided search
(`MCTSPlayer`) and the pure-MCTS baseline (`PureMCTSPlayer`). Game-specific players live with their game
(shared.games.<family>, built through the family's descriptor).

Every player maps states [B, S] int16 (all non-terminal, possibly from different games of a match) to actions
[B] int64. Search players start fresh trees at each call (no reuse between calls: the states of successive
calls need not follow each other), search without noise and play the most visited move (temperature 0).
A player that holds outside resources (e.g. GNU Go processes) also has `close()`, which
shared.players.match calls after a match.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np

from shared.games.base import Game
from shared.search.action_selection import choose_moves, pick_among_best
from shared.search.mcts import BatchedMCTS
from shared.search.rollout import RolloutEvaluator
from shared.search.root_solver import root_solver_moves
from shared.search.types import Evaluator, SearchConfig


class Player(Protocol):
    """A batched move chooser."""

    name: str

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16, all non-terminal -> actions [B] int64."""

    def reset(self) -> None:
        """Forget any state kept between calls (called at the start of a match)."""


class RandomPlayer:
    """Uniformly random legal moves."""

    def __init__(self, game: Game, rng: np.random.Generator, name: str = "random") -> None:
        self.game, self.rng, self.name = game, rng, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        legal = self.game.legal_mask(states)
        return pick_among_best(np.where(legal, 0.0, -1.0), self.rng)

    def reset(self) -> None:
        """Nothing to forget."""


class MCTSPlayer:
    """Network-guided PUCT search with `config`: no noise, no tree reuse between calls, temperature 0 (ties among
    the most visited moves broken at random by rng; proven wins and losses first, shared.search.action_selection), then
    the game's solver at the root (root_solver=True; shared.search.root_solver: the game family's solver, where it
    has one)."""

    def __init__(self, game: Game, evaluate: Evaluator, config: SearchConfig, *,
                 rng: np.random.Generator | None = None, name: str = "mcts", root_solver: bool = True) -> None:
        self.game, self.name, self.root_solver = game, name, root_solver
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.mcts = BatchedMCTS(game, evaluate, replace(config, reuse_tree=False), self.rng)

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        """The search's move, or the root solver's where it proves a better one (shared.search.root_solver)."""
        self.mcts.reset()
        result = self.mcts.search(states, add_noise=False)
        actions = choose_moves(result, 0.0, self.rng)
        if not self.root_solver:
            return actions
        return root_solver_moves(self.game, states, actions, result.visits, self.mcts.config.num_simulations)

    def reset(self) -> None:
        self.mcts.reset()


#: The classic pure-MCTS baseline's own search: c_puct 5, first-play urgency equal to the parent's mean value.
PURE_MCTS_SEARCH = SearchConfig(c_puct=5.0, fpu_reduction=0.0, leaves_per_step=8, reuse_tree=False)


class PureMCTSPlayer(MCTSPlayer):
    """Classic pure MCTS baseline: uniform priors, random-rollout values, `playouts` simulations per move.

    Uses BatchedMCTS with a RolloutEvaluator (rollouts batched over all leaves of a step) and PURE_MCTS_SEARCH;
    it is a fixed yardstick, so it does not follow the [search] settings of network players.
    """

    def __init__(self, game: Game, playouts: int, rng: np.random.Generator, *, name: str | None = None) -> None:
        super().__init__(game, RolloutEvaluator(game, rng), replace(PURE_MCTS_SEARCH, num_simulations=playouts),
                         rng=rng, name=name or f"pure-mcts-{playouts}", root_solver=False)
