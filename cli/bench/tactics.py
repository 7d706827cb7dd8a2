"""`zeroforge bench tactics`: the reports of shared.players.tactics as text (how often a model's search keeps a
position's solved outcome, its rule-labelled tactic, or its VCF; see that module for what is measured).
"""
from __future__ import annotations

from typing import Any

from shared.games.inarow_tactics import LINE_KINDS
from shared.games.vcf_labels import VCF_KINDS


def model_title(report: dict[str, Any], model: dict[str, Any]) -> str:
    """"<game>: <model> at <n> simulations", with how it chose its moves where the game has a root solver."""
    how = ""
    if any(m["root_solver"] for m in report["models"]):          # the game has a root solver: both settings ran
        how = " (with the root solver, as analyze plays)" if model["root_solver"] else " (its search alone)"
    return f"{report['game']}: {model['model']}{how} at {report['simulations']} simulations"


def rate_text(r: dict[str, Any]) -> str:
    """A Rate dict as "hits/total  rate%  [low, high]"."""
    return f"{r['hits']:>5}/{r['total']:<5} {100 * r['rate']:6.1f}%  [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"


def format_tactics(report: dict[str, Any]) -> str:
    """The report of solved_tactics as a few lines of text."""
    def line(model: dict[str, Any], name: str, label: str) -> str:
        r = model[name]
        if r["total"] == 0:
            return f"  {label:<22} -"
        return f"  {label:<22} {rate_text(r)}"

    lines = []
    for model in report["models"]:
        lines += [f"{model_title(report, model)} keeps the solved outcome in ({model['search_seconds']:.1f} s of "
                  "search)",
                  line(model, "all", "all positions"), line(model, "critical", "critical positions"),
                  line(model, "won", "won positions"), line(model, "drawn", "drawn positions")]
    span = (f"after {report['plies'][0]}-{report['plies'][1]} random plies" if "plies" in report
            else f"with {report['empties'][0]}-{report['empties'][1]} empty squares")
    return "\n".join(lines + [
        f"a random legal move: {100 * report['random_move']:.1f}% (critical: "
        f"{100 * report['random_move_critical']:.1f}%)",
        f"positions: {report['positions']} kept of {report['sampled']} sampled {span} "
        f"({report['skipped_over_budget']} over the solver's budget of {report['max_nodes']:,} nodes); solving "
        f"{report['solve_seconds']:.1f} s",
    ])


def kind_rate_lines(report: dict[str, Any], kinds: tuple[str, ...]) -> list[str]:
    """Per model of a report, a title line and one line per kind of position: its rate next to a random move's."""
    lines = []
    for model in report["models"]:
        lines.append(f"{model_title(report, model)} ({model['search_seconds']:.1f} s of search)")
        for name in kinds:
            r = model[name]
            random = report["random_move_" + name]
            lines.append(f"  {name.replace('_', ' '):<12} {rate_text(r) if r['total'] else '-'}   a random move: "
                         + (f"{100 * random:.1f}%" if random == random else "-"))
    return lines


def format_line_tactics(report: dict[str, Any]) -> str:
    """The report of line_tactics as a few lines of text."""
    return "\n".join(kind_rate_lines(report, LINE_KINDS))


def format_vcf_tactics(report: dict[str, Any]) -> str:
    """The report of vcf_tactics as a few lines of text."""
    return "\n".join(kind_rate_lines(report, VCF_KINDS) + [
        f"positions: {report['positions']} of {report['labelled']} labelled (VCF within {report['depth']} attacker "
        f"moves, brute force over the rules); sampling {report['sample_seconds']:.1f} s"])
