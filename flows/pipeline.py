"""The `pipeline` flow: run generation after generation, resuming where a stopped pipeline left off.

The generation to run next is read from the registry (one past the newest generation with a gate
decision), so a pipeline stopped at any point picks up its unfinished generation: shards already written,
a candidate already registered and finished rq jobs are reused.  A pipeline with `generations` unset runs
until stopped (Ctrl-C, or the stop file DataLayout.stop_file, checked between generations). With
pipeline.overlap_selfplay each generation enqueues the next one's self-play (with the best model of that moment)
as soon as its own self-play is done, and the next generation plays those jobs. The jobs go to the
Redis named by the process environment (services.jobqueue.redis_url_from_env), never by a flow parameter.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.exceptions import CancelledRun

from flows.generation import generation_flow
from flows.interrupt import cancel_on_interrupt
from flows.naming import run_name
from flows.progress import record_phase
from flows.promote import ensure_anchor
from shared.config import PipelineConfig
from shared.layout import DataLayout
from shared.phase import read_phase
from shared.registry import DECIDED, ModelRegistry


def next_generation(registry: ModelRegistry) -> int:
    """1 + the newest generation whose candidate was decided: promoted, rejected, or promoted and later retired by a
    rollback (1 for a new registry)."""
    decided = [v.generation for v in registry.list() if v.generation >= 1 and v.status in DECIDED]
    return max(decided, default=0) + 1


@flow(name="pipeline", flow_run_name=run_name("pipeline"))
@cancel_on_interrupt
def pipeline_flow(config: PipelineConfig, data_dir: str, generations: int | None = None) -> list[dict[str, Any]]:
    """Run `generations` generations (None: until stopped); returns each generation's summary.

    First plays the anchor match of the best model if a stopped run left it undone (flows.promote.ensure_anchor).
    Ctrl-C ends this run and the running generation's runs as Cancelled (flows.interrupt); the phase record
    (flows.progress.record_phase) says "interrupted" then, "finished" at the end."""
    logger = get_run_logger()
    layout = DataLayout(Path(data_dir), config.game.name)
    registry = ModelRegistry(layout.registry_dir)
    summaries = []
    stop = layout.stop_file
    stop.unlink(missing_ok=True)
    generation = next_generation(registry)
    ahead: str | None = None   # the model of the self-play the last generation enqueued ahead for this one
    try:
        ensure_anchor(config, data_dir, logger)
        while generations is None or len(summaries) < generations:
            generation = next_generation(registry)
            more = generations is None or len(summaries) + 1 < generations
            summaries.append(generation_flow(
                config=config, generation=generation, data_dir=data_dir, selfplay_model=ahead,
                selfplay_ahead=config.pipeline.overlap_selfplay and more))
            ahead = summaries[-1].get("next_selfplay_model")
            if stop.exists():
                logger.info("stop file %s found: stopping after generation %d", stop, generation)
                stop.unlink(missing_ok=True)
                break
    except (KeyboardInterrupt, CancelledRun):
        last = read_phase(layout.phase_file) or {}
        same = last.get("generation") == generation
        record_phase(layout, generation, last.get("phase", "") if same else "", last.get("detail", "") if same else "",
                     state="interrupted")
        raise
    except Exception as exc:
        record_phase(layout, generation, "stopped", type(exc).__name__, state="failed")
        raise
    record_phase(layout, max(0, next_generation(registry) - 1), "done", f"{len(summaries)} generation(s) run",
                 state="finished")
    return summaries
