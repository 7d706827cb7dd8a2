"""Positions reached by uniformly random legal moves, for labelled test sets (the tactics benchmark, the solvers'
tests): a position after a number of plies, or an endgame with at most a number of empty squares."""
from __future__ import annotations

import numpy as np

from shared.games.base import F_PLY, Game


def random_position(game: Game, rng: np.random.Generator, plies: int) -> np.ndarray:
    """A non-terminal position after `plies` uniformly random moves that do not end the game (a game in which
    every move would end it starts over): [S] int16."""
    state = game.initial_states(1)
    while int(state[0, game.num_cells + F_PLY]) < plies:
        legal = np.flatnonzero(game.legal_mask(state)[0])
        children = game.step(np.repeat(state, legal.size, axis=0), legal)
        open_ = np.flatnonzero(~game.is_terminal(children))
        state = children[[rng.choice(open_)]] if open_.size else game.initial_states(1)
    return state[0]


def random_endgame(game: Game, rng: np.random.Generator, empties: int) -> np.ndarray:
    """A live position reached by uniformly random moves, the first with at most `empties` empty squares (a game
    that ends before starts over): [S] int16."""
    while True:
        state = game.initial_states(1)
        while not game.is_terminal(state)[0]:
            if np.count_nonzero(state[0, : game.num_cells] == 0) <= empties:
                return state[0]
            state = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))
