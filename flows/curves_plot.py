"""The per-run curves artifact: six panels over integer generations, drawn from the metrics file's records.

Panels: training loss (total, policy, value: means over each generation's last 50 steps), self-play speed
(games/s and positions/s), mean game length, the gate score with its 95% interval (green: promoted, red:
rejected), the anchor Elo with its 95% interval (promoted generations with an anchor match), and the
first-player win and draw rates of self-play.
"""
from __future__ import annotations

from pathlib import Path

from flows.plotting import generation_axis, new_figure, png_markdown, save_png
from shared.curves import GenerationMetrics

#: generations listed in the artifact's table (the newest ones; the plot shows them all)
TABLE_ROWS = 20


def _series(records: list[GenerationMetrics], value) -> tuple[list[int], list[float]]:
    points = [(r.generation, value(r)) for r in records if value(r) is not None]
    return [g for g, _ in points], [v for _, v in points]


def _interval(ax, records: list[GenerationMetrics], mid, low, high, label: str, fmt: str, **style) -> bool:
    """Error bars mid [low, high] of the records that have them; False when none has."""
    have = [r for r in records if mid(r) is not None and low(r) is not None and high(r) is not None]
    if not have:
        return False
    ax.errorbar([r.generation for r in have], [mid(r) for r in have],
                yerr=[[mid(r) - low(r) for r in have], [high(r) - mid(r) for r in have]],
                fmt=fmt, capsize=3, label=label, **style)
    return True


def _nothing_yet(ax, what: str) -> None:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, color="grey")


def curves_figure(records: list[GenerationMetrics], title: str):
    """The six-panel figure (matplotlib Figure) of `records` (generation order), x = generation."""
    fig, axes = new_figure(2, 3, 13, 7)
    loss, speed, length, gate, anchor, results = axes[0][0], axes[0][1], axes[0][2], axes[1][0], axes[1][1], axes[1][2]
    for key, style in (("loss", "o-"), ("policy_loss", "s--"), ("value_loss", "^--")):
        loss.plot(*_series(records, lambda r: getattr(r, key)), style, label=key.replace("_", " "))
    loss.set_title("training loss (last 50 steps)")
    speed.plot(*_series(records, lambda r: r.games_per_s), "o-", color="tab:blue", label="games/s")
    speed.set_ylabel("games/s", color="tab:blue")
    positions = speed.twinx()
    positions.plot(*_series(records, lambda r: r.positions_per_s), "s--", color="tab:orange", label="positions/s")
    positions.set_ylabel("positions/s", color="tab:orange")
    speed.set_title("self-play speed")
    length.plot(*_series(records, lambda r: r.mean_game_length), "o-")
    length.set_title("mean game length (positions per game)")
    gated = [_interval(gate, [r for r in records if r.promoted is promoted], lambda r: r.gate_score,
                       lambda r: r.gate_ci_low, lambda r: r.gate_ci_high, label, "o", color=color)
             for promoted, label, color in ((True, "promoted", "tab:green"), (False, "rejected", "tab:red"))]
    if any(gated):
        gate.axhline(0.5, color="grey", linewidth=0.8)
    else:
        _nothing_yet(gate, "no gate yet")
    gate.set_title("gate: candidate's score vs best (95% CI)")
    opponents = sorted({r.anchor for r in records if r.anchor_elo is not None})
    if _interval(anchor, records, lambda r: r.anchor_elo, lambda r: r.anchor_elo_low, lambda r: r.anchor_elo_high,
                 "Elo, 95% CI", "s-"):
        anchor.axhline(0.0, color="grey", linewidth=0.8)
    else:
        _nothing_yet(anchor, "no anchor match yet")
    anchor.set_title(f"Elo vs {', '.join(opponents)}" if opponents else "anchor Elo")
    results.plot(*_series(records, lambda r: r.first_player_win_rate), "o-", label="first-player wins")
    results.plot(*_series(records, lambda r: r.draw_rate), "s--", label="draws")
    results.set_ylim(-0.02, 1.02)
    results.set_title("self-play results (fraction of games)")
    first, last = (records[0].generation, records[-1].generation) if records else (1, 1)
    for ax in (loss, speed, length, gate, anchor, results):
        ax.set_xlim(first - 0.5, last + 0.5)
        generation_axis(ax)
        if ax.get_legend_handles_labels()[0] and ax is not speed:
            ax.legend(loc="best", fontsize=8)
    fig.suptitle(title)
    return fig


def write_curves_plot(records: list[GenerationMetrics], path: Path, title: str) -> Path | None:
    """Draw curves_figure to a PNG at `path` (written atomically); None when there is no record yet."""
    if not records:
        return None
    return save_png(curves_figure(records, title), path)


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _elo(value: float | None) -> str:
    return "-" if value is None else f"{round(value):+d}"


def curves_markdown(records: list[GenerationMetrics], png: Path | None, title: str) -> str:
    """Markdown of the artifact: a table of the newest TABLE_ROWS generations and the PNG inlined. The table
    keeps to what fits the Prefect UI's artifact page (short headers, scores to 3 decimals, whole Elo);
    positions per second and the replay window are in the metrics file and TensorBoard."""
    rows = ["| gen | games/s | length | loss | gate [95% CI] | promoted | anchor Elo [95% CI] |",
            "|---|---|---|---|---|---|---|"]
    for r in records[-TABLE_ROWS:]:
        gate = "-" if r.gate_score is None else \
            f"{r.gate_score:.3f} [{_number(r.gate_ci_low, '.3f')}, {_number(r.gate_ci_high, '.3f')}]"
        anchor = "-" if r.anchor_elo is None else \
            f"{_elo(r.anchor_elo)} [{_elo(r.anchor_elo_low)}, {_elo(r.anchor_elo_high)}]"
        rows.append(f"| {r.generation} | {_number(r.games_per_s, '.2f')} | {_number(r.mean_game_length, '.1f')} "
                    f"| {_number(r.loss, '.3f')} | {gate} | {'yes' if r.promoted else 'no'} | {anchor} |")
    shown = f" (the newest {TABLE_ROWS} of {len(records)})" if len(records) > TABLE_ROWS else ""
    return f"## {title}\n\nGenerations{shown}:\n\n" + "\n".join(rows) + png_markdown(png, "curves")
