"""The `gate` flow: a paired evaluation of a candidate against the best model, spread over eval jobs.

Its result table and interval are published as Prefect artifacts.  With `gate.early_stop`, the flow
stops waiting (and cancels the remaining jobs) as soon as the pairs still to come can no longer change
the decision; the report then says how many pairs were played.
"""
from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from services.gatekeeper import split_openings, summarize_match
from services.jobqueue import (QUEUE_EVAL, JobSpec, WaitProgress, connect, enqueue, namespace_for, ttl_kwargs,
                               wait_for_jobs)
from shared.config import PipelineConfig
from shared.stats import can_stop_early


class _StopEarly(Exception):
    def __init__(self, results: dict[str, Any]):
        super().__init__("decision reached early")
        self.results = results


def match_specs(data_dir: str, config: dict[str, Any], tag: str, player_a: str, player_b: str,
                games: int, simulations: int, jobs: int, seed: int) -> list[JobSpec]:
    """The eval jobs of one paired match of `games` games (games/2 openings split into `jobs` chunks)."""
    cfg = PipelineConfig.model_validate(config)
    openings = games // 2
    prefix = f"zf-{namespace_for(data_dir)}-{cfg.game.name}-{tag}"
    return [
        JobSpec(func="services.gatekeeper.match_job",
                kwargs={"data_dir": data_dir, "config": config, "player_a": player_a, "player_b": player_b,
                        "opening_indices": chunk, "num_openings": openings, "simulations": simulations,
                        "seed": seed + i},
                queue=QUEUE_EVAL, job_id=f"{prefix}-m{i:03d}", timeout_s=cfg.pipeline.eval_timeout_s,
                description=f"{cfg.game.name} {tag}: {player_a} vs {player_b}, openings {chunk[0]}..",
                **ttl_kwargs(cfg.pipeline))
        for i, chunk in enumerate(split_openings(openings, jobs))
    ]


def run_match(redis_url: str, specs: list[JobSpec], *, rule: str, threshold: float, early_stop: bool,
              timeout_s: float, logger) -> dict[str, Any]:
    """Enqueue and wait for the match jobs; return the summary (with "early_stopped" and pair counts)."""
    connection = connect(redis_url)
    for spec in specs:
        enqueue(connection, spec)
    total_pairs = sum(len(s.kwargs["opening_indices"]) for s in specs)

    def progress(p: WaitProgress) -> None:
        pair_scores = [sum(pair["scores"]) / 2 for r in p.results.values() for pair in r["pairs"]]
        logger.info("match: %d/%d jobs done, %d/%d pairs", p.finished, p.total, len(pair_scores), total_pairs)
        if early_stop and p.finished < p.total and can_stop_early(pair_scores, total_pairs, rule, threshold):
            raise _StopEarly(p.results)

    early = False
    try:
        results = wait_for_jobs(connection, [s.job_id for s in specs], timeout_s=timeout_s, progress=progress,
                                queues=(QUEUE_EVAL,))
    except _StopEarly as stop:
        results, early = stop.results, True
        _cancel_unfinished(connection, [s.job_id for s in specs if s.job_id not in stop.results])
    summary = summarize_match(list(results.values()), rule, threshold)
    return {**summary, "early_stopped": early, "planned_pairs": total_pairs}


def _cancel_unfinished(connection, job_ids: list[str]) -> None:
    from rq.job import Job
    from rq.serializers import JSONSerializer

    for job in Job.fetch_many(job_ids, connection=connection, serializer=JSONSerializer):
        if job is not None and not job.is_finished:
            job.cancel()


def report_markdown(title: str, report: dict[str, Any]) -> str:
    """A short markdown report of a match summary (used for the Prefect artifact and the logs)."""
    early = (f"\n\nStopped early after {report['pairs']} of {report['planned_pairs']} pairs: the remaining pairs "
             "could not change the decision." if report.get("early_stopped") else "")
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


@flow(name="gate", flow_run_name="{game}-gen{generation}-gate")
def gate_flow(game: str, generation: int, data_dir: str, redis_url: str, config: dict[str, Any],
              candidate: str, best: str) -> dict[str, Any]:
    """Play candidate vs best (gate.games paired games) and return the report with the decision."""
    logger = get_run_logger()
    cfg = PipelineConfig.model_validate(config)
    g = cfg.gate
    specs = match_specs(data_dir, config, f"g{generation:06d}-gate-{candidate}-vs-{best}", candidate, best,
                        g.games, g.simulations, g.jobs, seed=cfg.pipeline.seed + generation)
    report = run_match(redis_url, specs, rule=g.promote_rule, threshold=g.threshold, early_stop=g.early_stop,
                       timeout_s=cfg.pipeline.wait_timeout_s, logger=logger)
    report.update({"candidate": candidate, "best": best, "generation": generation, "simulations": g.simulations})
    key = f"{game}-gen{generation}-gate".lower().replace("_", "-")
    create_table_artifact(key=key, table=[{k: report[k] for k in ("games", "wins", "draws", "losses", "score",
                                                                      "ci_low", "ci_high", "elo", "elo_low",
                                                                      "elo_high", "promote")}],
                          description=f"Gate of generation {generation}: {candidate} vs {best}")
    markdown = report_markdown(f"Generation {generation} gate: {candidate} vs {best}", report)
    create_markdown_artifact(key=f"{key}-report", markdown=markdown, description="gate report")
    logger.info("gen %d gate %s vs %s: W/D/L %d/%d/%d, score %.3f [%.3f, %.3f], Elo %+.0f -> %s",
                generation, candidate, best, report["wins"], report["draws"], report["losses"], report["score"],
                report["ci_low"], report["ci_high"], report["elo"], "PROMOTE" if report["promote"] else "reject")
    return report
