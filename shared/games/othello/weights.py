"""The classic positional evaluation of Othello: square weights, searched one ply deep.

Each square has a fixed weight: corners are the best squares (they can never be flipped), the squares next to
a corner are the worst (they hand the corner to the opponent: the diagonal "X-squares" most, the edge
"C-squares" less), the other edge squares are good, the second ring is slightly bad and the centre neutral.
On 8x8 this gives the widely used table

    100 -20  10   5   5  10 -20 100
    -20 -50  -2  -2  -2  -2 -50 -20
     10  -2  -1  -1  -1  -1  -2  10
      5  -2  -1  -1  -1  -1  -2   5      (and its mirror images below)

and `square_weights` builds the same rule for the 6x6 board. The player tries every legal move, scores the
position after it as sum(weight * disc) from the mover's side (+1 own disc, -1 opponent disc) and plays the best
one; a move that ends the game is scored by its result first (a win beats any position, a loss is worse than
any). It is a fixed yardstick for Othello models, like pure-mcts for the other games.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_PLAYER, F_WINNER, Game, GameError

#: Weights by ring (0 = edge) and position along the ring, for the board sizes Othello is played on.
CORNER, C_SQUARE, X_SQUARE, EDGE_NEAR, EDGE_FAR, SECOND_RING, INNER = 100, -20, -50, 10, 5, -2, -1
#: Any game result outweighs every board score (the largest board score is below 100 * cells).
RESULT_SCORE = 1_000_000


def square_weights(size: int) -> np.ndarray:
    """The square weights of a size x size board (size >= 4): [size, size] int32, symmetric under the 8
    symmetries of the square."""
    if size < 4:
        raise GameError(f"square weights need a board of at least 4x4, got {size}x{size}")
    weights = np.full((size, size), INNER, np.int32)
    last = size - 1
    for r in range(size):
        for c in range(size):
            ring = min(r, c, last - r, last - c)
            if ring == 0:
                # distance along the edge to the nearest corner
                edge_pos = min(c, last - c) if r in (0, last) else min(r, last - r)
                weights[r, c] = (CORNER, C_SQUARE, EDGE_NEAR)[edge_pos] if edge_pos < 3 else EDGE_FAR
            elif ring == 1:
                diagonal = min(r, last - r) == 1 and min(c, last - c) == 1
                weights[r, c] = X_SQUARE if diagonal else SECOND_RING
    return weights


class WeightsPlayer:
    """One-ply square-weights Othello player (see the module docstring); ties broken at random by rng."""

    def __init__(self, game: Game, rng: np.random.Generator, name: str = "weights") -> None:
        if game.family != "othello":
            raise GameError(f"the weights player plays Othello only, not {game.name}; use pure-mcts:N")
        self.game, self.rng, self.name = game, rng, name
        self.weights = square_weights(game.height).reshape(-1).astype(np.int64)   # [H*W]

    def move_scores(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16, non-terminal -> scores [B, A] float64 from the mover's side (-inf: illegal)."""
        game, cells = self.game, self.game.num_cells
        legal = game.legal_mask(states)                                   # [B, A] bool
        rows, actions = np.nonzero(legal)                                 # one (position, move) pair per row
        after = game.step(states[rows], actions)                          # [P, S]
        mover = states[rows, cells + F_PLAYER].astype(np.int64)           # +1 black, -1 white
        board = (after[:, :cells].astype(np.int64) * self.weights).sum(axis=1) * mover
        over = game.is_terminal(after)
        result = after[:, cells + F_WINNER].astype(np.int64) * mover      # +1 mover won, -1 lost, 0 draw
        score = np.where(over, result * RESULT_SCORE, board).astype(np.float64)
        scores = np.full(legal.shape, -np.inf)
        scores[rows, actions] = score
        return scores

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16, non-terminal -> actions [B] int64 (the best-scoring move, random among ties)."""
        scores = self.move_scores(states)
        best = scores == scores.max(axis=1, keepdims=True)
        return np.where(best, self.rng.random(scores.shape), -1.0).argmax(axis=1).astype(np.int64)

    def reset(self) -> None:
        """Nothing to forget."""
