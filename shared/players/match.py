"""Paired matches between two player specs: the one match function of the gate, the anchor match and `eval`.

A match of `games` games uses `games / 2` openings from `opening_set(game, games / 2, seed=opening_seed)` (of
`opening_plies` plies of any move when given, else the game family's plan), each played twice with colours
swapped (no noise, temperature 0). The openings are split into `jobs` interleaved chunks (`split_openings`);
chunk i is played by `play_match_chunk` with player seeds (seed + i, seed + i + 1). The gate runs each chunk as
an rq job (services.gatekeeper.match_job); `evaluate_players` runs the same chunks in this process, or in a pool
of `processes` spawned processes (one torch thread each), one chunk per task. With the same players, search,
openings, chunks and seed all of them give the same games. Everything is from player A's side; shared.stats
turns the game scores into W/D/L, the score and its interval.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from shared.games import make_game_from_params
from shared.games.base import Game
from shared.players.arena import play_match
from shared.players.spec import build_player
from shared.search.openings import opening_set
from shared.search.types import SearchConfig
from shared.stats import EvalStats, evaluate_pairs, pair_means

#: The most games one match may have (the gate's own bound, GateSection.games).
MAX_MATCH_GAMES = 100_000

#: Progress callback: (games finished, games in total, A's score so far: the mean pair score, from A's side).
ProgressFn = Callable[[int, int, float], None]


class EvaluationError(ValueError):
    """Bad match settings (an odd game count, ...); the message says how to fix them."""


@dataclass(frozen=True)
class PairedGames:
    """The games of one chunk: A's points [P, 2] float64 (1 win, .5 draw, 0 loss) for openings `openings` [P]."""

    openings: list[int]
    game_scores: np.ndarray
    seconds: float


def check_game_count(games: int) -> int:
    """Return `games` if it is an even number from 2 to MAX_MATCH_GAMES, else EvaluationError."""
    if isinstance(games, bool) or not isinstance(games, int) or not 2 <= games <= MAX_MATCH_GAMES or games % 2:
        raise EvaluationError(
            f"games must be an even number from 2 to {MAX_MATCH_GAMES:,} (got {games}): each opening is played "
            "twice with colours swapped"
        )
    return games


def split_openings(num_openings: int, jobs: int) -> list[list[int]]:
    """Split opening indices 0..num_openings-1 into `jobs` interleaved chunks (empty chunks dropped)."""
    chunks = [list(range(i, num_openings, jobs)) for i in range(max(1, jobs))]
    return [c for c in chunks if c]


def close_players(*players) -> None:
    """Release what players hold outside this process (GNU Go's processes): call `close()` where there is one."""
    for player in players:
        close = getattr(player, "close", None)
        if close is not None:
            close()


def play_match_chunk(game: Game, spec_a: str, spec_b: str, *, search: SearchConfig, opening_indices: list[int],
                     num_openings: int, opening_seed: int, seed: int, registry_dir: Path | None = None,
                     device: str = "cpu", stop: Callable[[], bool] | None = None,
                     opening_plies: tuple[int, ...] | None = None) -> PairedGames:
    """Play openings `opening_indices` (of the `num_openings`-opening set; `opening_plies`: opening_set's `plies`)
    twice each, A first then B first.

    Network players search with `search`; A gets rng seed `seed`, B `seed + 1`. Raises PlayerSpecError,
    RegistryError, ModelFileError or GameError when a player cannot be built, and shared.players.arena.MatchStopped
    when `stop()` says True before a turn (None: never). Players are closed at the end.
    """
    openings = opening_set(game, num_openings, seed=opening_seed, plies=opening_plies)
    player_a = build_player(spec_a, game, search=search, registry_dir=registry_dir, device=device, seed=seed)
    player_b = build_player(spec_b, game, search=search, registry_dir=registry_dir, device=device, seed=seed + 1)
    start = time.perf_counter()
    try:
        result = play_match(game, player_a, player_b, [openings[i] for i in opening_indices], games_per_opening=2,
                            stop=stop)
    finally:
        close_players(player_a, player_b)
    return PairedGames(list(opening_indices), result.game_scores, round(time.perf_counter() - start, 3))


def _one_thread_per_process() -> None:
    """Pool initializer: one torch/OpenMP thread per match process (the processes share the cores)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"


def _chunk_in_process(game_params: dict, spec_a: str, spec_b: str, kwargs: dict) -> PairedGames:
    """play_match_chunk in a pool process (the game travels as its params)."""
    return play_match_chunk(make_game_from_params(game_params), spec_a, spec_b, **kwargs)


def evaluate_players(game: Game, spec_a: str, spec_b: str, *, games: int, search: SearchConfig, jobs: int,
                     seed: int, opening_seed: int, registry_dir: Path | None = None, device: str = "cpu",
                     progress: ProgressFn | None = None, processes: int = 1,
                     opening_plies: tuple[int, ...] | None = None) -> tuple[EvalStats, float]:
    """A paired match of `games` games played here, chunk by chunk exactly as the gate's jobs play it.

    `processes` > 1 plays the chunks in that many spawned processes at once (at most one per chunk); the games
    are the same as with 1. Returns (A's statistics, seconds). `progress(games done, games in all, A's score so
    far)` is called after each chunk, in the order the chunks finish.
    """
    start = time.perf_counter()
    scores = paired_game_scores(game, spec_a, spec_b, games=games, search=search, jobs=jobs, seed=seed,
                                opening_seed=opening_seed, registry_dir=registry_dir, device=device,
                                progress=progress, processes=processes, opening_plies=opening_plies)
    return evaluate_pairs(scores), round(time.perf_counter() - start, 3)


def paired_game_scores(game: Game, spec_a: str, spec_b: str, *, games: int, search: SearchConfig, jobs: int,
                       seed: int, opening_seed: int, registry_dir: Path | None = None, device: str = "cpu",
                       progress: ProgressFn | None = None, processes: int = 1,
                       opening_plies: tuple[int, ...] | None = None) -> np.ndarray:
    """The games of evaluate_players' match (same arguments): A's points per game, [games // 2, 2] float64 in
    {0, 0.5, 1}, one row per opening (its two games, colours swapped), so the games of several matches can be
    pooled (concatenated) before shared.stats.evaluate_pairs."""
    check_game_count(games)
    num_openings = games // 2
    chunks = split_openings(num_openings, jobs)
    kwargs = [dict(search=search, opening_indices=chunk, num_openings=num_openings, opening_seed=opening_seed,
                   seed=seed + i, registry_dir=registry_dir, device=device, opening_plies=opening_plies)
              for i, chunk in enumerate(chunks)]
    scores: dict[int, np.ndarray] = {}

    def finished(i: int, paired: PairedGames) -> None:
        scores[i] = paired.game_scores
        if progress is not None:
            done = np.concatenate(list(scores.values()))
            progress(2 * done.shape[0], games, float(pair_means(done).mean()))

    workers = max(1, min(processes, len(chunks)))
    if workers == 1:
        for i, chunk_kwargs in enumerate(kwargs):
            finished(i, play_match_chunk(game, spec_a, spec_b, **chunk_kwargs))
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_one_thread_per_process) as pool:
            futures = {pool.submit(_chunk_in_process, game.params(), spec_a, spec_b, chunk_kwargs): i
                       for i, chunk_kwargs in enumerate(kwargs)}
            try:
                for future in as_completed(futures):
                    finished(futures[future], future.result())
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return np.concatenate([scores[i] for i in range(len(chunks))])
