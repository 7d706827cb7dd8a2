"""The `pipeline` flow: run generation after generation, resuming where a stopped pipeline left off.

The generation to run next is read from the registry (one past the newest generation with a gate decision), so a
pipeline stopped at any point picks up its unfinished generation: shards already written, a candidate already
registered and finished rq jobs are reused. `generations` is the number of generations done that the run is to reach
in this data directory, so a stopped pipeline started again with the same number runs only what is left. A pipeline
with `generations` unset runs until stopped (Ctrl-C, or the stop file DataLayout.stop_file, checked between
generations); with pipeline.max_hours it also stops before a generation that would end past that wall-clock budget.
With pipeline.overlap_selfplay each generation enqueues the next one's self-play (with the best model of that
moment) right behind its own and tops it up while it trains and gates (flows.selfplay_feeder), and the next
generation plays those jobs; a run that stops early (stop file, time budget) withdraws the ones not started. The
jobs go to the Redis named by the process environment (services.jobqueue.redis_url_from_env), never by a flow parameter.
"""
from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.exceptions import CancelledRun

from flows.generation import generation_flow, withdraw_selfplay_ahead
from flows.interrupt import cancel_on_interrupt
from flows.naming import run_name
from flows.progress import record_phase, run_progress_line
from flows.promote import ensure_anchor
from flows.store_sync import publish_registry_view
from services.initial_model import network_mismatch
from shared.config import PipelineConfig
from shared.curves import read_metrics
from shared.layout import DataLayout
from shared.phase import read_phase
from shared.generations import generations_done, next_generation
from shared.registry import ModelRegistry


def budget_allows_another(elapsed_s: float, last_generation_s: float, budget_s: float | None) -> bool:
    """Whether a run `elapsed_s` seconds old may start one more generation under a wall-clock budget of
    `budget_s` seconds (None: no budget), expecting it to take as long as the last one (`last_generation_s`)."""
    return budget_s is None or elapsed_s + last_generation_s <= budget_s


@flow(name="pipeline", flow_run_name=run_name("pipeline"))
@cancel_on_interrupt
def pipeline_flow(config: PipelineConfig, data_dir: str, generations: int | None = None) -> list[dict[str, Any]]:
    """Run generations until `generations` of them are done in this data directory (None: until stopped), so that a
    run stopped after k of them and started again with the same number runs the ones left; returns the summaries of
    the generations this call ran ([] when none was left).

    First plays the anchor match of the best model if a stopped run left it undone (flows.promote.ensure_anchor).
    Before each generation logs the run's overall line (flows.progress.run_progress_line: generation k of N, run
    ETA). Ctrl-C ends this run and the running generation's runs as Cancelled (flows.interrupt); the phase record
    (flows.progress.record_phase) says "interrupted" then, "finished" at the end."""
    logger = get_run_logger()
    layout = DataLayout(Path(data_dir), config.game.name)
    registry = ModelRegistry(layout.registry_dir)
    summaries = []
    stop = layout.stop_file
    stop.unlink(missing_ok=True)
    generation = next_generation(registry)
    ahead: str | None = None   # the model of the self-play the last generation enqueued ahead for this one
    ahead_jobs: int | None = None    # and how many jobs
    budget_s = None if config.pipeline.max_hours is None else config.pipeline.max_hours * 3600.0
    started = time.monotonic()
    budget_end = None if budget_s is None else datetime.now().astimezone() + timedelta(seconds=budget_s)
    durations = [m.generation_seconds for m in read_metrics(layout.metrics_path)[-5:] if m.generation_seconds]
    mismatch = network_mismatch(layout, config.game)
    if mismatch is not None:
        logger.warning("%s", mismatch)
    try:
        ensure_anchor(config, data_dir, logger)
        while generations is None or generations_done(registry) < generations:
            generation = next_generation(registry)
            more = generations is None or generation < generations
            logger.info("%s", run_progress_line(config.game.name, generation, generations, durations[-5:],
                                                     budget_end=budget_end))
            generation_started = time.monotonic()
            summaries.append(generation_flow(
                config=config, generation=generation, data_dir=data_dir, selfplay_model=ahead,
                selfplay_ahead=config.pipeline.overlap_selfplay and more, selfplay_jobs=ahead_jobs))
            durations.append(time.monotonic() - generation_started)
            ahead, ahead_jobs = summaries[-1].get("next_selfplay_model"), summaries[-1].get("next_selfplay_jobs")
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
        if ahead is not None:       # stopped by the stop file or the budget: nothing plays the next generation now
            withdraw_selfplay_ahead(config, layout, generation + 1, ahead, ahead_jobs, logger)
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
    publish_registry_view(config, layout)
    return summaries
