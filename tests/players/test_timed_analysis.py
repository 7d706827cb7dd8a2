"""shared.players.timed_analysis: without a time budget exactly one search of the node budget, as analyze_states
with the same seed; with one, a calibration slice and then the largest search the measured time says fits, on a
fake clock that each network call advances."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.players.analysis import AnalysisError, analyze_states
from shared.players.timed_analysis import (
    FIRST_SLICE, SEARCH_GROWTH, SLICE_SAFETY, next_slice, timed_analysis,
)
from shared.search.types import SearchConfig
from tests.search.helpers import HashEvaluator

CONNECT4 = make_game("connect4")
SEARCH = SearchConfig(num_simulations=64, solver=True)


class FakeClock:
    """A clock that stands still until `advance` moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class TimedEvaluator:
    """HashEvaluator whose every call costs `per_position` seconds of the fake clock per position evaluated, and
    that records the simulations it was asked for through the batch sizes."""

    def __init__(self, game, clock: FakeClock, per_position: float) -> None:
        self.inner, self.clock, self.per_position = HashEvaluator(game), clock, per_position

    def __call__(self, states: np.ndarray):
        self.clock.advance(self.per_position * states.shape[0])
        return self.inner(states)


def _position(moves: str = "4453") -> np.ndarray:
    return CONNECT4.play_moves(CONNECT4.parse_moves(moves))          # [1, S] int16


def _same(a, b) -> bool:
    return (a.action, a.value, a.top, a.pv) == (b.action, b.value, b.top, b.pv)


def test_without_a_time_budget_one_search_of_the_node_budget_as_analyze_states() -> None:
    state, evaluate = _position(), HashEvaluator(CONNECT4)
    timed = timed_analysis(CONNECT4, evaluate, state, search=SEARCH, seed=5)
    expected = analyze_states(CONNECT4, evaluate, state, search=SEARCH, seed=5)
    assert (timed.simulations, timed.slices, timed.budget) == (64, 1, None)
    assert _same(timed.analyses[0], expected[0]) and sum(s.visits for s in expected[0].top) <= 64
    capped = timed_analysis(CONNECT4, evaluate, state, search=SEARCH, max_simulations=20, seed=5, top_k=2,
                            pv_depth=1, root_solver=False)
    small = analyze_states(CONNECT4, evaluate, state, search=SearchConfig(num_simulations=20, solver=True), seed=5,
                           top_k=2, pv_depth=1, root_solver=False)
    assert capped.simulations == 20 and _same(capped.analyses[0], small[0])


def test_a_time_budget_sizes_the_search_from_the_calibration_slice() -> None:
    clock = FakeClock()
    evaluate = TimedEvaluator(CONNECT4, clock, per_position=0.001)
    timed = timed_analysis(CONNECT4, evaluate, _position(), search=SEARCH, max_simulations=100_000, seconds=1.0,
                           seed=2, clock=clock)
    assert timed.budget == 1.0 and timed.slices >= 2 and FIRST_SLICE < timed.simulations < 100_000
    assert timed.seconds == pytest.approx(clock.now - 100.0)
    assert timed.seconds <= 1.0                                  # every slice planned within the time left
    largest = analyze_states(CONNECT4, HashEvaluator(CONNECT4), _position(),
                             search=SearchConfig(num_simulations=timed.simulations, solver=True), seed=2)
    assert _same(timed.analyses[0], largest[0])                  # the answer is the largest slice's analysis


def test_the_node_budget_caps_a_timed_search_and_a_spent_budget_gets_one_simulation() -> None:
    clock = FakeClock()
    evaluate = TimedEvaluator(CONNECT4, clock, per_position=1e-6)
    roomy = timed_analysis(CONNECT4, evaluate, _position(), search=SEARCH, seconds=60.0, clock=clock)
    assert roomy.simulations == 64 and roomy.slices == 2          # 16 first, then the whole node budget
    spent = timed_analysis(CONNECT4, evaluate, _position(), search=SEARCH, seconds=0.0, clock=clock)
    assert (spent.simulations, spent.slices) == (1, 1)
    tiny = timed_analysis(CONNECT4, evaluate, _position(), search=SEARCH, max_simulations=4, seconds=60.0,
                          clock=clock)
    assert (tiny.simulations, tiny.slices) == (4, 1)              # the calibration slice is the node budget
    slow = TimedEvaluator(CONNECT4, clock, per_position=1.0)
    late = timed_analysis(CONNECT4, slow, _position(), search=SEARCH, seconds=2.0, clock=clock)
    assert (late.simulations, late.slices) == (FIRST_SLICE, 1)   # over time after the first slice: no more


def test_next_slice_extrapolates_the_measured_time() -> None:
    fits = int(16 * (10.0 * SLICE_SAFETY / 0.5) ** (1 / SEARCH_GROWTH))
    assert next_slice(16, 0.5, 10.0, 10_000) == fits
    assert next_slice(16, 0.5, 10.0, 100) == 100
    assert next_slice(16, 0.5, 0.0, 100) is None and next_slice(100, 0.1, 10.0, 100) is None
    assert next_slice(16, 0.5, 0.6, 10_000) is None               # no larger search fits


def test_a_batch_is_searched_together_and_bad_budgets_are_refused() -> None:
    states = np.concatenate([_position(), _position("44"), _position("")])
    timed = timed_analysis(CONNECT4, HashEvaluator(CONNECT4), states, search=SEARCH, seed=1)
    expected = analyze_states(CONNECT4, HashEvaluator(CONNECT4), states, search=SEARCH, seed=1)
    assert len(timed.analyses) == 3 and all(_same(a, b) for a, b in zip(timed.analyses, expected))
    with pytest.raises(AnalysisError, match="node budget"):
        timed_analysis(CONNECT4, HashEvaluator(CONNECT4), states, search=SEARCH, max_simulations=0)
    with pytest.raises(AnalysisError, match="time budget"):
        timed_analysis(CONNECT4, HashEvaluator(CONNECT4), states, search=SEARCH, seconds=float("nan"))
