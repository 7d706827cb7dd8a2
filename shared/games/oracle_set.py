"""The oracle set of a run: labelled positions on which every generation's best network is measured.

Each family that has exact labels for its games registers an `oracle_set(game, count, seed) -> OracleSet` builder
on its descriptor (shared.games.family.GameFamily.oracle_set); games without one (Go) have no oracle curve. A set
holds, per position, the moves that keep the position's exact outcome (a win stays a win, a draw a draw) and,
where the labeller knows more than win/draw/loss, the moves with the best exact score. Sets are saved as .npz
(DataLayout.oracle_set_path), built once per run with a fixed seed, so every generation is measured on the same
positions.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shared.atomic import atomic_output
from shared.games.base import F_PLY, Game


@dataclass(frozen=True)
class OracleSet:
    """Labelled positions of one game.

    states: [N, S] int16, non-terminal positions whose side to move is not lost.
    keeps: [N, A] bool, the legal moves that keep the position's exact outcome (at least one per row).
    optimal: [N, A] bool, the legal moves with the best exact score (a subset of keeps), or None when the labeller
        knows only win/draw/loss (the optimal-move rate then equals the outcome-keeping rate).
    source: one line saying how the positions were drawn and labelled.
    """

    states: np.ndarray
    keeps: np.ndarray
    optimal: np.ndarray | None
    source: str

    def __len__(self) -> int:
        return int(self.states.shape[0])


def from_solved_values(states: np.ndarray, values: np.ndarray, source: str) -> OracleSet:
    """An OracleSet from solver values: states [N, S] int16, values [N, A] int64 (1 win, 0 draw, -1 loss, negative
    below that for illegal actions; no position lost) -> keeps = the moves whose value is the row's best."""
    values = np.asarray(values, np.int64).reshape(states.shape[0], -1)
    return OracleSet(np.asarray(states, np.int16), values == values.max(axis=1, keepdims=True), None, source)


def save_oracle_set(path: Path, oracle: OracleSet) -> None:
    """Write `oracle` to `path` (.npz) atomically."""
    buffer = io.BytesIO()
    arrays = {"states": oracle.states, "keeps": oracle.keeps, "source": np.array(oracle.source)}
    if oracle.optimal is not None:
        arrays["optimal"] = oracle.optimal
    np.savez_compressed(buffer, **arrays)
    with atomic_output(path) as handle:
        handle.write(buffer.getvalue())


def load_oracle_set(path: Path, game: Game) -> OracleSet:
    """The set saved at `path` (ValueError when its shapes do not fit `game`)."""
    with np.load(path, allow_pickle=False) as data:
        states, keeps = data["states"].astype(np.int16), data["keeps"].astype(bool)
        optimal = data["optimal"].astype(bool) if "optimal" in data else None
        source = str(data["source"])
    if states.ndim != 2 or states.shape[1] != game.state_size or keeps.shape != (states.shape[0], game.num_actions):
        raise ValueError(f"{path} is not an oracle set of {game.name} (states {states.shape}, keeps {keeps.shape})")
    return OracleSet(states, keeps, optimal, source)


def careful_position(game: Game, rng: np.random.Generator, plies: int) -> np.ndarray:
    """A non-terminal position after `plies` moves of a player that never blunders in one move: each move is drawn
    uniformly from those that neither end the game nor let the opponent win at once (`Game.move_outcomes` == 0),
    or, when every move loses at once, from the legal ones that do not end the game; a game where every move ends
    it starts over. Returns [S] int16."""
    state = game.initial_states(1)
    while int(state[0, game.num_cells + F_PLY]) < plies:
        legal = game.legal_mask(state)[0]
        candidates = np.flatnonzero(legal)
        children = game.step(np.repeat(state, candidates.size, axis=0), candidates)
        open_ = ~game.is_terminal(children)
        quiet = open_ & (game.move_outcomes(state)[0][candidates] == 0)
        pool = np.flatnonzero(quiet) if quiet.any() else np.flatnonzero(open_)
        state = children[[rng.choice(pool)]] if pool.size else game.initial_states(1)
    return state[0]
