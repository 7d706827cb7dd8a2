"""Record each finished generation's figures: the metrics file, TensorBoard curves and the Prefect artifact.

After the gate decision the generation flow calls `record_generation`: it builds a GenerationMetrics from what
the generation's steps returned, appends it to the metrics file (DataLayout.metrics_path), writes its scalars
to the TensorBoard run (x = generation) and republishes the run's "curves" markdown artifact from the whole
file. Curves are a convenience: every failure here is logged and never fails the generation.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect.artifacts import create_markdown_artifact

from flows.curves_plot import curves_markdown, write_curves_plot
from flows.naming import artifact_key
from services.worker_time import WorkerTime
from shared.curves import GenerationMetrics, ScalarWriter, append_metrics, read_metrics
from shared.layout import DataLayout


def _rate(count: int, seconds: float | None) -> float | None:
    return round(count / seconds, 3) if count and seconds else None


def generation_metrics(generation: int, selfplay: dict[str, Any], training: dict[str, Any], gate: dict[str, Any],
                       decision: dict[str, Any], generation_seconds: float | None = None,
                       oracle: dict[str, Any] | None = None, split: WorkerTime | None = None) -> GenerationMetrics:
    """The record of one generation from the flow's step results.

    selfplay: run_selfplay's totals (games, positions, first_player_wins, draws, second_player_wins, and
    seconds / new_games / new_positions: the stage's elapsed time and the games played in it); training: a
    TrainResult dict; gate: the gate report (score, ci_low, ci_high, elo, games, candidate, best); decision:
    decide_flow's result (promoted, and anchor: the anchor match summary or None); generation_seconds: the
    generation's whole wall time; oracle: the oracle_* fields of flows.oracle.oracle_figures, None when not
    measured; split: where the workers' time went (services.worker_time), None when not measured.
    """
    seconds = selfplay.get("seconds")
    anchor = decision.get("anchor") or {}
    return GenerationMetrics(
        generation=generation, time=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        games=selfplay["games"], positions=selfplay["positions"], first_player_wins=selfplay["first_player_wins"],
        draws=selfplay["draws"], second_player_wins=selfplay["second_player_wins"], selfplay_seconds=seconds,
        generation_seconds=None if generation_seconds is None else round(generation_seconds, 3),
        games_per_s=_rate(selfplay.get("new_games", 0), seconds),
        positions_per_s=_rate(selfplay.get("new_positions", 0), seconds),
        loss=training.get("loss"), policy_loss=training.get("policy_loss"), value_loss=training.get("value_loss"),
        first_loss=training.get("first_loss"), train_steps=training.get("steps"),
        replay_positions=training.get("positions"),
        candidate=gate.get("candidate"), best_before=gate.get("best"), gate_games=gate.get("games"),
        gate_score=gate.get("score"), gate_ci_low=gate.get("ci_low"), gate_ci_high=gate.get("ci_high"),
        gate_elo=gate.get("elo"), promoted=bool(decision.get("promoted")),
        anchor=anchor.get("opponent"), anchor_score=anchor.get("score"), anchor_ci_low=anchor.get("ci_low"),
        anchor_ci_high=anchor.get("ci_high"), anchor_elo=anchor.get("elo"),
        anchor_elo_low=anchor.get("elo_low"), anchor_elo_high=anchor.get("elo_high"), **(oracle or {}),
        **({} if split is None else split.metric_fields()))


def publish_curves(layout: DataLayout, records: list[GenerationMetrics]) -> str:
    """Redraw the curves PNG from `records` and publish the run's curves artifact; returns its markdown."""
    title = f"{layout.game_name} training curves"
    png = write_curves_plot(records, layout.curves_plot_path, title)
    markdown = curves_markdown(records, png, title)
    create_markdown_artifact(key=artifact_key(layout.game_name, layout.root, "curves"), markdown=markdown,
                             description="loss, self-play speed, game length, gate and anchor over generations")
    return markdown


def record_generation(layout: DataLayout, record: GenerationMetrics, logger) -> None:
    """Append `record` to the metrics file, write its TensorBoard scalars, republish the curves artifact.

    Never raises: a failure is logged as a warning and the run goes on."""
    try:
        append_metrics(layout.metrics_path, record)
    except OSError as exc:
        logger.warning("could not append generation %d to %s (%s)", record.generation, layout.metrics_path, exc)
    writer = ScalarWriter(layout.tensorboard_run_dir)
    writer.write(record.generation, record.scalars())
    writer.close()
    try:
        publish_curves(layout, read_metrics(layout.metrics_path))
    except Exception as exc:  # a plot or an artifact must never fail the generation
        logger.warning("could not publish the curves artifact of %s (%s)", Path(layout.root), exc)
