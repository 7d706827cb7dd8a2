"""The board of a Gomocup (Piskvork) brain: the stones in Gomocup coordinates, in the order they were placed, and
the position they make for the search.

Coordinates are Gomocup's: (x, y), 0-based, x = column from the left, y = row from the top, so the action index
of a grid game (row * W + col, row 0 at the top) is y * W + x. Stones are the brain's own (OWN) or the
opponent's (OPPONENT); the brain is the first player when both sides have as many stones, else the second.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_LAST, F_PLAYER, F_PLY, Game

#: Who a stone belongs to, as the protocol's BOARD lines number them.
OWN, OPPONENT = 1, 2


class GomocupBoardError(ValueError):
    """A request the board cannot carry out (off the board, an occupied or empty square, a full board)."""


class GomocupBoard:
    """Stones on the board of `game` (a grid game: width, height, num_cells), own and opponent's, in placing order."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.stones: list[tuple[int, int, int]] = []          # (x, y, OWN | OPPONENT), in placing order

    def reset(self) -> None:
        """An empty board."""
        self.stones = []

    @property
    def empty_cells(self) -> int:
        """The number of empty squares."""
        return self.game.num_cells - len(self.stones)

    def _check(self, x: int, y: int) -> None:
        if not (0 <= x < self.game.width and 0 <= y < self.game.height):
            raise GomocupBoardError(f"{x},{y} is off the {self.game.width}x{self.game.height} board "
                                    f"(x 0..{self.game.width - 1}, y 0..{self.game.height - 1})")

    def place(self, x: int, y: int, who: int) -> None:
        """Put a stone of `who` (OWN or OPPONENT) on the empty square (x, y); GomocupBoardError otherwise."""
        self._check(x, y)
        if any((sx, sy) == (x, y) for sx, sy, _ in self.stones):
            raise GomocupBoardError(f"square {x},{y} is already occupied")
        self.stones.append((x, y, who))

    def place_action(self, action: int, who: int) -> tuple[int, int]:
        """Put a stone of `who` on the square of the game's `action` index; returns its Gomocup (x, y)."""
        x, y = int(action) % self.game.width, int(action) // self.game.width
        self.place(x, y, who)
        return x, y

    def take_back(self, x: int, y: int) -> None:
        """Remove the stone on (x, y); GomocupBoardError when the square is empty."""
        self._check(x, y)
        for i, (sx, sy, _) in enumerate(self.stones):
            if (sx, sy) == (x, y):
                del self.stones[i]
                return
        raise GomocupBoardError(f"square {x},{y} is empty; there is nothing to take back")

    def state(self) -> np.ndarray:
        """The position with the brain to move: [S] int16 (shared.games.base layout); GomocupBoardError when the
        board is full. The last move is the last stone placed."""
        game = self.game
        if self.empty_cells <= 0:
            raise GomocupBoardError("the board is full; there is no move left")
        own = sum(1 for *_, who in self.stones if who == OWN)
        opponent = len(self.stones) - own
        colour = 1 if own >= opponent else -1
        state = np.zeros(game.state_size, np.int16)
        for x, y, who in self.stones:
            state[y * game.width + x] = colour if who == OWN else -colour
        base = game.num_cells
        state[base + F_PLAYER] = colour
        state[base + F_LAST] = self.stones[-1][1] * game.width + self.stones[-1][0] if self.stones else -1
        state[base + F_PLY] = len(self.stones)
        return state
