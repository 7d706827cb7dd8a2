"""Self-play-like records for storage tests: real games played with random legal moves (no search needed)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class FakeSelfPlayRecords:
    """Same fields as shared.search.selfplay.SelfPlayRecords (see /work/zf_interfaces.md section 2)."""

    states: np.ndarray        # [T, S] int16
    pi: np.ndarray            # [T, A] float32
    z: np.ndarray             # [T] float32, side to move
    game_id: np.ndarray       # [T] int32
    move_number: np.ndarray   # [T] int16
    action: np.ndarray        # [T] int16
    root_value: np.ndarray    # [T] float32
    visit_count: np.ndarray   # [T] int32
    results: np.ndarray       # [G] int8
    game_lengths: np.ndarray  # [G] int32


def random_records(game, num_games: int, seed: int = 0, simulations: int = 16) -> FakeSelfPlayRecords:
    """Play `num_games` random games of `game` in one batch; rows interleaved by ply like a batched self-play loop.

    pi is a normalised random visit distribution over the legal moves whose argmax is the move played.
    """
    rng = np.random.default_rng(seed)
    states = game.initial_states(num_games)
    rows: list[tuple] = []
    ply = 0
    while not game.is_terminal(states).all():
        live = np.flatnonzero(~game.is_terminal(states))
        mask = game.legal_mask(states[live])
        visits = rng.integers(0, simulations, size=mask.shape) * mask  # [L, A]
        visits[np.arange(len(live)), np.argmax(mask * rng.random(mask.shape), axis=1)] += simulations  # the played move
        actions = np.argmax(visits, axis=1)
        for i, g in enumerate(live):
            rows.append((states[g].copy(), visits[i] / visits[i].sum(), g, ply, actions[i], rng.uniform(-1, 1), visits[i].sum()))
        full_actions = np.zeros(num_games, dtype=np.int64)
        full_actions[live] = actions
        stepped = game.step(states[live], actions)
        states = states.copy()
        states[live] = stepped
        ply += 1
    results = states[:, game.num_cells + 4].astype(np.int8)  # F_WINNER
    game_ids = np.array([r[2] for r in rows], dtype=np.int32)
    row_states = np.stack([r[0] for r in rows]).astype(np.int16)
    to_move = row_states[:, game.num_cells + 0].astype(np.float32)  # F_PLAYER
    return FakeSelfPlayRecords(
        states=row_states,
        pi=np.stack([r[1] for r in rows]).astype(np.float32),
        z=results[game_ids].astype(np.float32) * to_move,  # winner seen from the side to move
        game_id=game_ids,
        move_number=np.array([r[3] for r in rows], dtype=np.int16),
        action=np.array([r[4] for r in rows], dtype=np.int16),
        root_value=np.array([r[5] for r in rows], dtype=np.float32),
        visit_count=np.array([r[6] for r in rows], dtype=np.int32),
        results=results,
        game_lengths=np.bincount(game_ids, minlength=num_games).astype(np.int32),
    )


def make_dirs(layout):
    """Create a DataLayout's game directories (shards, quarantine, models, checkpoints); returns the layout."""
    for path in (layout.shards_dir, layout.quarantine_dir, layout.registry_dir, layout.checkpoints_dir):
        path.mkdir(parents=True, exist_ok=True)
    return layout
