"""The board and the clock of `zeroforge pbrain`: stones in Gomocup coordinates, the position they make for
the network, and a move search capped by the time limits the manager sends.

Coordinates are Gomocup's: (x, y), 0-based, x = column from the left, y = row from the top, so the action
index of zeroforge's Gomoku (row * W + col, row 0 at the top) is y * W + x.

Time: `move_budget` takes the smaller of the per-move limit (INFO timeout_turn) and a share of the match
time left (INFO time_left / an estimate of the moves still to play), keeps a safety margin, and `choose`
searches in slices: a small calibration search first, then, while the measured time (extrapolated as
n ** SEARCH_GROWTH) says a larger search fits before the deadline, one that fills most of the remaining
time (at most --sims simulations). The answer is the most visited move of the largest search that finished.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from shared.games.base import F_LAST, F_PLAYER, F_PLY, Game

OWN, OPPONENT = 1, 2
#: Simulations of the first (calibration) slice of a timed search.
FIRST_SLICE = 16
#: Share of the per-move budget actually planned for searching (the rest absorbs timing noise).
BUDGET_SHARE = 0.8
#: Seconds kept back from every move for reading, writing and Python overhead.
OVERHEAD_S = 0.08
#: Share of the time left after a slice that the next slice may plan to use.
SLICE_SAFETY = 0.7
#: Moves assumed still to play when dividing the match time left (at least).
MIN_MOVES_LEFT = 10
#: A search of n simulations takes about c * n ** SEARCH_GROWTH seconds (measured on gomoku-15: 16 -> 400
#: simulations cost 73x the time, n ** 1.33; deeper trees and larger arrays make each simulation dearer).
SEARCH_GROWTH = 1.4


class BrainError(ValueError):
    """A protocol request that cannot be carried out (bad coordinates, an occupied square, no game)."""


@dataclass
class TimeLimits:
    """What INFO told us, in milliseconds (None = not given). timeout_turn 0 means 'as fast as possible',
    timeout_match 0 means no match limit."""

    timeout_turn: int | None = None
    timeout_match: int | None = None
    time_left: int | None = None
    max_memory: int | None = None
    game_type: int | None = None
    rule: int = 0
    other: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Choice:
    """The engine's move: Gomocup (x, y), the simulations of the search that chose it, its value for the
    brain (side to move), the seconds spent and the planned budget (None = no time limit)."""

    x: int
    y: int
    simulations: int
    value: float
    seconds: float
    budget: float | None


class Brain:
    """Stones on the board (own / opponent) in the order they were placed, and the search that picks a move.

    `search(state [S] int16, simulations) -> (action, value)` is the network-guided search (see cli.pbrain).
    """

    def __init__(self, game: Game, search: Callable[[np.ndarray, int], tuple[int, float]], max_sims: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.game, self.search, self.max_sims, self.clock = game, search, max_sims, clock
        self.limits = TimeLimits()
        self.stones: list[tuple[int, int, int]] = []          # (x, y, OWN | OPPONENT), in placing order

    # ----- the board --------------------------------------------------------------------------------------
    def reset(self) -> None:
        self.stones = []

    def _check(self, x: int, y: int) -> None:
        if not (0 <= x < self.game.width and 0 <= y < self.game.height):
            raise BrainError(f"{x},{y} is off the {self.game.width}x{self.game.height} board "
                             f"(x 0..{self.game.width - 1}, y 0..{self.game.height - 1})")

    def place(self, x: int, y: int, who: int) -> None:
        """Put a stone of `who` (OWN or OPPONENT) on the empty square (x, y); BrainError otherwise."""
        self._check(x, y)
        if any((sx, sy) == (x, y) for sx, sy, _ in self.stones):
            raise BrainError(f"square {x},{y} is already occupied")
        self.stones.append((x, y, who))

    def take_back(self, x: int, y: int) -> None:
        """Remove the stone on (x, y); BrainError when the square is empty."""
        self._check(x, y)
        for i, (sx, sy, _) in enumerate(self.stones):
            if (sx, sy) == (x, y):
                del self.stones[i]
                return
        raise BrainError(f"square {x},{y} is empty; there is nothing to take back")

    def state(self) -> np.ndarray:
        """The position with the brain to move: [S] int16 (shared.games.base layout).

        The brain is the first player (+1) when both sides have as many stones, else the second; the last
        move is the last stone placed."""
        game = self.game
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

    # ----- the clock ----------------------------------------------------------------------------------------
    def move_budget(self) -> float | None:
        """Seconds this move may search (None: no limit given, search --sims simulations)."""
        limits, shares = self.limits, []
        if limits.timeout_turn is not None:
            shares.append(max(0.0, limits.timeout_turn / 1000.0))
        if limits.time_left is not None and limits.timeout_match != 0:
            empty = self.game.num_cells - len(self.stones)
            shares.append(max(0.0, limits.time_left / 1000.0) / max(MIN_MOVES_LEFT, empty // 2))
        if not shares:
            return None
        return max(0.0, min(shares) * BUDGET_SHARE - OVERHEAD_S)

    def choose(self) -> Choice:
        """Search the position for the brain's move within the time budget and place it on the board."""
        if len(self.stones) >= self.game.num_cells:
            raise BrainError("the board is full; there is no move left")
        start = self.clock()
        budget = self.move_budget()
        deadline = None if budget is None else start + budget
        state = self.state()
        sims = self.max_sims if deadline is None else (1 if budget <= 0 else min(self.max_sims, FIRST_SLICE))
        done = 0
        while True:
            began = self.clock()
            action, value = self.search(state, sims)
            done, elapsed = sims, max(self.clock() - began, 1e-6)
            if deadline is None or sims >= self.max_sims:
                break
            room = (deadline - self.clock()) * SLICE_SAFETY
            fits = int(sims * (room / elapsed) ** (1.0 / SEARCH_GROWTH)) if room > 0 else 0
            if fits <= sims:
                break
            sims = min(self.max_sims, fits)
        x, y = action % self.game.width, action // self.game.width
        self.place(x, y, OWN)
        return Choice(x, y, done, value, self.clock() - start, budget)
