"""cli.gtp's genmove in process with a deterministic fake network and a fake clock: a fixed-simulation move is the
one analyze_states makes with the engine's seed, and time settings become the timed analysis's budget."""
from __future__ import annotations

import numpy as np
import pytest

from cli.gtp import GtpEngine
from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.players.analysis import analyze_states
from shared.players.gtp_time import GtpTimeControl
from shared.search.mcts import SearchConfig
from tests.search.helpers import HashEvaluator

GO5 = make_game("go-5x5")


class TickingEvaluator:
    """HashEvaluator whose every call moves the fake clock on by 1 ms per position."""

    def __init__(self) -> None:
        self.inner, self.now = HashEvaluator(GO5), 0.0

    def clock(self) -> float:
        return self.now

    def __call__(self, states: np.ndarray):
        self.now += 0.001 * states.shape[0]
        return self.inner(states)


def test_a_fixed_simulation_move_is_analyze_states_with_the_engine_seed() -> None:
    evaluate = HashEvaluator(GO5)
    search = SearchConfig(num_simulations=24, solver=True)
    engine = GtpEngine(GO5, evaluate, search=search, seed=9)
    assert engine.handle("play b C3") == "= \n\n"
    state = engine.state.copy()
    state[GO5.num_cells + F_PLAYER] = -1                             # white to move, as genmove makes it
    expected = analyze_states(GO5, evaluate, state[None], search=search, seed=9 + 2)[0]
    assert engine.handle("genmove w") == f"= {GO5.action_to_str(expected.action)}\n\n"
    assert engine.last_search.simulations == 24 and engine.last_search.budget is None


def test_time_settings_become_the_budget_of_the_timed_search() -> None:
    evaluate = TickingEvaluator()
    engine = GtpEngine(GO5, evaluate, search=SearchConfig(num_simulations=100_000, solver=True), clock=evaluate.clock)
    assert engine.handle("time_settings 30 0 0") == "= \n\n"
    expected = GtpTimeControl(main_time=30).budget(1, GO5.num_cells // 2)
    before = evaluate.now
    answer = engine.handle("genmove b")
    assert answer.startswith("= ") and answer != "= resign\n\n"
    searched = engine.last_search
    assert searched.budget == pytest.approx(expected) and 16 < searched.simulations < 100_000
    assert evaluate.now - before <= expected                         # the search kept within its budget
    assert engine.time.left[1][0] == pytest.approx(30 - (evaluate.now - before))   # and was charged for it
