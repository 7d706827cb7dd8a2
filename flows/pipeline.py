"""The `pipeline` flow: run generation after generation, resuming where a stopped pipeline left off.

The generation to run next is read from the registry (one past the newest generation with a gate
decision), so a pipeline stopped at any point picks up its unfinished generation: shards already written,
a candidate already registered and finished rq jobs are reused.  A pipeline with `generations` unset runs
until stopped (Ctrl-C, or the stop file DataLayout.stop_file, checked between generations); with
pipeline.max_hours it also stops before a generation that would end past that wall-clock budget. With
pipeline.overlap_selfplay each generation enqueues the next one's self-play (with the best model of that moment)
as soon as its own self-play is done, and the next generation plays those jobs. The jobs go to the
Redis named by the process environment (services.jobqueue.redis_url_from_env), never by a flow parameter.
"""
from __future__ import annotations

import time
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


def budget_allows_another(elapsed_s: float, last_generation_s: float, budget_s: float | None) -> bool:
    """Whether a run `elapsed_s` seconds old may start one more generation under a wall-clock budget of
    `budget_s` seconds (None: no budget), expecting it to take as long as the last one (`last_generation_s`)."""
    return budget_s is None or elapsed_s + last_generation_s <= budget_s


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
    budget_s = None if config.pipeline.max_hours is None else config.pipeline.max_hours * 3600.0
    started = time.monotonic()
    try:
        ensure_anchor(config, data_dir, logger)
        while generations is None or len(summaries) < generations:
            generation = next_generation(registry)
            more = generations is None or len(summaries) + 1 < generations
            generation_started = time.monotonic()
            summaries.append(generation_flow(
                config=config, generation=generation, data_dir=data_dir, selfplay_model=ahead,
                selfplay_ahead=config.pipeline.overlap_selfplay and more))
            ahead = summaries[-1].get("next_selfplay_model")
            if stop.exists():
                logger.info("stop file %s found: stopping after generation %d", stop, generation)
                stop.unlink(missing_ok=True)
                break
            now = time.monotonic()
            if more and not budget_allows_another(now - started, now - generation_started, budget_s):
                logger.info("time budget: %.2f h of pipeline.max_hours=%g used and a generation takes %.1f min: "
                            "stopping after generation %d", (now - started) / 3600.0, config.pipeline.max_hours,
                            (now - generation_started) / 60.0, generation)
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
