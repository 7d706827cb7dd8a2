"""Strength over generations: the anchored Elo curve of every promoted model, as a table and a PNG.

Two curves, both read from the registry's gate results:
- anchor Elo: each new best model's Elo difference against the game's fixed baseline (gate.anchor), with
  its 95% interval: an absolute scale that does not drift;
- cumulative gate Elo: the sum of the gate Elo differences of the promoted candidates (relative, drifts).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flows.plotting import generation_axis, new_figure, png_markdown, save_png
from shared.curves import ElapsedHours, GenerationMetrics, elapsed_hours
from shared.registry import WAS_BEST, ModelRegistry


@dataclass(frozen=True)
class StrengthPoint:
    """One promoted version's strength figures."""

    version: str
    generation: int
    gate_elo_cumulative: float
    anchor: str | None
    anchor_score: float | None
    anchor_elo: float | None
    anchor_elo_low: float | None
    anchor_elo_high: float | None


def strength_points(registry: ModelRegistry) -> list[StrengthPoint]:
    """The versions that were best at some time (promoted or retired; the initial model too) and candidates whose
    gate said promote, in generation order, with their figures."""
    points, cumulative = [], 0.0
    for v in sorted(registry.list(), key=lambda v: (v.generation, v.version)):
        if v.status not in WAS_BEST and not (v.gate or {}).get("promote"):
            continue
        gate = v.gate or {}
        if v.generation > 0 and "elo" in gate:
            cumulative += float(gate["elo"])
        anchor = gate.get("anchor") or {}
        points.append(StrengthPoint(v.version, v.generation, cumulative, anchor.get("opponent"), anchor.get("score"),
                                    anchor.get("elo"), anchor.get("elo_low"), anchor.get("elo_high")))
    return points


def strength_figure(points: list[StrengthPoint], title: str):
    """The figure of both curves over integer generation ticks (matplotlib Figure)."""
    fig, axes = new_figure(1, 1, 7, 4)
    ax = axes[0][0]
    gens = [p.generation for p in points]
    ax.plot(gens, [p.gate_elo_cumulative for p in points], "o-", label="cumulative gate Elo (relative)")
    anchored = [p for p in points if p.anchor_elo is not None]
    if anchored:
        ax.errorbar([p.generation for p in anchored], [p.anchor_elo for p in anchored],
                    yerr=[[p.anchor_elo - p.anchor_elo_low for p in anchored],
                          [p.anchor_elo_high - p.anchor_elo for p in anchored]],
                    fmt="s-", capsize=3, label=f"Elo vs {anchored[-1].anchor} (95% CI)")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    generation_axis(ax)
    ax.set_ylabel("Elo")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    return fig


def write_strength_plot(points: list[StrengthPoint], path: Path, title: str) -> Path | None:
    """Draw both curves to a PNG at `path` (written atomically); None when there is nothing to plot."""
    if not points:
        return None
    return save_png(strength_figure(points, title), path)


def strength_markdown(points: list[StrengthPoint], png: Path | None) -> str:
    """A markdown table of the curve, with the PNG inlined (for the Prefect artifact)."""
    rows = ["| generation | version | cumulative gate Elo | anchor | score | Elo [95% CI] |", "|---|---|---|---|---|---|"]
    for p in points:
        anchor = (f"{p.anchor} | {p.anchor_score:.3f} | {p.anchor_elo:+.0f} [{p.anchor_elo_low:+.0f}, "
                  f"{p.anchor_elo_high:+.0f}]") if p.anchor_elo is not None else "- | - | -"
        rows.append(f"| {p.generation} | {p.version} | {p.gate_elo_cumulative:+.0f} | {anchor} |")
    return "## Strength over generations\n\n" + "\n".join(rows) + png_markdown(png, "strength")


def anchor_hours_figure(records: list[GenerationMetrics], hours: list[ElapsedHours], title: str):
    """The anchor score (with its 95% interval) of each generation that played an anchor match, against the
    wall-clock hours of training at the end of that generation (matplotlib Figure). `records` and `hours` are
    parallel lists (shared.curves.elapsed_hours); estimated hours are drawn as hollow markers."""
    fig, axes = new_figure(1, 1, 7, 4)
    ax = axes[0][0]
    for opponent in sorted({r.anchor for r in records if r.anchor_score is not None}):
        for estimated, fill in ((False, "full"), (True, "none")):
            pts = [(h.hours, r) for r, h in zip(records, hours) if r.anchor == opponent and r.anchor_score is not None
                   and h.estimated is estimated]
            if not pts:
                continue
            scores = [r.anchor_score for _, r in pts]
            bounds = [r.anchor_interval or (r.anchor_score, r.anchor_score) for _, r in pts]
            low = [max(0.0, s - lo) for s, (lo, _) in zip(scores, bounds)]
            high = [max(0.0, hi - s) for s, (_, hi) in zip(scores, bounds)]
            ax.errorbar([h for h, _ in pts], scores, yerr=[low, high], fmt="o-", fillstyle=fill, capsize=3,
                        label=f"score vs {opponent}" + (" (hours estimated)" if estimated else ""))
    ax.axhline(0.5, color="grey", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("hours of training (wall clock)")
    ax.set_ylabel("anchor score (95% CI)")
    ax.grid(alpha=0.3)
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    return fig


def write_anchor_hours_plot(records: list[GenerationMetrics], path: Path, title: str,
                            hours: list[ElapsedHours] | None = None) -> Path | None:
    """Draw anchor_hours_figure of `records` to a PNG at `path` (atomically); `hours` parallel to `records`
    (default: elapsed_hours(records)). None when no record has an anchor score."""
    if not any(r.anchor_score is not None for r in records):
        return None
    return save_png(anchor_hours_figure(records, hours or elapsed_hours(records), title), path)
