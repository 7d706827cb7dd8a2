"""Paired matches between two player specs: the one match function of the gate, the anchor match and `eval`.

A match of `games` games uses `games / 2` openings from `opening_set(game, games / 2, seed=opening_seed)`, each
played twice with colours swapped (no noise, temperature 0). The openings are split into `jobs` interleaved
chunks (`split_openings`); chunk i is played by `play_match_chunk` with player seeds (seed + i, seed + i + 1).
The gate runs each chunk as an rq job (services.gatekeeper.match_job); `evaluate_players` runs the same
chunks in this process. With the same players, search, openings, chunks and seed both give the same games.
Everything is from player A's side; shared.stats turns the game scores into W/D/L, the score and its interval.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from shared.games.base import Game
from shared.players.spec import build_player
from shared.search.arena import play_match
from shared.search.mcts import SearchConfig
from shared.search.openings import opening_set
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
                     device: str = "cpu") -> PairedGames:
    """Play openings `opening_indices` (of the `num_openings`-opening set) twice each, A first then B first.

    Network players search with `search`; A gets rng seed `seed`, B `seed + 1`. Raises PlayerSpecError,
    RegistryError, ModelFileError or GameError when a player cannot be built. Players are closed at the end.
    """
    openings = opening_set(game, num_openings, seed=opening_seed)
    player_a = build_player(spec_a, game, search=search, registry_dir=registry_dir, device=device, seed=seed)
    player_b = build_player(spec_b, game, search=search, registry_dir=registry_dir, device=device, seed=seed + 1)
    start = time.perf_counter()
    try:
        result = play_match(game, player_a, player_b, [openings[i] for i in opening_indices], games_per_opening=2)
    finally:
        close_players(player_a, player_b)
    return PairedGames(list(opening_indices), result.game_scores, round(time.perf_counter() - start, 3))


def evaluate_players(game: Game, spec_a: str, spec_b: str, *, games: int, search: SearchConfig, jobs: int,
                     seed: int, opening_seed: int, registry_dir: Path | None = None, device: str = "cpu",
                     progress: ProgressFn | None = None) -> tuple[EvalStats, float]:
    """A paired match of `games` games played here, chunk by chunk exactly as the gate's jobs play it.

    Returns (A's statistics, seconds). `progress(games done, games in all, A's score so far)` is called after
    each chunk.
    """
    check_game_count(games)
    num_openings = games // 2
    start = time.perf_counter()
    scores = []
    for i, chunk in enumerate(split_openings(num_openings, jobs)):
        paired = play_match_chunk(game, spec_a, spec_b, search=search, opening_indices=chunk,
                                  num_openings=num_openings, opening_seed=opening_seed, seed=seed + i,
                                  registry_dir=registry_dir, device=device)
        scores.append(paired.game_scores)
        if progress is not None:
            progress(2 * sum(s.shape[0] for s in scores), games, float(pair_means(np.concatenate(scores)).mean()))
    return evaluate_pairs(np.concatenate(scores)), round(time.perf_counter() - start, 3)
