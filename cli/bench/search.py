"""`zeroforge bench search`: the search's own cost (everything except the evaluator), with a cheap fake evaluator.

    zeroforge bench search --game connect4 --games 1024 --sims 32 --json
    zeroforge bench search --game gomoku-15 --games 1024 --sims 16

`benchmark_search` plays `moves` self-play-like moves (noise on,
temperature 1, tree reuse, only unfinished games searched) with an evaluator that looks logits up in a fixed
random table, times the searches and tree advances, subtracts the evaluator's time and returns simulations per
second and milliseconds per search step. `repeats` > 1 plays the same moves that many times (a fresh search
each time, the same seed) and reports the median run, with every run's figure: on a shared machine single runs
of the same command vary by tens of percent.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from shared.games import make_game
from shared.search.action_selection import choose_moves
from shared.search.mcts import BatchedMCTS
from shared.search.types import SearchConfig


class _TableEvaluator:
    """Logits and value looked up from a fixed random table by a hash of the board (a stand-in for a network
    whose output depends on the position); records the time spent inside it."""

    def __init__(self, num_cells: int, num_actions: int, rng: np.random.Generator,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.num_cells, self.clock = num_cells, clock
        self.weights = rng.integers(1, 1 << 20, size=num_cells).astype(np.int64)
        self.logits = rng.normal(size=(4099, num_actions)).astype(np.float32)
        self.seconds = 0.0

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = self.clock()
        rows = ((states[:, : self.num_cells].astype(np.int64) + 1) @ self.weights) % self.logits.shape[0]
        out = self.logits[rows], np.tanh(self.logits[rows, 0])
        self.seconds += self.clock() - start
        return out


def benchmark_search(game_name: str, games: int = 1024, sims: int = 32, moves: int = 8, leaves_per_step: int = 1,
                     solver: bool = True, seed: int = 0, warmup: bool = True, cpu_time: bool = False,
                     repeats: int = 1) -> dict:
    """Time the search alone on `games` concurrent self-play games for `moves` plies; returns a dict:

    game, games, sims, moves, leaves_per_step, solver; steps (search steps run: one evaluator call each, root
    evaluations not counted), simulations (tree simulations run), simulations_per_s and ms_per_step (search and
    tree-advance time with the evaluator's time subtracted), evaluator_ms_per_step, compile_s (first-call cost
    of the compiled kernels in this process, 0 when already compiled or cached), clock ("wall" or "cpu"),
    repeats and runs_simulations_per_s (each run's figure, in run order). With repeats > 1 the timed figures are
    the median run's (by simulations/s); every run plays the same moves.
    cpu_time=True times with this thread's CPU time instead of the wall clock (on a loaded machine it leaves out
    the time other processes held the core; cache contention still counts).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    clock = time.thread_time if cpu_time else time.perf_counter
    game = make_game(game_name)
    config = SearchConfig(num_simulations=sims, leaves_per_step=leaves_per_step, solver=solver)
    compile_s = 0.0
    if warmup:                                       # compile (or load the cached) kernels outside the timing
        start = time.perf_counter()
        warm_rng = np.random.default_rng(seed)
        warm = BatchedMCTS(game, _TableEvaluator(game.num_cells, game.num_actions, warm_rng), config, warm_rng)
        result = warm.search(game.initial_states(2), add_noise=True)
        warm.advance(choose_moves(result, 1.0, warm_rng))
        compile_s = time.perf_counter() - start
    runs = [_timed_run(game, config, games, moves, seed, clock) for _ in range(repeats)]

    def rate(run: tuple[int, int, float, float]) -> float:     # simulations per second of the search alone
        return run[0] * sims / (run[2] - run[3])

    searched, steps, seconds, evaluator_seconds = sorted(runs, key=rate)[len(runs) // 2]   # the median (upper if even)
    search_s = seconds - evaluator_seconds
    simulations = searched * sims
    return {"game": game_name, "games": games, "sims": sims, "moves": moves, "leaves_per_step": leaves_per_step,
            "solver": solver, "steps": steps, "simulations": simulations,
            "simulations_per_s": simulations / search_s, "ms_per_step": 1000.0 * search_s / steps,
            "evaluator_ms_per_step": 1000.0 * evaluator_seconds / steps, "compile_s": compile_s,
            "clock": "cpu" if cpu_time else "wall", "repeats": repeats,
            "runs_simulations_per_s": [rate(run) for run in runs]}


def _timed_run(game, config: SearchConfig, games: int, moves: int, seed: int,
               clock: Callable[[], float]) -> tuple[int, int, float, float]:
    """One timed run of `benchmark_search`: (trees searched, search steps, seconds of search and advance, seconds
    of them inside the table evaluator)."""
    sims, leaves_per_step = config.num_simulations, config.leaves_per_step
    rng = np.random.default_rng(seed)
    evaluator = _TableEvaluator(game.num_cells, game.num_actions, rng, clock)
    mcts = BatchedMCTS(game, evaluator, config, rng)
    states = game.initial_states(games)
    searched, steps, seconds = 0, 0, 0.0
    for _ in range(moves):
        idx = np.flatnonzero(~game.is_terminal(states))
        if idx.size == 0:
            break
        start = clock()
        result = mcts.search(states[idx], add_noise=True, slots=idx)
        seconds += clock() - start
        actions = choose_moves(result, 1.0, rng)
        start = clock()
        mcts.advance(actions, slots=idx)
        seconds += clock() - start
        states[idx] = game.step(states[idx], actions)
        searched += idx.size
        steps += -(-sims // leaves_per_step)
    return searched, steps, seconds, evaluator.seconds
