"""Shared helpers for the game tests: batched tree expansion, dedup, recorded random playouts and a stone-counting
line reference for in-a-row games."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from shared.games import Game

#: Every game the conformance suite runs on: presets plus a non-square Gomoku and a small Go.
CONFORMANCE_GAMES = ("tictactoe", "connect4", "gomoku-6x6-4", "gomoku-15", "gomoku-7x9-4", "othello", "othello-6x6",
                     "go-9x9", "go-5x5")


def expand(game: Game, states: np.ndarray) -> np.ndarray:
    """All children of every state: [B, S] -> [sum of legal counts, S] (terminal states have none)."""
    parent, action = np.nonzero(game.legal_mask(states))
    return game.step(states[parent], action)


def unique_boards(game: Game, states: np.ndarray) -> np.ndarray:
    """Keep one state per distinct board: [B, S] -> [U, S]."""
    cells = np.ascontiguousarray(states[:, : game.num_cells])
    keys = cells.view(np.dtype((np.void, cells.itemsize * cells.shape[1]))).ravel()
    _, first = np.unique(keys, return_index=True)
    return states[np.sort(first)]


@dataclass
class Playout:
    """Random games played in one batch. states[t]: [B, S] before ply t; actions[t]: [B] played (-1 once over)."""

    states: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    final: np.ndarray | None = None

    def all_positions(self) -> np.ndarray:
        """Every recorded position (terminal ones included): [T*B, S]."""
        return np.concatenate(self.states + [self.final])

    def move_lists(self) -> list[list[int]]:
        """The action sequence of each game of the batch."""
        table = np.stack(self.actions, axis=1)  # [B, T]
        return [[int(a) for a in row if a >= 0] for row in table]


def random_playout(game: Game, batch: int, seed: int) -> Playout:
    """Play `batch` games with uniformly random legal moves until all are over, recording every position."""
    rng = np.random.default_rng(seed)
    states = game.initial_states(batch)
    record = Playout()
    while not game.is_terminal(states).all():
        mask = game.legal_mask(states)
        scores = np.where(mask, rng.random(mask.shape), -1.0)
        actions = np.where(mask.any(axis=1), scores.argmax(axis=1), -1)
        record.states.append(states)
        record.actions.append(actions)
        states = game.step(states, np.maximum(actions, 0))
    record.final = states
    return record


def sample_rows(states: np.ndarray, count: int, seed: int) -> np.ndarray:
    """Up to `count` random rows of states [N, S]."""
    rng = np.random.default_rng(seed)
    if len(states) <= count:
        return states
    return states[np.sort(rng.choice(len(states), size=count, replace=False))]


def longest_line_through(board: np.ndarray, row: int, col: int, player: int) -> int:
    """The longest line of `player`'s stones that a stone of `player` at (row, col) would be part of, counted stone
    by stone along the four directions: board [H, W] (+1 / -1 stones, 0 empty) -> int >= 1."""
    height, width = board.shape
    longest = 0
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < height and 0 <= c < width and board[r, c] == player:
                run, r, c = run + 1, r + sign * dr, c + sign * dc
        longest = max(longest, run)
    return longest
