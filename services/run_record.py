"""What a data directory says about a game's run when nothing runs, for `zeroforge status` without a Redis.

Read-only, from files only: the phase record (shared.phase), the model registry (generations done, the best
model and its gate and anchor records) and the metrics file (the last gate played, the latest oracle figures).
"""
from __future__ import annotations

from typing import Any

from shared.curves import read_metrics
from shared.curves.metrics import WORKER_ROLE_LABELS, WORKER_ROLES
from shared.generations import generations_done
from shared.layout import DataLayout
from shared.phase import read_phase
from shared.registry import ModelRegistry, RegistryError
from shared.registry.lineage import anchor_summary, gate_summary


def _last_gate(layout: DataLayout) -> dict[str, Any] | None:
    records = read_metrics(layout.metrics_path)
    if not records:
        return None
    last = records[-1]
    return {"generation": last.generation, "candidate": last.candidate, "best_before": last.best_before,
            "games": last.gate_games, "score": last.gate_score, "ci_low": last.gate_ci_low,
            "ci_high": last.gate_ci_high, "elo": last.gate_elo, "promoted": last.promoted, "time": last.time}


def last_oracle(layout: DataLayout) -> dict[str, Any] | None:
    """The latest generation's oracle figures in the metrics file (flows.oracle): {generation, positions,
    simulations, raw, raw_ci_low, raw_ci_high, search, search_ci_low, search_ci_high, raw_optimal,
    search_optimal, random}, None when no generation has them."""
    measured = [r for r in read_metrics(layout.metrics_path) if r.oracle_raw is not None]
    if not measured:
        return None
    last = measured[-1]
    keys = ("raw", "raw_ci_low", "raw_ci_high", "search", "search_ci_low", "search_ci_high", "raw_optimal",
            "search_optimal", "random", "positions", "simulations")
    return {"generation": last.generation, **{key: getattr(last, f"oracle_{key}") for key in keys}}


def oracle_status_line(oracle: dict[str, Any]) -> str:
    """`last_oracle`'s dict as "generation 3: raw policy 83.1% [80.2, 85.7], 16 sims 87.0% [84.1, 89.4] of 200
    positions (random move 41.2%)", with "; optimal move: raw 70.2%, 16 sims 75.0%" when the set has scores."""
    def pct(key: str) -> str:
        return f"{100 * oracle[key]:.1f}% [{100 * oracle[key + '_ci_low']:.1f}, {100 * oracle[key + '_ci_high']:.1f}]"

    text = (f"generation {oracle['generation']}: raw policy {pct('raw')}, {oracle['simulations']} sims "
            f"{pct('search')} of {oracle['positions']} positions (random move {100 * oracle['random']:.1f}%)")
    if oracle.get("raw_optimal") is not None and oracle.get("search_optimal") is not None:
        text += (f"; optimal move: raw {100 * oracle['raw_optimal']:.1f}%, {oracle['simulations']} sims "
                 f"{100 * oracle['search_optimal']:.1f}%")
    return text


def last_worker_time(layout: DataLayout) -> dict[str, Any] | None:
    """The latest generation's worker-seconds by role in the metrics file (services.worker_time): {generation,
    workers, selfplay_s, train_s, gate_s, anchor_s, idle_s}, None when no generation has them."""
    measured = [r for r in read_metrics(layout.metrics_path) if r.worker_selfplay_s is not None]
    if not measured:
        return None
    last = measured[-1]
    return {"generation": last.generation, "workers": last.workers,
            **{f"{role}_s": getattr(last, f"worker_{role}_s") for role in WORKER_ROLES}}


