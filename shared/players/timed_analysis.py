"""The engines' one timed search: the analysis of positions within a node budget and, optionally, a time budget.

    timed = timed_analysis(game, evaluate, state[None], search=search, seconds=2.0, seed=7)
    timed.analyses[0].action, timed.simulations, timed.seconds

Without a time budget the positions get ONE analyze_states call of exactly the node budget (`max_simulations`,
default the search's own) with the given seed, so a fixed-simulation game plays the same moves as a single call.
With one, the search runs in slices, each a fresh analyze_states call with the same seed (so the root solvers
apply to each): a small calibration slice first (FIRST_SLICE simulations), then, while the time measured on the
last slice says a larger search fits before the deadline, the largest that does (at most the node budget). A
search of n simulations is taken to cost c * n ** SEARCH_GROWTH seconds, c measured on the last slice, and the
next slice plans to use SLICE_SAFETY of the time left. The answer is the analysis of the largest finished slice.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from shared.games.base import Game, GameError
from shared.players.analysis import (
    DEFAULT_PV_DEPTH, DEFAULT_TOP_K, AnalysisError, PositionAnalysis, analyze_states,
)
from shared.players.positions import position_from_moves
from shared.search.types import Evaluator, SearchConfig

#: Simulations of the first (calibration) slice of a timed search.
FIRST_SLICE = 16
#: Share of the time left after a slice that the next slice may plan to use.
SLICE_SAFETY = 0.7
#: A search of n simulations takes about c * n ** SEARCH_GROWTH seconds (measured on gomoku-15: 16 -> 400
#: simulations cost 73x the time, n ** 1.33; deeper trees and larger arrays make each simulation dearer).
SEARCH_GROWTH = 1.4


@dataclass(frozen=True)
class TimedAnalysis:
    """The analysis of the largest finished search: one PositionAnalysis per position, the simulations of that
    search, the seconds the whole timed search took (every slice), the time budget (None: no time limit) and
    the number of slices searched."""

    analyses: list[PositionAnalysis]
    simulations: int
    seconds: float
    budget: float | None
    slices: int


def next_slice(done: int, elapsed: float, room: float, max_simulations: int) -> int | None:
    """The simulations of the next slice after one of `done` simulations that took `elapsed` seconds, with `room`
    seconds left before the deadline: the largest search that fits in SLICE_SAFETY of the room (module docstring),
    at most `max_simulations`; None when no larger search than `done` fits or the node budget is reached."""
    if done >= max_simulations or room <= 0:
        return None
    fits = int(done * (room * SLICE_SAFETY / max(elapsed, 1e-6)) ** (1.0 / SEARCH_GROWTH))
    return min(max_simulations, fits) if fits > done else None


def warm_up(game: Game, evaluate: Evaluator, search: SearchConfig) -> None:
    """Search the start position once with 2 simulations (a fresh tree, nothing kept), so that the kernels'
    compilation and the network's first slow calls happen before a timed search starts its clock."""
    analyze_states(game, evaluate, game.initial_states(1), search=replace(search, num_simulations=2), top_k=1,
                   pv_depth=1)


def timed_analysis(game: Game, evaluate: Evaluator, states: np.ndarray, *, search: SearchConfig,
                   max_simulations: int | None = None, seconds: float | None = None, seed: int = 0,
                   clock: Callable[[], float] = time.monotonic, top_k: int = DEFAULT_TOP_K,
                   pv_depth: int = DEFAULT_PV_DEPTH, root_solver: bool = True) -> TimedAnalysis:
    """Analyse the non-terminal states [B, S] int16 (searched together) within `max_simulations` simulations
    (default search.num_simulations) and, when `seconds` is given, that many seconds by `clock` (module
    docstring); a budget of 0 seconds or less gets one simulation. top_k, pv_depth and root_solver are those of
    analyze_states. Returns a TimedAnalysis."""
    max_simulations = search.num_simulations if max_simulations is None else int(max_simulations)
    if max_simulations < 1:
        raise AnalysisError(f"the node budget ({max_simulations} simulations) must be >= 1")
    if seconds is not None and not np.isfinite(seconds):
        raise AnalysisError(f"the time budget ({seconds} seconds) must be a finite number")
    start = clock()
    if seconds is None:
        simulations = max_simulations
    else:
        simulations = 1 if seconds <= 0 else min(max_simulations, FIRST_SLICE)
    slices = 0
    while True:
        began = clock()
        analyses = analyze_states(game, evaluate, states, search=replace(search, num_simulations=simulations),
                                  top_k=top_k, seed=seed, pv_depth=pv_depth, root_solver=root_solver)
        slices += 1
        if seconds is None:
            break
        now = clock()
        larger = next_slice(simulations, now - began, start + seconds - now, max_simulations)
        if larger is None:
            break
        simulations = larger
    return TimedAnalysis(analyses, simulations, clock() - start, seconds, slices)


def analyze_move_strings(game: Game, evaluate: Evaluator, move_strings: list[str], *, search: SearchConfig,
                         top_k: int = DEFAULT_TOP_K, seed: int = 0, model: str | None = None,
                         seconds: float | None = None, clock: Callable[[], float] = time.monotonic
                         ) -> list[dict[str, Any]]:
    """One JSON-ready dict per move string, in order: the analysis, or {"moves", "error"} for a string that
    cannot be parsed or played or whose game is over. All valid positions are searched in one batch by
    timed_analysis: search.num_simulations simulations, or with `seconds`, the largest search
    of at most that many that fits in the time budget; then each analysis also says the "simulations" of that
    search and the "seconds" the whole timed search took."""
    answers: list[dict[str, Any] | None] = [None] * len(move_strings)
    valid_rows, valid_states = [], []
    for row, text in enumerate(move_strings):
        try:
            valid_states.append(position_from_moves(game, text))
            valid_rows.append(row)
        except GameError as exc:
            answers[row] = {"moves": text, "error": " ".join(str(exc).split())}
    if valid_states:
        timed = timed_analysis(game, evaluate, np.stack(valid_states), search=search, seconds=seconds, seed=seed,
                               clock=clock, top_k=top_k)
        for row, analysis in zip(valid_rows, timed.analyses):
            answers[row] = analysis.to_dict(move_strings[row], model)
            if seconds is not None:
                answers[row].update(simulations=timed.simulations, seconds=round(timed.seconds, 3))
    return answers
