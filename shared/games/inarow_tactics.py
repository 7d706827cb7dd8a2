"""Positions of in-a-row games labelled by the rules alone (`Game.move_outcomes`), from batches of random games
whose moves never win at once (so threats pile up): "win in 1" positions (the side to move can complete its line;
a move keeps it when it does) and "must block" positions (no win for the side to move, and some moves but not all
let the opponent win at once; a move keeps it when it does not)."""
from __future__ import annotations

import numpy as np

from shared.games.inarow import InARowGame

#: Kinds of rule-labelled positions, in report order.
LINE_KINDS = ("win_in_1", "must_block")


def line_tactic_positions(game: InARowGame, count: int, rng: np.random.Generator, games: int = 64,
                          take: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`count` positions of each kind in LINE_KINDS (module docstring) from `games` random games played together;
    each qualifying position is taken with probability `take` (so consecutive positions of one game rarely both).

    Returns (states [N, S] int16, kinds [N] int64 (index into LINE_KINDS), outcomes [N, A] int8 of
    `game.move_outcomes`, with illegal actions set to -2)."""
    found: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {0: [], 1: []}
    states = game.initial_states(games)
    while min(len(v) for v in found.values()) < count:
        legal = game.legal_mask(states)                                        # [G, A] bool
        outcomes = np.where(legal, game.move_outcomes(states), -2).astype(np.int8)
        win = (outcomes == 1).any(axis=1)
        block = ~win & (outcomes == -1).any(axis=1) & (outcomes == 0).any(axis=1)
        for kind, rows in ((0, win), (1, block)):
            for row in np.flatnonzero(rows & (rng.random(games) < take)):
                if len(found[kind]) < count:
                    found[kind].append((states[row].copy(), outcomes[row]))
        playable = legal & (outcomes != 1)                                      # never end the game by a win
        actions = np.array([rng.choice(np.flatnonzero(p)) if p.any() else -1 for p in playable], np.int64)
        stuck = actions < 0
        actions[stuck] = 0
        states = np.where(stuck[:, None], game.initial_states(games), states)
        states[~stuck] = game.step(states[~stuck], actions[~stuck])
        over = game.is_terminal(states)                                         # a full board
        states[over] = game.initial_states(int(over.sum()))
    rows = [(state, kind, outcome) for kind in (0, 1) for state, outcome in found[kind]]
    return (np.stack([r[0] for r in rows]), np.array([r[1] for r in rows], np.int64),
            np.stack([r[2] for r in rows]))