def worker_time_line(record: dict[str, Any]) -> str:
    """`last_worker_time`'s dict as "generation 3, 2 worker(s): self-play 71%, training 18%, gate 9%, anchor 0%,
    idle 2% of 190 worker-seconds"."""
    total = sum(record[f"{role}_s"] for role in WORKER_ROLES)
    shares = ", ".join(f"{label} {100 * record[f'{role}_s'] / total:.0f}%" if total else f"{label} -"
                       for role, label in zip(WORKER_ROLES, WORKER_ROLE_LABELS))
    return f"generation {record['generation']}, {record['workers']} worker(s): {shares} of {total:.0f} worker-seconds"


def run_record(layout: DataLayout) -> dict[str, Any]:
    """The run of `layout`'s game as the data directory records it, one JSON-ready dict: {"phase": the phase record
    or None, "generations_done": int, "models": int, "best": {version, generation, status, gate (gate_summary),
    anchor (anchor_summary)} or None, "last_gate": {generation, candidate, best_before, games, score, ci_low,
    ci_high, elo, promoted, time} or None, "oracle": last_oracle's dict or None, "worker_time": last_worker_time's
    dict or None, "problem": a registry error's text or None}."""
    registry = ModelRegistry(layout.registry_dir)
    result: dict[str, Any] = {"phase": read_phase(layout.phase_file), "generations_done": 0, "models": 0,
                              "best": None, "last_gate": _last_gate(layout), "oracle": last_oracle(layout),
                              "worker_time": last_worker_time(layout), "problem": None}
    try:
        versions = registry.list()
        result["models"] = len(versions)
        result["generations_done"] = generations_done(registry)
        best = registry.best()
    except RegistryError as exc:
        result["problem"] = str(exc)
        return result
    if best is not None:
        result["best"] = {"version": best.version, "generation": best.generation, "status": best.status,
                          "gate": gate_summary(best.gate), "anchor": anchor_summary(best.gate)}
    return result


def run_record_lines(game: str, record: dict[str, Any]) -> list[str]:
    """`record` (run_record's dict) as lines for the terminal, e.g. "tictactoe: 3 generations done, 4 models; last
    phase gen 3 done 3 generation(s) run (finished), ...", "best: 000004 (generation 3) ...", "last gate: ..."."""
    from shared.phase import phase_line

    phase = record["phase"]
    when = f" at {phase['time']}" if phase and phase.get("time") else ""
    lines = [f"{game}: {record['generations_done']} generation(s) done, {record['models']} model(s); last phase: "
             f"{phase_line(phase)}{when}"]
    best = record["best"]
    if best is None:
        lines.append("  best:      none yet")
    else:
        text = f"  best:      {best['version']} (generation {best['generation']})"
        gate = best["gate"]
        if gate and gate.get("score") is not None:
            text += (f", gate score {gate['score']:.3f} vs {gate.get('against') or '?'}"
                     + (f" over {gate['games']} games" if gate.get("games") else ""))
        anchor = best["anchor"]
        if anchor and anchor.get("score") is not None:
            text += f"; against {anchor.get('opponent', 'the anchor')} {anchor['score']:.3f}"
            if anchor.get("elo") is not None:
                text += f" (Elo {anchor['elo']:+.0f})"
        lines.append(text)
    gate = record["last_gate"]
    if gate is None:
        lines.append("  last gate: none yet")
    else:
        score = "?" if gate["score"] is None else f"{gate['score']:.3f}"
        interval = ("" if gate["ci_low"] is None or gate["ci_high"] is None
                    else f" [{gate['ci_low']:.3f}, {gate['ci_high']:.3f}]")
        lines.append(f"  last gate: generation {gate['generation']}, {gate['candidate']} vs {gate['best_before']}: "
                     f"score {score}{interval} over {gate['games']} games -> "
                     f"{'promoted' if gate['promoted'] else 'rejected'}")
    if record.get("oracle"):
        lines.append(f"  oracle:    {oracle_status_line(record['oracle'])}")
    if record.get("worker_time"):
        lines.append(f"  workers:   {worker_time_line(record['worker_time'])}")
    if record["problem"]:
        lines.append(f"  registry:  {record['problem']}")
    return lines
