"""shared.players.tactics_scores: the keep rates on hand-made labels, and a random move's expected rates."""
from __future__ import annotations

import numpy as np
import pytest

from shared.players.tactics_scores import (
    keep_report, line_keep_report, line_random_rates, random_move_rates, rate, vcf_keep_report, vcf_random_rates,
)

X = -2   # a full column


def test_keep_report_counts_moves_that_keep_the_best_value() -> None:
    values = np.array([
        [1, -1, -1, X, -1, -1, -1],     # won, critical: only column 1 wins
        [1, 1, 1, 1, 1, 1, 1],          # won, every move wins: not critical
        [0, -1, 0, X, X, X, X],         # drawn, critical
        [0, 0, 0, 0, 0, 0, 0],          # drawn, not critical
    ], np.int64)
    report = keep_report(values, np.array([0, 3, 1, 6]))        # keeps, keeps, loses the draw, keeps
    assert (report["all"]["hits"], report["all"]["total"]) == (3, 4)
    assert (report["critical"]["hits"], report["critical"]["total"]) == (1, 2)
    assert (report["won"]["hits"], report["won"]["total"]) == (2, 2)
    assert (report["drawn"]["hits"], report["drawn"]["total"]) == (1, 2)
    random = random_move_rates(values)
    assert random["random_move"] == pytest.approx((1 / 6 + 1 + 2 / 3 + 1) / 4)
    assert random["random_move_critical"] == pytest.approx((1 / 6 + 2 / 3) / 2)
    assert 0 <= report["all"]["ci_low"] < 0.75 < report["all"]["ci_high"] <= 1


def test_keep_report_counts_good_moves_per_kind() -> None:
    kinds = np.array([0, 0, 1])
    good = np.zeros((3, 4), bool)
    good[0, 1] = good[1, 2] = good[2, 3] = True
    report = vcf_keep_report(kinds, good, np.array([1, 0, 3]))
    assert (report["vcf"]["hits"], report["vcf"]["total"]) == (1, 2)
    assert (report["vcf_defence"]["hits"], report["vcf_defence"]["total"]) == (1, 1)


def test_line_rates_count_the_moves_each_kind_asks_for() -> None:
    kinds = np.array([0, 0, 1, 1])
    outcomes = np.array([[1, 0, 0, X], [0, 1, 1, 0], [-1, 0, X, X], [0, -1, -1, -1]], np.int8)
    report = line_keep_report(kinds, outcomes, np.array([0, 0, 1, 1]))        # wins, misses, blocks, lets it win
    assert (report["win_in_1"]["hits"], report["win_in_1"]["total"]) == (1, 2)
    assert (report["must_block"]["hits"], report["must_block"]["total"]) == (1, 2)
    random = line_random_rates(kinds, outcomes)
    assert random["random_move_win_in_1"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert random["random_move_must_block"] == pytest.approx((1 / 2 + 1 / 4) / 2)


def test_vcf_random_rates_and_the_empty_rate() -> None:
    kinds = np.array([0, 0])
    good = np.array([[True, False, False], [True, True, False]])
    legal = np.array([[True, True, False], [True, True, True]])
    random = vcf_random_rates(kinds, good, legal)
    assert random["random_move_vcf"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert random["random_move_vcf_defence"] != random["random_move_vcf_defence"]      # NaN: no position
    empty = rate(0, 0)
    assert empty.total == 0 and np.isnan(empty.rate) and np.isnan(empty.ci_low)
