"""Self-play: play many games at once with one batched search, recording training positions.

Game g uses tree slot g of one `BatchedMCTS`; each move searches only the unfinished games (their slots), with
Dirichlet noise at the roots, then plays a move chosen by `choose_moves` (a proven win at once, never a proven
loss when avoidable, else from the root visits with temperature 1.0 for the first `temperature_moves` plies,
`temperature_final` after) and advances the trees (reuse per SearchConfig.reuse_tree).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from shared.games.base import F_PLAYER, F_WINNER, Game
from shared.search.errors import SearchError
from shared.search.mcts import BatchedMCTS, Evaluator, SearchConfig
from shared.search.policy import choose_moves


@dataclass(frozen=True)
class SelfPlayConfig:
    """How self-play games are played (search settings plus the move-temperature schedule)."""

    search: SearchConfig
    temperature_moves: int = 8     # moves with temperature 1.0, then temperature_final
    temperature_final: float = 0.0
    max_moves: int | None = None   # safety cap in plies (None = game_length_bound); a capped game is a draw


@dataclass
class SelfPlayRecords:
    """One row per position actually played, sorted by (game_id, move_number)."""

    states: np.ndarray        # [T, S] int16 position before the move
    pi: np.ndarray            # [T, A] float32 normalised root visit distribution
    z: np.ndarray             # [T] float32 final result from the side to move at that position
    game_id: np.ndarray       # [T] int32 (0..num_games-1)
    move_number: np.ndarray   # [T] int16 (0-based ply)
    action: np.ndarray        # [T] int16 action played
    root_value: np.ndarray    # [T] float32 search value, side to move
    visit_count: np.ndarray   # [T] int32 root visits
    results: np.ndarray       # [G] int8 winner per game: +1 first player, -1 second, 0 draw
    game_lengths: np.ndarray  # [G] int32


def game_length_bound(game: Game) -> int:
    """A safe upper bound on the plies of any game (cells + passes, doubled): the default move cap."""
    return 2 * (game.num_cells + game.num_actions) + 8


def _record_rows(rows: dict[str, list[np.ndarray]], idx: np.ndarray, states: np.ndarray, visits: np.ndarray,
                 actions: np.ndarray, root_value: np.ndarray, plies: np.ndarray) -> None:
    """Append one searched move per game in idx [K] to the column lists of `rows`."""
    totals = visits.sum(axis=1)                                       # [K] float32, > 0 after a search
    rows["states"].append(states.copy())
    rows["pi"].append((visits / totals[:, None]).astype(np.float32))
    rows["game_id"].append(idx.astype(np.int32))
    rows["move_number"].append(plies.astype(np.int16))
    rows["action"].append(actions.astype(np.int16))
    rows["root_value"].append(root_value.astype(np.float32))
    rows["visit_count"].append(totals.astype(np.int32))


def _finish_records(game: Game, rows: dict[str, list[np.ndarray]], winners: np.ndarray,
                    lengths: np.ndarray) -> SelfPlayRecords:
    """Concatenate the columns, sort by (game, ply) and fill z from each position's side to move."""
    columns = {name: np.concatenate(parts) for name, parts in rows.items()}
    order = np.lexsort((columns["move_number"], columns["game_id"]))
    columns = {name: values[order] for name, values in columns.items()}
    to_move = columns["states"][:, game.num_cells + F_PLAYER].astype(np.float32)
    # z = winner (+1 first player, -1 second, 0 draw) seen from the player to move at that position.
    z = winners[columns["game_id"]].astype(np.float32) * to_move
    return SelfPlayRecords(z=z.astype(np.float32), results=winners.astype(np.int8),
                           game_lengths=lengths.astype(np.int32), **columns)


def play_selfplay_games(game: Game, evaluate: Evaluator, num_games: int, config: SelfPlayConfig,
                        rng: np.random.Generator,
                        progress: Callable[[int, int], None] | None = None) -> SelfPlayRecords:
    """Play `num_games` self-play games concurrently and return every searched position.

    evaluate: see `Evaluator` (one call per search step for all unfinished games). progress(games_done,
    num_games) is called whenever games finish. Returns SelfPlayRecords (T rows, G = num_games games).
    """
    if num_games < 1:
        raise SearchError(f"num_games must be >= 1 (got {num_games})")
    max_moves = config.max_moves if config.max_moves is not None else game_length_bound(game)
    if max_moves < 1:
        raise SearchError(f"max_moves must be >= 1 or None (got {config.max_moves})")
    mcts = BatchedMCTS(game, evaluate, config.search, rng)
    states = game.initial_states(num_games)                          # [G, S] int16
    plies = np.zeros(num_games, np.int32)
    active = np.ones(num_games, bool)
    rows: dict[str, list[np.ndarray]] = {k: [] for k in
                                         ("states", "pi", "game_id", "move_number", "action", "root_value",
                                          "visit_count")}
    while active.any():
        idx = np.flatnonzero(active)
        result = mcts.search(states[idx], add_noise=True, slots=idx)
        temperature = np.where(plies[idx] < config.temperature_moves, 1.0, config.temperature_final)
        actions = choose_moves(result, temperature, rng)
        _record_rows(rows, idx, states[idx], result.visits, actions, result.root_value, plies[idx])
        mcts.advance(actions, slots=idx)
        states[idx] = game.step(states[idx], actions)
        plies[idx] += 1
        finished = game.is_terminal(states[idx]) | (plies[idx] >= max_moves)
        if finished.any():
            active[idx[finished]] = False
            if progress is not None:
                progress(int((~active).sum()), num_games)
    done = game.is_terminal(states)
    # A game stopped by the move cap counts as a draw (winner 0).
    winners = np.where(done, states[:, game.num_cells + F_WINNER], 0)
    return _finish_records(game, rows, winners, plies)
