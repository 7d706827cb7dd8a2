"""The `promote`, `rollback` and decision flows: the only code that moves the registry's `best` pointer
(besides the `zeroforge models` commands, which call the same registry methods)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from flows.gate import match_specs, run_match
from shared.config import PipelineConfig
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.strength_plot import strength_markdown, strength_points, write_strength_plot


def _registry(data_dir: str, game: str) -> ModelRegistry:
    return ModelRegistry(DataLayout(Path(data_dir), game).registry_dir)


@flow(name="promote", flow_run_name="{game}-promote-{version}")
def promote_flow(game: str, data_dir: str, version: str, reason: str = "manual") -> dict[str, Any]:
    """Make `version` the best model; returns the history entry's essentials."""
    registry = _registry(data_dir, game)
    previous = registry.best()
    registry.promote(version, reason=reason)
    get_run_logger().info("%s: promoted %s (was %s): %s", game, version, previous.version if previous else None, reason)
    return {"best": version, "previous": previous.version if previous else None, "reason": reason}


@flow(name="rollback", flow_run_name="{game}-rollback-{version}")
def rollback_flow(game: str, data_dir: str, version: str, reason: str = "manual rollback") -> dict[str, Any]:
    """Point `best` back at an earlier version; the next generation plays with it."""
    registry = _registry(data_dir, game)
    previous = registry.best()
    registry.rollback(version, reason=reason)
    get_run_logger().info("%s: rolled back best from %s to %s", game, previous.version if previous else None, version)
    return {"best": version, "previous": previous.version if previous else None, "reason": reason}


def anchor_match(data_dir: str, redis_url: str, config: dict[str, Any], version: str, generation: int, logger) -> dict:
    """Play `version` against the game's fixed anchor baseline (gate.anchor) so the Elo curve is anchored."""
    cfg = PipelineConfig.model_validate(config)
    g = cfg.gate
    specs = match_specs(data_dir, config, f"g{generation:06d}-anchor-{version}", version, g.anchor,
                        g.anchor_games, g.simulations, g.jobs, seed=cfg.pipeline.seed + 7919 * generation)
    report = run_match(redis_url, specs, rule=g.promote_rule, threshold=g.threshold, early_stop=False,
                       timeout_s=cfg.pipeline.wait_timeout_s, logger=logger)
    return {"opponent": g.anchor, **{k: report[k] for k in ("games", "wins", "draws", "losses", "score", "ci_low",
                                                           "ci_high", "elo", "elo_low", "elo_high")}}


@flow(name="decide", flow_run_name="{game}-gen{generation}-decide")
def decide_flow(game: str, generation: int, data_dir: str, redis_url: str, config: dict[str, Any],
                candidate: str, gate: dict[str, Any]) -> dict[str, Any]:
    """Record the gate result on the candidate, then promote or reject it; anchor a new best model."""
    logger = get_run_logger()
    cfg = PipelineConfig.model_validate(config)
    registry = _registry(data_dir, game)
    registry.set_gate_result(candidate, gate)
    if not gate["promote"]:
        registry.reject(candidate, reason=gate["reason"])
        logger.info("%s gen %d: rejected %s (%s)", game, generation, candidate, gate["reason"])
        return {"promoted": False, "best": registry.best().version}
    promote_flow(game=game, data_dir=data_dir, version=candidate, reason=f"gate gen {generation}: {gate['reason']}")
    if cfg.gate.anchor and cfg.gate.anchor_games > 0:
        anchor = anchor_match(data_dir, redis_url, config, candidate, generation, logger)
        registry.set_gate_result(candidate, {**gate, "anchor": anchor})
        logger.info("%s gen %d: new best %s vs %s: score %.3f [%.3f, %.3f], Elo %+.0f", game, generation, candidate,
                    anchor["opponent"], anchor["score"], anchor["ci_low"], anchor["ci_high"], anchor["elo"])
    publish_strength(data_dir, game, registry)
    return {"promoted": True, "best": candidate}


def publish_strength(data_dir: str, game: str, registry: ModelRegistry) -> None:
    """Redraw the strength-over-generations PNG beside the registry and attach it to the flow run."""
    points = strength_points(registry)
    png = write_strength_plot(points, DataLayout(Path(data_dir), game).game_dir / "strength.png", f"{game} strength")
    create_markdown_artifact(key=f"{game}-strength".lower().replace("_", "-"), markdown=strength_markdown(points, png),
                             description="Elo over generations")
