"""An evaluator without a network: uniform priors and the result of one random playout (the classic pure MCTS).

Rollouts are vectorised over the M states: every unfinished playout takes one uniformly random legal move per
iteration, all together, until all have finished. A game with its own playout policy (a `playout_winners(states,
rng)` method) uses that instead, e.g. compiled playouts that follow a game's own playout policy, or the same
move distribution as `random_playouts` without a numpy call per move.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_WINNER, Game


class RolloutEvaluator:
    """evaluate(states [M, S] int16) -> (zeros [M, A] float32, values [M] float32 from a random playout).

    The value is the playout's final result from the point of view of the player to move in the given state
    (winner * player_to_move). A playout still running after `max_plies` plies (never reached by the built-in
    games) counts as a draw.
    """

    def __init__(self, game: Game, rng: np.random.Generator, max_plies: int | None = None) -> None:
        self.game, self.rng = game, rng
        self.max_plies = max_plies if max_plies is not None else 4 * game.num_actions + 8

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        own_policy = getattr(self.game, "playout_winners", None)
        if own_policy is not None:
            winner = own_policy(states, self.rng).astype(np.float32)
        else:
            finals = self.random_playouts(states)
            done = self.game.is_terminal(finals)
            winner = np.where(done, finals[:, self.game.num_cells + F_WINNER], 0).astype(np.float32)
        # Sign: the winner is +1 (first player) / -1 (second); multiply by the mover of the STARTING state.
        values = winner * self.game.to_play(states).astype(np.float32)
        logits = np.zeros((states.shape[0], self.game.num_actions), np.float32)
        return logits, values

    def random_playouts(self, states: np.ndarray) -> np.ndarray:
        """Play uniformly random legal moves until each game ends: [M, S] int16 -> final states [M, S] int16."""
        current = np.array(states, dtype=np.int16, copy=True)
        live = ~self.game.is_terminal(current)
        for _ in range(self.max_plies):
            idx = np.flatnonzero(live)
            if idx.size == 0:
                break
            legal = self.game.legal_mask(current[idx])                   # [K, A] bool
            # A uniform random score per legal action; the argmax is a uniformly random legal action.
            scores = np.where(legal, self.rng.random(legal.shape, dtype=np.float32), np.float32(-1.0))
            current[idx] = self.game.step(current[idx], scores.argmax(axis=1))
            live[idx] = ~self.game.is_terminal(current[idx])
        return current
