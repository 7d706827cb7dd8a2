"""The `pipeline` flow: run generation after generation, resuming where a stopped pipeline left off.

The generation to run next is read from the registry (one past the newest generation with a gate
decision), so a pipeline stopped at any point picks up its unfinished generation: shards already written,
a candidate already registered and finished rq jobs are reused.  A pipeline with `generations` unset runs
until stopped (Ctrl-C, or the stop file DataLayout.stop_file, checked between generations). The jobs go to the
Redis named by the process environment (services.jobqueue.redis_url_from_env), never by a flow parameter.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows.generation import generation_flow
from flows.naming import run_name
from shared.config import PipelineConfig
from shared.layout import DataLayout
from shared.registry import DECIDED, ModelRegistry


def next_generation(registry: ModelRegistry) -> int:
    """1 + the newest generation whose candidate was decided: promoted, rejected, or promoted and later retired by a
    rollback (1 for a new registry)."""
    decided = [v.generation for v in registry.list() if v.generation >= 1 and v.status in DECIDED]
    return max(decided, default=0) + 1


@flow(name="pipeline", flow_run_name=run_name("pipeline"))
def pipeline_flow(config: PipelineConfig, data_dir: str, generations: int | None = None) -> list[dict[str, Any]]:
    """Run `generations` generations (None: until stopped); returns each generation's summary."""
    logger = get_run_logger()
    layout = DataLayout(Path(data_dir), config.game.name)
    registry = ModelRegistry(layout.registry_dir)
    summaries = []
    stop = layout.stop_file
    stop.unlink(missing_ok=True)
    while generations is None or len(summaries) < generations:
        generation = next_generation(registry)
        summaries.append(generation_flow(config=config, generation=generation, data_dir=data_dir))
        if stop.exists():
            logger.info("stop file %s found: stopping after generation %d", stop, generation)
            stop.unlink(missing_ok=True)
            break
    return summaries
