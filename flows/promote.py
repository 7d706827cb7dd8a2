"""The `decide` flow: record the gate result, then promote or reject the candidate; anchor each new best.

Promotion itself is `ModelRegistry.promote`, the one function that moves the registry's best pointer (used
here, by the initial model and by `zeroforge models promote/rollback`). The gate's promotion is a
compare-and-swap: the candidate becomes best only if best still is the model it was gated against; if a
rollback or a manual promotion changed best meanwhile, the candidate is rejected and the history says why.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from flows.gate import match_specs, run_match
from flows.naming import artifact_key, run_name
from flows.strength_plot import strength_markdown, strength_points, write_strength_plot
from shared.config import PipelineConfig
from shared.layout import DataLayout
from shared.registry import BestChangedError, ModelRegistry

#: The `by` of the gate's promotions and rejections in the registry history.
GATE_ACTOR = "gate"


def anchor_match(config: PipelineConfig, data_dir: str, version: str, generation: int, logger) -> dict[str, Any]:
    """Play `version` against the game's fixed anchor baseline (gate.anchor) so the Elo curve is anchored."""
    g = config.gate
    ids = DataLayout(Path(data_dir), config.game.name).job_ids()
    specs = match_specs(config, data_dir, lambda i: ids.anchor(generation, version, i), version, g.anchor,
                        g.anchor_games, seed=config.pipeline.seed + 7919 * generation,
                        description=f"gen {generation} anchor")
    report = run_match(specs, rule=g.promote_rule, threshold=g.threshold, early_stop=False,
                       timeout_s=config.pipeline.wait_timeout_s, outage_s=config.pipeline.redis_outage_s, logger=logger)
    return {"opponent": g.anchor, **{k: report[k] for k in ("games", "wins", "draws", "losses", "score", "ci_low",
                                                           "ci_high", "elo", "elo_low", "elo_high")}}


@flow(name="decide", flow_run_name=run_name("gen{generation}-decide"))
def decide_flow(config: PipelineConfig, generation: int, data_dir: str, candidate: str, best: str,
                gate: dict[str, Any]) -> dict[str, Any]:
    """Record the gate result on the candidate, then promote it (if best is still `best`) or reject it.

    Returns {"promoted", "best"} and, for a promotion, "anchor": the anchor match summary (None without one)."""
    logger = get_run_logger()
    game = config.game.name
    layout = DataLayout(Path(data_dir), game)
    registry = ModelRegistry(layout.registry_dir)
    registry.set_gate_result(candidate, gate)
    reason = gate["reason"]
    promoted = False
    if gate["promote"]:
        try:
            promoted = registry.promote(candidate, reason=f"gate gen {generation}: {reason}", expected_best=best,
                                        by=GATE_ACTOR) is not None or registry.best_version() == candidate
        except BestChangedError as exc:
            reason = str(exc)
    if not promoted:
        registry.reject(candidate, reason=reason, by=GATE_ACTOR)
        logger.info("%s gen %d: rejected %s (%s)", game, generation, candidate, reason)
        return {"promoted": False, "best": registry.best_version()}
    logger.info("%s gen %d: promoted %s (was %s)", game, generation, candidate, best)
    anchor = None
    if config.gate.anchor and config.gate.anchor_games > 0:
        anchor = anchor_match(config, data_dir, candidate, generation, logger)
        registry.set_gate_result(candidate, {**gate, "anchor": anchor})
        logger.info("%s gen %d: new best %s vs %s: score %.3f [%.3f, %.3f], Elo %+.0f", game, generation, candidate,
                    anchor["opponent"], anchor["score"], anchor["ci_low"], anchor["ci_high"], anchor["elo"])
    publish_strength(layout, registry, generation)
    return {"promoted": True, "best": candidate, "anchor": anchor}


def publish_strength(layout: DataLayout, registry: ModelRegistry, generation: int) -> None:
    """Redraw the strength-over-generations PNG and attach it to the flow run (its key names `generation`)."""
    points = strength_points(registry)
    game = layout.game_name
    png = write_strength_plot(points, layout.strength_plot_path, f"{game} strength")
    create_markdown_artifact(key=artifact_key(game, layout.root, "strength", generation),
                             markdown=strength_markdown(points, png),
                             description="Elo over generations")
