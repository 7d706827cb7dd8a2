"""The `decide` flow: record the gate result, then promote or reject the candidate; anchor each new best.

The anchor match is played in the generations that are multiples of gate.anchor_every (anchor_due): for the
candidate it promoted, or, when it rejected it, for a best whose match was deferred (missing_anchor).

With a store, the registry view (shared.store.view) is republished after each decision.
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
from flows.interrupt import cancel_on_interrupt
from flows.naming import artifact_key, run_name
from flows.store_sync import publish_registry_view
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
                       timeout_s=config.pipeline.wait_timeout_s, outage_s=config.pipeline.redis_outage_s, logger=logger,
                       layout=DataLayout(Path(data_dir), config.game.name), generation=generation, phase="anchor match")
    return {"opponent": g.anchor, **{k: report[k] for k in ("games", "wins", "draws", "losses", "score", "ci_low",
                                                           "ci_high", "elo", "elo_low", "elo_high")}}


def anchor_due(config: PipelineConfig, generation: int) -> bool:
    """Whether generation `generation` plays the anchor match of a best that has none: the config plays anchor
    matches and `generation` is a multiple of gate.anchor_every."""
    g = config.gate
    return bool(g.anchor) and g.anchor_games > 0 and generation % g.anchor_every == 0


def missing_anchor(config: PipelineConfig, registry: ModelRegistry):
    """The best version when it was promoted by a gate but has no anchor figure recorded (its anchor match was
    interrupted, or deferred by gate.anchor_every) and the config plays anchor matches; else None."""
    if not config.gate.anchor or config.gate.anchor_games <= 0:
        return None
    best = registry.best()
    gate = (best.gate or {}) if best is not None else {}
    return best if best is not None and best.generation >= 1 and gate.get("promote") and "anchor" not in gate else None


def ensure_anchor(config: PipelineConfig, data_dir: str, logger) -> str | None:
    """Play the anchor match that a stopped run left undone (see missing_anchor) and record it; returns the
    version it was played for, None when none was missing. A best promoted in a generation that does not play the
    anchor match (anchor_due) keeps waiting for the next one that does."""
    layout = DataLayout(Path(data_dir), config.game.name)
    registry = ModelRegistry(layout.registry_dir)
    best = missing_anchor(config, registry)
    if best is None or not anchor_due(config, best.generation):
        return None
    logger.info("%s: best %s has no anchor match recorded (interrupted); playing it now", config.game.name,
                best.version)
    _record_anchor(config, data_dir, registry, best.version, best.generation, best.gate, logger)
    publish_strength(layout, registry, best.generation)
    return best.version


def _record_anchor(config: PipelineConfig, data_dir: str, registry: ModelRegistry, version: str, generation: int,
                   gate: dict[str, Any], logger) -> dict[str, Any]:
    """Play `version`'s anchor match, record it with its gate result and log it; returns the anchor summary."""
    anchor = anchor_match(config, data_dir, version, generation, logger)
    registry.set_gate_result(version, {**gate, "anchor": anchor})
    logger.info("%s gen %d: best %s vs %s: score %.3f [%.3f, %.3f], Elo %+.0f", config.game.name, generation,
                version, anchor["opponent"], anchor["score"], anchor["ci_low"], anchor["ci_high"], anchor["elo"])
    return anchor


@flow(name="decide", flow_run_name=run_name("gen{generation}-decide"))
@cancel_on_interrupt
def decide_flow(config: PipelineConfig, generation: int, data_dir: str, candidate: str, best: str,
                gate: dict[str, Any]) -> dict[str, Any]:
    """Record the gate result on the candidate, then promote it (if best is still `best`) or reject it.

    Returns {"promoted", "best", "anchor"}: anchor is the summary of the anchor match this generation played
    (anchor_due: for the promoted candidate, or for a best whose match was deferred), None when it played none."""
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
    if promoted:
        logger.info("%s gen %d: promoted %s (was %s)", game, generation, candidate, best)
    else:
        registry.reject(candidate, reason=reason, by=GATE_ACTOR)
        logger.info("%s gen %d: rejected %s (%s)", game, generation, candidate, reason)
    anchor = None
    unanchored = missing_anchor(config, registry)
    if unanchored is not None and anchor_due(config, generation):
        anchor = _record_anchor(config, data_dir, registry, unanchored.version, generation, unanchored.gate, logger)
    elif promoted and unanchored is not None:
        logger.info("%s gen %d: anchor match of %s deferred to generation %d (gate.anchor_every=%d)", game,
                    generation, candidate, _next_due(config, generation), config.gate.anchor_every)
    if promoted or anchor is not None:
        publish_strength(layout, registry, generation)
    publish_registry_view(config, layout)
    return {"promoted": promoted, "best": registry.best_version(), "anchor": anchor}


def _next_due(config: PipelineConfig, generation: int) -> int:
    """The first generation after `generation` that plays the anchor match."""
    every = config.gate.anchor_every
    return (generation // every + 1) * every


def publish_strength(layout: DataLayout, registry: ModelRegistry, generation: int) -> None:
    """Redraw the strength-over-generations PNG and attach it to the flow run (its key names `generation`)."""
    points = strength_points(registry)
    game = layout.game_name
    png = write_strength_plot(points, layout.strength_plot_path, f"{game} strength")
    create_markdown_artifact(key=artifact_key(game, layout.root, "strength", generation),
                             markdown=strength_markdown(points, png),
                             description="Elo over generations")
