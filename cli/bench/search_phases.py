"""`zeroforge bench search --phases`: where one search step's time goes (this thread's CPU time per phase).

`phase_times` runs `benchmark_search` (CPU-time clock) with timers wrapped around the search's phase functions
and the game's rule calls, then puts them back. Phases nest (a row includes the indented rows below it); the
wrappers cost about a microsecond per call, so the figures are for comparing phases, not exact totals.
"""
from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterator

import cli.bench.search as bench
import shared.search.mcts as mcts_module
from shared.search.tree import TreeStorage

#: (key, label) in print order; the indentation of the label shows the nesting.
PHASES = (("search", "search"), ("step", " search steps"), ("select", "  select (compiled descent)"),
          ("leaves", "  leaf positions"), ("game_step", "   game.step / step_stored"),
          ("evaluate_expand", "  evaluate + expand"), ("gather", "   tree.states_of (gather)"),
          ("evaluate", "   evaluator call + checks"), ("table", "    table evaluator itself"),
          ("legal", "   game.legal_mask"), ("outcomes", "   game.move_outcomes (solver)"),
          ("expand", "   tree.expand (softmax + kernel)"), ("backup", "  backup"),
          ("roots", " prepare roots"), ("noise", " root noise"), ("result", " result"), ("advance", "advance"))

_SEARCH_METHODS = {"search": "search", "_run_step": "step", "_create_leaves": "leaves",
                   "_evaluate_and_expand": "evaluate_expand", "_evaluate": "evaluate", "_prepare_roots": "roots",
                   "_set_root_priors": "noise", "_result": "result", "advance": "advance"}
_GAME_METHODS = {"step": "game_step", "step_stored": "game_step", "legal_mask": "legal",
                 "move_outcomes": "outcomes"}


def _timed(function: Callable, key: str, totals: Counter) -> Callable:
    def timed(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[key] += time.thread_time() - start
    return timed


@contextmanager
def _patched(targets: list[tuple[object, str, str]], totals: Counter) -> Iterator[None]:
    """Wrap attribute `name` of each (owner, name, key) in a timer adding to totals[key]; restore on exit."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]
    try:
        for (owner, name, key), (_, _, original) in zip(targets, saved):
            setattr(owner, name, _timed(original, key, totals))
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def phase_times(game_name: str, games: int = 1024, sims: int = 32, moves: int = 8, solver: bool = True,
                seed: int = 0) -> dict[str, float]:
    """CPU microseconds per search step spent in each phase of PHASES (keys), measured over `benchmark_search`
    with the same arguments (compiled kernels warmed up first); also "steps", the number of search steps."""
    totals: Counter = Counter()
    make_game = bench.make_game

    def timed_game(name: str):
        game = make_game(name)
        for method, key in _GAME_METHODS.items():
            if hasattr(game, method):                                  # instance attributes: this game only
                setattr(game, method, _timed(getattr(game, method), key, totals))
        return game

    targets = [(mcts_module.BatchedMCTS, name, key) for name, key in _SEARCH_METHODS.items()]
    targets += [(mcts_module, "select_leaves", "select"), (mcts_module, "backup_step", "backup"),
                (TreeStorage, "states_of", "gather"), (TreeStorage, "expand", "expand"),
                (bench._TableEvaluator, "__call__", "table"), (bench, "make_game", "make_game")]
    bench.benchmark_search(game_name, games=min(games, 64), sims=min(sims, 4), moves=2, solver=solver)
    with _patched(targets, totals):
        bench.make_game = timed_game                                   # replaces the timed wrapper until restore
        report = bench.benchmark_search(game_name, games=games, sims=sims, moves=moves, solver=solver, seed=seed,
                                        warmup=False, cpu_time=True)
    steps = report["steps"]
    out = {key: 1e6 * totals[key] / steps for key, _ in PHASES}
    out["steps"] = steps
    return out


def format_phases(times: dict[str, float]) -> str:
    """The phase table of `phase_times` as text lines (phases that took no time left out)."""
    lines = [f"CPU microseconds per search step ({times['steps']} steps):"]
    lines += [f"  {label:40s} {times[key]:9.1f}" for key, label in PHASES if times[key] > 0]
    return "\n".join(lines)
