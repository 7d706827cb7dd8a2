"""Scores of the moves chosen on labelled positions: how often a move keeps what the position's label says, as
rates with 95% Wilson intervals, and the rate a uniformly random legal move would get.

Three kinds of label: solved move values (values [N, A] int64: 1 win, 0 draw, -1 loss, -2 illegal, from a
perfect solver), rule outcomes of in-a-row positions (outcomes [N, A] int8 of `Game.move_outcomes`, -2 illegal,
with kinds [N] of shared.games.inarow_tactics.LINE_KINDS), and good-move masks of VCF positions (good [N, A] bool
with kinds [N] of shared.games.vcf_labels.VCF_KINDS).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest

from shared.games.inarow_tactics import LINE_KINDS
from shared.games.vcf_labels import VCF_KINDS
from shared.search.solved import ILLEGAL


@dataclass(frozen=True)
class Rate:
    """k of n, with the 95% Wilson interval of k / n."""

    hits: int
    total: int
    rate: float
    ci_low: float
    ci_high: float


def rate(hits: int, total: int) -> Rate:
    """Rate of `hits` out of `total` with its 95% Wilson interval (all NaN when total is 0)."""
    if total == 0:
        return Rate(0, 0, float("nan"), float("nan"), float("nan"))
    interval = binomtest(hits, total).proportion_ci(confidence_level=0.95, method="wilson")
    return Rate(hits, total, hits / total, float(interval.low), float(interval.high))


def keep_report(values: np.ndarray, chosen: np.ndarray) -> dict[str, Any]:
    """Rates of keeping the outcome: values [N, A] int64 (solver values), chosen [N] int64 actions -> dict of
    Rate dicts: "all", "critical" (some legal move loses the outcome), "won", "drawn"."""
    best = values.max(axis=1)                                            # [N]: 1 won, 0 drawn (lost ones excluded)
    kept = values[np.arange(values.shape[0]), chosen] == best            # [N] bool
    return {name: asdict(rate(int(kept[rows].sum()), int(rows.sum())))
            for name, rows in (("all", np.ones_like(kept)), ("critical", critical_rows(values)), ("won", best == 1),
                               ("drawn", best == 0))}


def critical_rows(values: np.ndarray) -> np.ndarray:
    """values [N, A] int64 -> [N] bool: some legal move of the position loses its solved outcome."""
    return ((values != ILLEGAL) & (values < values.max(axis=1, keepdims=True))).any(axis=1)


def random_move_rates(values: np.ndarray) -> dict[str, float]:
    """Expected keep rate of a uniformly random legal move over all positions and over the critical ones."""
    legal = values != ILLEGAL
    share = (values == values.max(axis=1, keepdims=True)).sum(axis=1) / np.maximum(legal.sum(axis=1), 1)
    critical = critical_rows(values)
    return {"random_move": float(share.mean()) if share.size else float("nan"),
            "random_move_critical": float(share[critical].mean()) if critical.any() else float("nan")}


def line_keep_report(kinds: np.ndarray, outcomes: np.ndarray, chosen: np.ndarray) -> dict[str, Any]:
    """Per kind, how often the chosen move does what the position asks: kinds [N] int64, outcomes [N, A] int8
    (as from line_tactic_positions), chosen [N] int64 -> {kind name: Rate dict}."""
    picked = outcomes[np.arange(kinds.size), chosen]
    good = np.where(kinds == 0, picked == 1, picked == 0)
    return {name: asdict(rate(int(good[kinds == k].sum()), int((kinds == k).sum()))) for k, name in enumerate(LINE_KINDS)}


def line_random_rates(kinds: np.ndarray, outcomes: np.ndarray) -> dict[str, float]:
    """Expected rate of a uniformly random legal move per kind."""
    legal = (outcomes != -2).sum(axis=1)
    good = np.where(kinds == 0, (outcomes == 1).sum(axis=1), (outcomes == 0).sum(axis=1)) / np.maximum(legal, 1)
    return {f"random_move_{name}": float(good[kinds == k].mean()) for k, name in enumerate(LINE_KINDS)}


def vcf_keep_report(kinds: np.ndarray, good: np.ndarray, chosen: np.ndarray) -> dict[str, Any]:
    """Per kind, how often the chosen move is a good one: kinds [N] int64, good [N, A] bool, chosen [N] int64 ->
    {kind name: Rate dict}."""
    kept = good[np.arange(kinds.size), chosen]
    return {name: asdict(rate(int(kept[kinds == k].sum()), int((kinds == k).sum())))
            for k, name in enumerate(VCF_KINDS)}


def vcf_random_rates(kinds: np.ndarray, good: np.ndarray, legal: np.ndarray) -> dict[str, float]:
    """Expected rate of a uniformly random legal move per VCF kind: kinds [N] int64, good [N, A] bool, legal
    [N, A] bool -> {"random_move_<kind>": rate, NaN for a kind without positions}."""
    share = good.sum(axis=1) / np.maximum(legal.sum(axis=1), 1)
    return {f"random_move_{name}": float(share[kinds == k].mean()) if (kinds == k).any() else float("nan")
            for k, name in enumerate(VCF_KINDS)}
