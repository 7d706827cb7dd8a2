"""Gatekeeper-evaluator service: paired matches between two players, split into jobs, and the verdict.

A gate is a 400-game paired evaluation by default: `gate.games / 2` openings drawn from the game's fixed,
seeded opening set, each played twice with colours swapped, equal simulations for both sides, no noise,
temperature 0.  The openings are split into `gate.jobs` chunks; each `match_job` plays one chunk and
returns its pairs.  `summarize_match` merges the chunks into W/D/L, the score, a 95% interval built from
the pair scores (the two games of a pair are not independent) and the Elo difference with its interval.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from services.worker import job_device
from shared.config import PipelineConfig
from shared.games import make_game
from shared.layout import DataLayout
from shared.player_spec import build_player
from shared.search.arena import opening_set, play_match
from shared.stats import decide_promotion, paired_evaluation


def split_openings(num_openings: int, jobs: int) -> list[list[int]]:
    """Split opening indices 0..num_openings-1 into `jobs` interleaved chunks (empty chunks dropped)."""
    chunks = [list(range(i, num_openings, jobs)) for i in range(max(1, jobs))]
    return [c for c in chunks if c]


def match_job(
    *,
    data_dir: str,
    config: dict[str, Any],
    player_a: str,
    player_b: str,
    opening_indices: list[int],
    num_openings: int,
    simulations: int,
    seed: int,
) -> dict[str, Any]:
    """Play each listed opening twice (A first, then B first) between two player specs.

    Returns {"pairs": [{"opening", "scores": [A's score as first player, A's score as second]}],
    "wins", "draws", "losses" (from A's side), "seconds"}.
    """
    cfg = PipelineConfig.model_validate(config)
    game = make_game(cfg.game.name)
    layout = DataLayout(Path(data_dir), game.name)
    device = job_device()
    openings = opening_set(game, num_openings, seed=cfg.gate.opening_seed)
    chosen = [openings[i] for i in opening_indices]
    common = {"simulations": simulations, "registry_dir": layout.registry_dir, "device": device, "c_puct": cfg.search.c_puct}
    a = build_player(player_a, game, seed=seed, **common)
    b = build_player(player_b, game, seed=seed + 1, **common)
    start = time.perf_counter()
    result = play_match(game, a, b, chosen, games_per_opening=2)
    return {**match_summary(result, opening_indices), "seconds": round(time.perf_counter() - start, 2)}


def match_summary(result, opening_indices: list[int]) -> dict[str, Any]:
    """JSON-ready pairs and W/D/L (A's view) from an arena MatchResult; opening indices are global ones."""
    per_opening: dict[int, list[float]] = {}
    wins = draws = losses = 0
    for g in result.games:
        score = (g.result + 1) / 2.0   # +1/0/-1 from A's side -> 1/0.5/0
        per_opening.setdefault(opening_indices[g.opening_index], [0.0, 0.0])[0 if g.a_plays_first else 1] = score
        wins += g.result > 0
        draws += g.result == 0
        losses += g.result < 0
    pairs = [{"opening": k, "scores": v} for k, v in sorted(per_opening.items())]
    return {"pairs": pairs, "wins": int(wins), "draws": int(draws), "losses": int(losses)}


def summarize_match(chunks: list[dict[str, Any]], rule: str, threshold: float) -> dict[str, Any]:
    """Merge match_job results into one report: W/D/L, score, 95% CI over pair scores, Elo, decision."""
    pairs = sorted((p for c in chunks for p in c["pairs"]), key=lambda p: p["opening"])
    pair_scores = np.array([np.mean(p["scores"]) for p in pairs], dtype=np.float64)
    wins = sum(c["wins"] for c in chunks)
    draws = sum(c["draws"] for c in chunks)
    losses = sum(c["losses"] for c in chunks)
    stats = paired_evaluation(pair_scores, wins=wins, draws=draws, losses=losses)
    decision = decide_promotion(stats, rule, threshold)
    return {**stats.to_dict(), "promote": bool(decision.promote), "reason": decision.reason,
            "rule": rule, "threshold": threshold, "pairs": len(pairs)}
