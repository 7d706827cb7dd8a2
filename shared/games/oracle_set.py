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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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
    kinds: [N] int8, each position's kind as an index into kind_names (in-a-row sets: win in 1, must block, VCF,
        VCF defence), or None for a set of one kind.
    kind_names: the names of the kinds, () without kinds.
    """

    states: np.ndarray
    keeps: np.ndarray
    optimal: np.ndarray | None
    source: str
    kinds: np.ndarray | None = None
    kind_names: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.states.shape[0])


def from_solved_values(states: np.ndarray, values: np.ndarray, source: str) -> OracleSet:
    """An OracleSet from solver values: states [N, S] int16, values [N, A] int64 (1 win, 0 draw, -1 loss, negative
    below that for illegal actions; no position lost) -> keeps = the moves whose value is the row's best."""
    values = np.asarray(values, np.int64).reshape(states.shape[0], -1)
    return OracleSet(np.asarray(states, np.int16), values == values.max(axis=1, keepdims=True), None, source)


def label_given_positions(game: Game, states: np.ndarray, count: int, seed: int,
                          label: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Label positions that were given, not drawn (e.g. a run's self-play positions, already filtered to the
    labeller's phase): the distinct rows of `states` [M, S] int16 in an order shuffled with `seed`, each labelled
    with `label(state [S]) -> [A] int64` (1 win, 0 draw, -1 loss, -2 illegal, UNKNOWN (-3) over the labeller's
    budget), until `count` are kept: those whose every move is settled and whose side to move is not lost.

    Returns (states [N, S] int16, values [N, A] int64, positions labelled, positions skipped over the budget);
    N < count when the given positions run out first."""
    from shared.search.solved import UNKNOWN

    distinct = np.unique(np.asarray(states, np.int16).reshape(-1, game.state_size), axis=0)
    order = np.random.default_rng(seed).permutation(distinct.shape[0])
    kept, values = [], []
    labelled = skipped = 0
    for row in order:
        if len(kept) >= count:
            break
        labelled += 1
        moves = np.asarray(label(distinct[row]), np.int64)
        if np.any(moves == UNKNOWN):
            skipped += 1
        elif moves.max() >= 0:
            kept.append(distinct[row])
            values.append(moves)
    return (np.array(kept, np.int16).reshape(-1, game.state_size),
            np.array(values, np.int64).reshape(-1, game.num_actions), labelled, skipped)


def save_oracle_set(path: Path, oracle: OracleSet) -> None:
    """Write `oracle` to `path` (.npz) atomically."""
    buffer = io.BytesIO()
    arrays = {"states": oracle.states, "keeps": oracle.keeps, "source": np.array(oracle.source)}
    if oracle.optimal is not None:
        arrays["optimal"] = oracle.optimal
    if oracle.kinds is not None:
        arrays["kinds"] = oracle.kinds.astype(np.int8)
        arrays["kind_names"] = np.array(oracle.kind_names)
    np.savez_compressed(buffer, **arrays)
    with atomic_output(path) as handle:
        handle.write(buffer.getvalue())


def cached_oracle_set(path: Path, game: Game, build, count: int, seed: int) -> tuple[OracleSet, float | None]:
    """The set saved at `path`, else `build(game, count, seed)` (a family's oracle_set hook) saved there:
    (set, seconds the build took, None when it was loaded)."""
    if path.exists():
        return load_oracle_set(path, game), None
    started = time.monotonic()
    oracle = build(game, count, seed)
    save_oracle_set(path, oracle)
    return oracle, time.monotonic() - started


def load_oracle_set(path: Path, game: Game) -> OracleSet:
    """The set saved at `path` (ValueError when its shapes do not fit `game`)."""
    with np.load(path, allow_pickle=False) as data:
        states, keeps = data["states"].astype(np.int16), data["keeps"].astype(bool)
        optimal = data["optimal"].astype(bool) if "optimal" in data else None
        source = str(data["source"])
        kinds = data["kinds"].astype(np.int8) if "kinds" in data else None        # sets saved before kinds: none
        kind_names = tuple(str(n) for n in data["kind_names"]) if kinds is not None else ()
    if states.ndim != 2 or states.shape[1] != game.state_size or keeps.shape != (states.shape[0], game.num_actions):
        raise ValueError(f"{path} is not an oracle set of {game.name} (states {states.shape}, keeps {keeps.shape})")
    if kinds is not None and (kinds.shape != (states.shape[0],) or kinds.min(initial=0) < 0
                              or kinds.max(initial=0) >= len(kind_names)):
        raise ValueError(f"{path}: its position kinds do not fit its {states.shape[0]} positions and "
                         f"{len(kind_names)} kind names")
    return OracleSet(states, keeps, optimal, source, kinds, kind_names)


def search_play_positions(game: Game, rng: np.random.Generator, plies: np.ndarray,
                          simulations: int = 64) -> np.ndarray:
    """Positions of games played together by a network-free search player: each move is drawn from the visit counts
    of a rollout MCTS (`simulations` per move, MCTS-solver on, no root noise) over the moves it has not proven lost
    (all legal moves when every one is), so the games are strong but varied. Game g stops after plies[g] moves or
    when it ends. plies [G] int64 -> states [G, S] int16 (the finished ones included: callers drop them)."""
    from shared.search import BatchedMCTS, RolloutEvaluator, SearchConfig

    states = game.initial_states(plies.size)
    mcts = BatchedMCTS(game, RolloutEvaluator(game, rng), SearchConfig(num_simulations=simulations, reuse_tree=False),
                       rng)
    while True:
        live = np.flatnonzero((states[:, game.num_cells + F_PLY] < plies) & ~game.is_terminal(states))
        if live.size == 0:
            return states
        result = mcts.search(states[live], add_noise=False)
        legal = game.legal_mask(states[live])                                   # [L, A] bool
        allowed = legal & (result.proven >= 0)                                  # proven: the mover's view
        allowed = np.where(allowed.any(axis=1, keepdims=True), allowed, legal)
        weights = np.where(allowed, result.visits.astype(np.float64) + 1e-9, 0.0)
        cumulative = (weights / weights.sum(axis=1, keepdims=True)).cumsum(axis=1)
        actions = (cumulative > rng.random((live.size, 1))).argmax(axis=1)
        states[live] = game.step(states[live], actions)
