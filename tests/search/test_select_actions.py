"""select_actions: greedy with random tie-breaks at temperature 0, visit^(1/T) sampling otherwise."""
from __future__ import annotations

import numpy as np
import pytest

from shared.search import SearchError, select_actions


def test_temperature_zero_picks_the_most_visited() -> None:
    visits = np.array([[1, 9, 3, 0], [0, 0, 0, 2], [5, 4, 0, 0]], np.float32)
    actions = select_actions(visits, 0.0, np.random.default_rng(0))
    assert actions.tolist() == [1, 3, 0] and actions.dtype == np.int64


def test_temperature_zero_breaks_ties_at_random_among_the_best() -> None:
    visits = np.tile(np.array([[3, 7, 0, 7]], np.float32), (2000, 1))
    actions = select_actions(visits, 0.0, np.random.default_rng(0))
    assert set(actions.tolist()) == {1, 3}
    assert 0.4 < (actions == 1).mean() < 0.6


def test_temperature_one_samples_in_proportion_to_visits() -> None:
    visits = np.tile(np.array([[10, 30, 0, 60]], np.float32), (20000, 1))
    actions = select_actions(visits, 1.0, np.random.default_rng(1))
    freq = np.bincount(actions, minlength=4) / actions.size
    np.testing.assert_allclose(freq, [0.1, 0.3, 0.0, 0.6], atol=0.015)


def test_low_temperature_sharpens_and_per_row_temperatures_apply() -> None:
    visits = np.tile(np.array([[40, 60]], np.float32), (4000, 1))
    temps = np.where(np.arange(4000) < 2000, 0.25, 1.0)
    actions = select_actions(visits, temps, np.random.default_rng(2))
    sharp = (actions[:2000] == 1).mean()                             # 60^4 / (40^4 + 60^4) = 0.835
    plain = (actions[2000:] == 1).mean()
    assert sharp == pytest.approx(0.835, abs=0.03) and plain == pytest.approx(0.6, abs=0.03)
    tiny = select_actions(visits[:100], 1e-4, np.random.default_rng(3))  # no overflow at tiny T
    assert (tiny == 1).all()


def test_rows_without_visits_or_negative_temperatures_are_rejected() -> None:
    with pytest.raises(SearchError, match="no visits"):
        select_actions(np.zeros((1, 3)), 1.0, np.random.default_rng(0))
    with pytest.raises(SearchError, match=">= 0"):
        select_actions(np.ones((1, 3)), -1.0, np.random.default_rng(0))
