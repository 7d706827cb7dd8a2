"""Self-play: play many games at once with one batched search, recording training positions.

Game g uses tree slot g of one `BatchedMCTS`; each move searches only the unfinished games (their slots), with
Dirichlet noise at the roots, then plays a move chosen by `choose_moves` (a proven win at once, never a proven
loss when avoidable, else from the root visits with temperature 1.0 for the first `temperature_moves` plies,
`temperature_final` after) and advances the trees (reuse per SearchConfig.reuse_tree).

Overlap (SelfPlayConfig.overlap): the games are split into two groups (even and odd game ids), each with its own
trees and its own random stream (`rng.spawn(2)`), played by two threads; the evaluator is called under a lock, so
while the network evaluates one group's leaves (torch releases the GIL in its kernels) the other group runs its
search steps (the numba kernels are compiled nogil). The games are the same in distribution, not move for move;
with overlap off (the default) the games are exactly those of one group over all games for the same seed.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
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
    overlap: bool = False          # two game groups alternate between search and network (module docstring)


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


class _SerialEvaluator:
    """An Evaluator called under a lock: one forward pass at a time, whichever group asks."""

    def __init__(self, evaluate: Evaluator) -> None:
        self.evaluate = evaluate
        self.lock = threading.Lock()

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """states [M, S] int16 -> (logits [M, A] float32, values [M] float32)."""
        with self.lock:
            return self.evaluate(states)


class _Stopped(Exception):
    """The other game group failed; this one stops at its next move."""


def _play_group(game: Game, evaluate: Evaluator, games: np.ndarray, config: SelfPlayConfig, max_moves: int,
                rng: np.random.Generator, states: np.ndarray, plies: np.ndarray,
                on_finished: Callable[[int], None], stop: threading.Event | None = None) -> dict[str, list]:
    """Play the games with ids `games` [K] (rows of states [G, S] int16 and plies [G] int32, updated in place).

    One BatchedMCTS whose slot g' holds games[g']; returns the recorded rows (global game ids). on_finished(n)
    is called with the number of games that just finished.
    """
    mcts = BatchedMCTS(game, evaluate, config.search, rng)
    active = np.ones(games.shape[0], bool)
    rows: dict[str, list[np.ndarray]] = {k: [] for k in
                                         ("states", "pi", "game_id", "move_number", "action", "root_value",
                                          "visit_count")}
    try:
        while active.any():
            if stop is not None and stop.is_set():
                raise _Stopped()
            _play_move(game, mcts, games, active, config, max_moves, rng, states, plies, rows, on_finished)
    except _Stopped:
        raise
    except BaseException:
        if stop is not None:
            stop.set()  # the other group stops at its next move
        raise
    return rows


def _play_move(game: Game, mcts: BatchedMCTS, games: np.ndarray, active: np.ndarray, config: SelfPlayConfig,
               max_moves: int, rng: np.random.Generator, states: np.ndarray, plies: np.ndarray,
               rows: dict[str, list], on_finished: Callable[[int], None]) -> None:
    """Search and play one move in every active game of a group (active [K] bool, updated in place)."""
    local = np.flatnonzero(active)
    idx = games[local]
    result = mcts.search(states[idx], add_noise=True, slots=local)
    temperature = np.where(plies[idx] < config.temperature_moves, 1.0, config.temperature_final)
    actions = choose_moves(result, temperature, rng)
    _record_rows(rows, idx, states[idx], result.visits, actions, result.root_value, plies[idx])
    mcts.advance(actions, slots=local)
    states[idx] = game.step(states[idx], actions)
    plies[idx] += 1
    finished = game.is_terminal(states[idx]) | (plies[idx] >= max_moves)
    if finished.any():
        active[local[finished]] = False
        on_finished(int(finished.sum()))


def play_selfplay_games(game: Game, evaluate: Evaluator, num_games: int, config: SelfPlayConfig,
                        rng: np.random.Generator,
                        progress: Callable[[int, int], None] | None = None) -> SelfPlayRecords:
    """Play `num_games` self-play games concurrently and return every searched position.

    evaluate: see `Evaluator` (one call per search step for all unfinished games of a group; with
    config.overlap, two groups call it in turn from two threads, never at the same time). progress(games_done,
    num_games) is called whenever games finish. Returns SelfPlayRecords (T rows, G = num_games games).
    """
    if num_games < 1:
        raise SearchError(f"num_games must be >= 1 (got {num_games})")
    max_moves = config.max_moves if config.max_moves is not None else game_length_bound(game)
    if max_moves < 1:
        raise SearchError(f"max_moves must be >= 1 or None (got {config.max_moves})")
    states = game.initial_states(num_games)                          # [G, S] int16
    plies = np.zeros(num_games, np.int32)
    done_lock = threading.Lock()
    done = [0]

    def on_finished(count: int) -> None:
        with done_lock:
            done[0] += count
            if progress is not None:
                progress(done[0], num_games)

    all_games = np.arange(num_games)
    if not config.overlap or num_games < 2:
        parts = [_play_group(game, evaluate, all_games, config, max_moves, rng, states, plies, on_finished)]
    else:
        parts = _play_overlapped(game, _SerialEvaluator(evaluate), all_games, config, max_moves, rng, states,
                                 plies, on_finished)
    rows = {name: [chunk for part in parts for chunk in part[name]] for name in parts[0]}
    terminal = game.is_terminal(states)
    # A game stopped by the move cap counts as a draw (winner 0).
    winners = np.where(terminal, states[:, game.num_cells + F_WINNER], 0)
    return _finish_records(game, rows, winners, plies)


def _play_overlapped(game: Game, evaluate: Evaluator, games: np.ndarray, config: SelfPlayConfig, max_moves: int,
                     rng: np.random.Generator, states: np.ndarray, plies: np.ndarray,
                     on_finished: Callable[[int], None]) -> list[dict[str, list]]:
    """Two groups (even, odd game ids) played by this thread and one helper thread; see the module docstring.

    A failure in either group stops the other at its next move and is raised here; the helper thread is
    always joined before returning.
    """
    group_rngs = rng.spawn(2)
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="selfplay-overlap") as pool:
        other = pool.submit(_play_group, game, evaluate, games[1::2], config, max_moves, group_rngs[1], states,
                            plies, on_finished, stop)
        try:
            mine = _play_group(game, evaluate, games[0::2], config, max_moves, group_rngs[0], states, plies,
                               on_finished, stop)
        except _Stopped:
            other.result()  # the helper failed first: raise its error
            raise
        theirs = other.result()
    return [mine, theirs]
