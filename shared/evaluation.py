"""Paired evaluation matches between any two player specs, with the gate's openings and statistics.

    report = evaluate_players(game, "best", "pure-mcts:400", games=100, simulations=64, registry_dir=...)

Like the gate (services/gatekeeper.py): `games / 2` openings from `opening_set(game, games / 2,
seed=opening_seed)` (default: the gate's own opening seed), each played twice with colours swapped, no noise,
temperature 0; the statistics are `shared.stats.paired_evaluation` on the pair scores (the two games of a pair
are not independent). Everything is from player A's side.

The openings are played in fixed chunks (`chunk_openings`, independent of whether anyone watches the progress)
so a caller can show progress; within a chunk all games are batched.
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from shared.games.base import Game
from shared.player_spec import build_player, parse_player_spec
from shared.search.arena import play_match
from shared.search.openings import opening_set
from shared.stats import paired_evaluation

#: Progress callback: (games finished, games in total).
ProgressFn = Callable[[int, int], None]


class EvaluationError(ValueError):
    """Bad evaluation settings (an odd game count, ...); the message says how to fix them."""


def gate_opening_seed() -> int:
    """The gate's default opening seed (shared.config GateSection.opening_seed)."""
    from shared.config import GateSection

    return int(GateSection.model_fields["opening_seed"].default)


def default_eval_simulations(game_name: str) -> int:
    """The gate's per-game simulations per move (shared.config.game_defaults, else GateSection's default)."""
    from shared.config import ConfigError, GateSection, game_defaults

    try:
        gate = game_defaults(game_name).get("gate", {})
    except ConfigError:
        gate = {}
    return int(gate.get("simulations", GateSection.model_fields["simulations"].default))


def chunk_openings(num_openings: int) -> int:
    """Openings per chunk: about a tenth of the match, at least 32 (64 games batched per chunk)."""
    return max(32, math.ceil(num_openings / 10))


def check_game_count(games: int) -> int:
    """Return `games` if it is an even number >= 2, else EvaluationError."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise EvaluationError(
            f"--games must be an even number >= 2 (got {games}): each opening is played twice with colours swapped"
        )
    return games


def play_paired_games(game: Game, player_a, player_b, openings: list[list[int]],
                      progress: ProgressFn | None = None) -> tuple[np.ndarray, list[int]]:
    """Play every opening twice (colours swapped), chunk by chunk.

    Returns (pair_scores [P] float64 in {0, .25, .5, .75, 1} from A's side, [wins, draws, losses] of A).
    """
    step = chunk_openings(len(openings))
    pair_scores: list[float] = []
    counts = [0, 0, 0]
    for start in range(0, len(openings), step):
        result = play_match(game, player_a, player_b, openings[start:start + step], games_per_opening=2)
        pair_scores += result.pair_scores
        counts = [counts[0] + result.wins, counts[1] + result.draws, counts[2] + result.losses]
        if progress is not None:
            progress(2 * len(pair_scores), 2 * len(openings))
    return np.asarray(pair_scores, dtype=np.float64), counts


def evaluate_players(game: Game, spec_a: str, spec_b: str, *, games: int, simulations: int, seed: int = 0,
                     opening_seed: int | None = None, registry_dir: Path | None = None, device: str = "cpu",
                     progress: ProgressFn | None = None) -> dict[str, Any]:
    """Paired match A vs B -> JSON-ready report: shared.stats.EvalStats fields (games, pairs, wins, draws, losses,
    score, ci_low, ci_high, elo, elo_low, elo_high, interval) + player_a, player_b, game, sims, seed,
    opening_seed, seconds.

    Player A gets rng seed `seed`, B `seed + 1` (as in the gate's match jobs). Raises EvaluationError,
    PlayerSpecError, RegistryError, ModelFileError or GameError (e.g. minimax outside tic-tac-toe).
    """
    check_game_count(games)
    if simulations < 1:
        raise EvaluationError(f"--sims must be >= 1 (got {simulations})")
    opening_seed = gate_opening_seed() if opening_seed is None else opening_seed
    common = {"simulations": simulations, "registry_dir": registry_dir, "device": device}
    player_a = build_player(parse_player_spec(spec_a), game, seed=seed, **common)
    player_b = build_player(parse_player_spec(spec_b), game, seed=seed + 1, **common)
    openings = opening_set(game, games // 2, seed=opening_seed)
    start = time.perf_counter()
    pair_scores, (wins, draws, losses) = play_paired_games(game, player_a, player_b, openings, progress)
    stats = paired_evaluation(pair_scores, wins=wins, draws=draws, losses=losses)
    return {**stats.to_dict(), "player_a": spec_a, "player_b": spec_b, "game": game.name, "sims": simulations,
            "seed": seed, "opening_seed": opening_seed, "seconds": round(time.perf_counter() - start, 3)}
