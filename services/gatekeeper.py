"""Gatekeeper-evaluator service: one chunk of a paired match as an rq job, and the verdict over all chunks.

A gate is a 400-game paired evaluation by default: `gate.games / 2` openings drawn from the game's fixed,
seeded opening set (the family's plan, or `gate.opening_plies` plies of any move), each played twice with
colours swapped, equal simulations for both sides, no noise, temperature 0 (shared.players.match). The
openings are split into `gate.jobs` chunks; each `match_job` plays one chunk and returns its pairs.
`summarize_match` merges the chunks into W/D/L, the score, a 95% interval built from the pair scores (the two
games of a pair are not independent), the Elo difference and the decision.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from services.job_cancel import cancel_check
from services.payloads import MatchChunkResult, MatchPayload, PairScores, WorkerContext
from shared.games import make_game
from shared.players.arena import MatchStopped
from shared.players.match import play_match_chunk
from shared.players.spec import parse_player_spec
from shared.store.replica import replicate_version
from shared.stats import decide_promotion, evaluate_pairs

log = logging.getLogger(__name__)


def match_job(payload: dict, worker: WorkerContext) -> dict:
    """Play each listed opening twice (A first, then B first) between two player specs.

    payload: a MatchPayload as a JSON dict. Returns a MatchChunkResult as a JSON dict: {"pairs": [{"opening",
    "scores": [A's points as first player, A's points as second]}], "seconds", "stopped"}. A job canceled while
    it plays (its gate stopped early, or its flow was interrupted: services.job_cancel) stops before its next turn
    and returns no pairs, with "stopped" true.
    """
    job = MatchPayload.model_validate(payload)
    cfg = job.config
    game = make_game(cfg.game.name)
    layout = worker.layout(game.name, job.data_id)
    store = worker.object_store()
    if store is not None:        # a worker's replica: the registry versions that play come from the store
        for spec in (parse_player_spec(job.player_a), parse_player_spec(job.player_b)):
            if spec.kind == "version":
                replicate_version(store, layout, spec.value)
    start = time.perf_counter()
    try:
        paired = play_match_chunk(game, job.player_a, job.player_b, search=cfg.match_search_config(job.simulations),
                                  opening_indices=job.opening_indices, num_openings=job.num_openings,
                                  opening_seed=cfg.gate.opening_seed, seed=job.seed,
                                  registry_dir=layout.registry_dir, device=worker.device, stop=cancel_check(),
                                  opening_plies=job.opening_plies)
    except MatchStopped as stopped:
        seconds = round(time.perf_counter() - start, 3)
        log.info("match chunk canceled (its match no longer needs it): stopped after %d turns, %.1f s",
                 stopped.turns, seconds)
        return MatchChunkResult(pairs=[], seconds=seconds, stopped=True).model_dump(mode="json")
    pairs = [PairScores(opening=k, scores=tuple(row)) for k, row in zip(paired.openings, paired.game_scores.tolist())]
    return MatchChunkResult(pairs=pairs, seconds=paired.seconds).model_dump(mode="json")


def chunk_game_scores(chunks: list[dict[str, Any]]) -> np.ndarray:
    """A's points of every game of the given match_job results, pairs ordered by opening: [P, 2] float64."""
    pairs = sorted((p for c in chunks for p in MatchChunkResult.model_validate(c).pairs), key=lambda p: p.opening)
    return np.array([p.scores for p in pairs], dtype=np.float64).reshape(-1, 2)


def summarize_match(chunks: list[dict[str, Any]], rule: str, threshold: float,
                    promote_all_draws: bool = False) -> dict[str, Any]:
    """Merge match_job results into one report: W/D/L, score, 95% CI over pair scores, Elo, decision
    (shared.stats.decide_promotion with these rule arguments: "promote", "reason", and "why", its short cause)."""
    stats = evaluate_pairs(chunk_game_scores(chunks))
    decision = decide_promotion(stats, rule, threshold, promote_all_draws)
    return {**stats.to_dict(), "promote": bool(decision.promote), "reason": decision.reason, "why": decision.why,
            "rule": rule, "threshold": threshold}
