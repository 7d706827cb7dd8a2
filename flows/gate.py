"""The `gate` flow: a paired evaluation of a candidate against the best model, spread over eval jobs.

Its result table and interval are published as Prefect artifacts.  With `gate.early_stop`, the flow
stops waiting (and cancels the remaining jobs: queued ones never start, running ones stop at their next move)
as soon as the decision is known: the pairs still to come can no longer change it, or (gate.early_stop_confidence)
the pairs played so far make it at that confidence (shared.stats.early_stop_reason); the report then says how many
pairs were played and why it stopped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from rq.job import Job
from rq.serializers import JSONSerializer

from flows.interrupt import cancel_on_interrupt
from flows.naming import artifact_key, run_name
from flows.progress import Waiter
from flows.store_sync import publish_models
from services.gatekeeper import chunk_game_scores, summarize_match
from services.jobqueue import (QUEUE_EVAL, JobSpec, RedisPatience, WaitProgress, connect, enqueue, ttl_kwargs,
                               wait_for_jobs)
from services.payloads import MatchPayload
from shared.config import PipelineConfig
from shared.layout import DataLayout
from shared.players.match import split_openings
from shared.players.spec import parse_player_spec
from shared.stats import early_stop_reason, pair_means


class _StopEarly(Exception):
    def __init__(self, results: dict[str, Any], reason: str):
        super().__init__("decision reached early")
        self.results, self.reason = results, reason


def match_specs(config: PipelineConfig, data_dir: str, job_id: Callable[[int], str], player_a: str, player_b: str,
                games: int, seed: int, description: str,
                opening_plies: tuple[int, ...] | None = None) -> list[JobSpec]:
    """The eval jobs of one paired match of `games` games (games/2 openings in gate.jobs chunks, chunk i with
    seed + i, as shared.players.match.evaluate_players plays them; `opening_plies`: openings of that many plies of
    any move, None: the family's plan); job_id(i) names chunk i's job."""
    layout = DataLayout(Path(data_dir), config.game.name)
    data_id = layout.data_id()
    publish_models(config, layout, [spec.value for spec in map(parse_player_spec, (player_a, player_b))
                                    if spec.kind == "version"])
    service, openings = config.gatekeeper(), games // 2
    return [
        JobSpec(func="services.gatekeeper.match_job",
                payload=MatchPayload(data_id=data_id, config=service, player_a=player_a, player_b=player_b,
                                     opening_indices=chunk, num_openings=openings,
                                     simulations=config.gate.simulations, seed=seed + i,
                                     opening_plies=opening_plies),
                queue=QUEUE_EVAL, job_id=job_id(i), timeout_s=config.pipeline.eval_timeout_s,
                description=f"{config.game.name} {description}: {player_a} vs {player_b}, openings {chunk[0]}..",
                **ttl_kwargs(config.pipeline))
        for i, chunk in enumerate(split_openings(openings, config.gate.jobs))
    ]


def run_match(specs: list[JobSpec], *, rule: str, threshold: float, early_stop: bool, timeout_s: float,
              outage_s: float, logger, layout: DataLayout, generation: int, phase: str,
              promote_all_draws: bool = False, early_stop_confidence: float | None = None) -> dict[str, Any]:
    """Enqueue and wait for the match jobs (on the Redis of redis_url_from_env, riding out outages of up to
    `outage_s`), logging progress and recording `phase` of `generation` (flows.progress.Waiter); return the
    summary (with "early_stopped", "early_reason" and pair counts) decided by rule, threshold and
    promote_all_draws. With early_stop, the match stops as shared.stats.early_stop_reason allows (with
    `early_stop_confidence`, also by the sequential rule)."""
    connection = connect()
    patience = RedisPatience(connection, outage_s)
    for spec in specs:
        enqueue(connection, spec, patience)
    total_pairs = sum(len(s.payload.opening_indices) for s in specs)

    def score_text(p: WaitProgress) -> str:
        scores = pair_means(chunk_game_scores(list(p.results.values())))
        return f"; {scores.size}/{total_pairs} pairs" + (f", score so far {scores.mean():.3f}" if scores.size else "")

    def stop_early(p: WaitProgress) -> None:
        games = chunk_game_scores(list(p.results.values()))
        scores = pair_means(games)
        all_drawn = promote_all_draws and bool((games == 0.5).all())
        # Stop early only with pairs to report: a decision forced before any game (too few planned pairs for
        # the rule ever to pass) still plays the match, so that the report has its figures.
        if early_stop and scores.size and p.finished < p.total:
            reason = early_stop_reason(scores, total_pairs, rule, threshold, draws_may_promote=all_drawn,
                                       confidence=early_stop_confidence)
            if reason is not None:
                raise _StopEarly(p.results, reason)

    early, early_reason = False, None
    try:
        waiter = Waiter(logger, layout, generation, phase, extra=score_text, on_wait=stop_early)
        results = wait_for_jobs(connection, [s.job_id for s in specs], timeout_s=timeout_s, progress=waiter,
                                queues=(QUEUE_EVAL,), specs={s.job_id: s for s in specs}, patience=patience)
    except _StopEarly as stop:
        results, early, early_reason = stop.results, True, stop.reason
        unfinished = [s.job_id for s in specs if s.job_id not in stop.results]
        patience.call(lambda: _cancel_unfinished(connection, unfinished), "canceling the remaining gate jobs")
    summary = summarize_match(list(results.values()), rule, threshold, promote_all_draws)
    return {**summary, "early_stopped": early, "early_reason": early_reason, "planned_pairs": total_pairs}


def _cancel_unfinished(connection, job_ids: list[str]) -> None:
    """Cancel the match jobs not finished yet: queued ones never start, running ones stop before their next move
    (services.gatekeeper.match_job reads its status: services.job_cancel)."""
    for job in Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer):
        if job is not None and not job.is_finished:
            job.cancel()


def report_markdown(title: str, report: dict[str, Any]) -> str:
    """A short markdown report of a match summary (used for the Prefect artifact and the logs)."""
    reason = report.get("early_reason") or "the remaining pairs could not change the decision"
    early = (f"\n\nStopped early after {report['pairs']} of {report['planned_pairs']} pairs: {reason}."
             if report.get("early_stopped") else "")
    return (
        f"## {title}\n\n"
        f"| games | wins | draws | losses | score | 95% CI | Elo | Elo 95% CI | decision |\n"
        f"|---|---|---|---|---|---|---|---|---|\n"
        f"| {report['games']} | {report['wins']} | {report['draws']} | {report['losses']} | {report['score']:.3f} "
        f"| [{report['ci_low']:.3f}, {report['ci_high']:.3f}] | {report['elo']:+.0f} "
        f"| [{report['elo_low']:+.0f}, {report['elo_high']:+.0f}] | {'promote' if report['promote'] else 'reject'} |\n\n"
        f"Interval from {report['pairs']} pair scores (each opening played twice, colours swapped). "
        f"Rule: {report['rule']} {report['threshold']} — {report['reason']}.{early}"
    )


@flow(name="gate", flow_run_name=run_name("gen{generation}-gate"))
@cancel_on_interrupt
def gate_flow(config: PipelineConfig, generation: int, data_dir: str, candidate: str, best: str) -> dict[str, Any]:
    """Play candidate vs best (gate.games paired games) and return the report with the decision."""
    logger = get_run_logger()
    g, game = config.gate, config.game.name
    ids = DataLayout(Path(data_dir), game).job_ids()
    specs = match_specs(config, data_dir, lambda i: ids.gate(generation, candidate, best, i), candidate, best,
                        g.games, seed=config.pipeline.seed + generation, description=f"gen {generation} gate",
                        opening_plies=g.opening_plies)
    report = run_match(specs, rule=g.promote_rule, threshold=g.threshold, early_stop=g.early_stop,
                       timeout_s=config.pipeline.wait_timeout_s, outage_s=config.pipeline.redis_outage_s, logger=logger,
                       layout=DataLayout(Path(data_dir), game), generation=generation, phase="gate",
                       promote_all_draws=g.promote_all_draws, early_stop_confidence=g.early_stop_confidence)
    report.update({"candidate": candidate, "best": best, "generation": generation, "simulations": g.simulations,
                   "opening_plies": None if g.opening_plies is None else list(g.opening_plies)})
    key = artifact_key(game, data_dir, "gate", generation)
    create_table_artifact(key=key, table=[gate_table_row(report)],
                          description=f"Gate of generation {generation}: {candidate} vs {best}")
    markdown = report_markdown(f"Generation {generation} gate: {candidate} vs {best}", report)
    create_markdown_artifact(key=f"{key}-report", markdown=markdown, description="gate report")
    logger.info("%s", gate_line(report))
    return report


def gate_table_row(report: dict[str, Any]) -> dict[str, Any]:
    """The one row of the gate's table artifact: short column names and rounded figures (scores to 3 decimals,
    Elo whole), so the table fits the Prefect UI. report: run_match's summary. Returns {column: value}."""
    return {"games": report["games"], "W/D/L": f"{report['wins']}/{report['draws']}/{report['losses']}",
            "score": round(float(report["score"]), 3),
            "95% CI": f"{report['ci_low']:.3f}-{report['ci_high']:.3f}",
            "Elo": _elo(report["elo"]), "Elo 95% CI": f"{_elo(report['elo_low'])} to {_elo(report['elo_high'])}",
            "decision": "promote" if report["promote"] else "reject"}


def gate_line(report: dict[str, Any]) -> str:
    """The gate's terminal line, ending in the decision and why, e.g. "gen 3 gate 000004 vs 000003: W/D/L
    0/400/0, score 0.500 [0.500, 0.500], Elo +0 -> PROMOTE (all 400 games drawn: gate.promote_all_draws)".
    report: gate_flow's report (run_match's summary with "generation", "candidate" and "best")."""
    decision = "PROMOTE" if report["promote"] else "reject"
    early = (f" (stopped after {report['pairs']} of {report['planned_pairs']} pairs)"
             if report.get("early_stopped") else "")
    return (f"gen {report['generation']} gate {report['candidate']} vs {report['best']}: W/D/L {report['wins']}/"
            f"{report['draws']}/{report['losses']}{early}, score {report['score']:.3f} [{report['ci_low']:.3f}, "
            f"{report['ci_high']:.3f}], Elo {_elo(report['elo'])} -> {decision} ({report['why']})")


def _elo(value: float) -> str:
    """Elo as a whole signed number ("+34", "-5", "+0", never "-0")."""
    return f"{round(value):+d}"
