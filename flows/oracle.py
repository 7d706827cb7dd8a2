"""The oracle figures of each generation's best model (shared.players.oracle): measured after the promotion
decision, in the pipeline's process, on the run's fixed oracle set.

The set is built once per run with the pipeline seed (the game family's `oracle_set` hook) and cached at
DataLayout.oracle_set_path, so every generation, and a resumed run, is measured on the same positions. The
figures are stored in the model's registry record (under its gate record's "oracle", next to the anchor match)
when it has a gate record, so a best model kept over several generations is measured once; they also go to the
generation's metrics record (flows.curves) and to a Prefect artifact. Games whose family has no hook (Go) have
no figures. Every failure is logged in one line and never fails the generation.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.artifacts import create_markdown_artifact

from flows.naming import artifact_key
from shared.config import PipelineConfig
from shared.games import family_of, make_game
from shared.games.base import Game
from shared.games.oracle_set import OracleSet, cached_oracle_set
from shared.layout import DataLayout
from shared.registry import ModelRegistry


def run_oracle_set(config: PipelineConfig, layout: DataLayout, game: Game, logger) -> OracleSet | None:
    """The run's oracle set: loaded from the data directory, else built with the pipeline seed and saved there;
    None when [pipeline] oracle_positions is 0 or the game's family has no oracle set."""
    positions = config.pipeline.oracle_positions
    build = family_of(game).oracle_set
    if positions <= 0 or build is None:
        return None
    oracle, seconds = cached_oracle_set(layout.oracle_set_path(positions), game, build, positions,
                                        config.pipeline.seed)
    if seconds is not None:
        logger.info("oracle set of %s built in %.1f s: %s", game.name, seconds, oracle.source)
    return oracle


def _flat(figures: dict[str, Any]) -> dict[str, Any]:
    """The registry's nested figures (OracleFigures.to_dict) -> GenerationMetrics' oracle_* fields."""
    out = {"oracle_positions": figures["positions"], "oracle_simulations": figures["simulations"],
           "oracle_random": figures["random_move"], "oracle_seconds": figures["seconds"]}
    for key in ("raw", "search", "raw_optimal", "search_optimal"):
        value = figures.get(key)
        if value is not None:
            out[f"oracle_{key}"] = value["rate"]
            out[f"oracle_{key}_ci_low"], out[f"oracle_{key}_ci_high"] = value["ci_low"], value["ci_high"]
    return out


def _measure(config: PipelineConfig, game: Game, oracle: OracleSet, model_path: Path) -> dict[str, Any]:
    from shared.players.analysis import load_network_evaluator
    from shared.players.oracle import measure_oracle

    evaluate = load_network_evaluator(model_path, game)
    search = config.gatekeeper().match_search_config(config.pipeline.oracle_simulations)
    return measure_oracle(game, evaluate, oracle, search, seed=config.pipeline.seed).to_dict()


def oracle_figures(config: PipelineConfig, data_dir: str, version: str, generation: int,
                   logger) -> dict[str, Any] | None:
    """Measure the best model `version` on the run's oracle set (module docstring) -> the oracle_* fields of
    GenerationMetrics, or None (off, no set for the game, or a failure, logged)."""
    try:
        game = make_game(config.game.name)
        layout = DataLayout(Path(data_dir), config.game.name)
        oracle = run_oracle_set(config, layout, game, logger)
        if oracle is None or len(oracle) == 0:
            return None
        registry = ModelRegistry(layout.registry_dir)
        record = registry.get(version)
        stored = (record.gate or {}).get("oracle")
        wanted = {"positions": len(oracle), "simulations": config.pipeline.oracle_simulations}
        if isinstance(stored, dict) and all(stored.get(k) == v for k, v in wanted.items()):
            figures = stored
        else:
            figures = _measure(config, game, oracle, record.path)
            if record.gate:
                registry.set_gate_result(version, {**record.gate, "oracle": figures})
        from shared.players.oracle import oracle_line_of

        line = oracle_line_of(figures)
        logger.info("%s gen %d oracle (%s): %s; %.1f s", game.name, generation, version, line, figures["seconds"])
        create_markdown_artifact(key=artifact_key(game.name, data_dir, "oracle", generation),
                                 markdown=f"**{game.name} gen {generation}, best {version}**: {line}\n\n"
                                          f"Positions: {oracle.source}.",
                                 description="the best model's moves against exact labels")
        return _flat(figures)
    except Exception as exc:  # a measurement must never fail the generation
        logger.warning("%s gen %d: no oracle figures (%s: %s)", config.game.name, generation,
                       type(exc).__name__, exc)
        return None
