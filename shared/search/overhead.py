"""Measure the search's own cost per step (everything except the evaluator), with a cheap fake evaluator.

    python -m shared.search.overhead connect4 --batch 128 --sims 32
    python -m shared.search.overhead gomoku-15 --batch 64 --sims 16

Plays `moves` self-play-like moves (noise on, temperature 1, tree reuse, only unfinished games searched) with
an evaluator that looks logits up in a fixed random table, and reports the wall time per search step with the
evaluator's time subtracted.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from shared.games import make_game
from shared.search.mcts import BatchedMCTS, SearchConfig
from shared.search.policy import select_actions


@dataclass
class OverheadReport:
    """Timings of one measurement (milliseconds)."""

    game: str
    batch: int
    simulations: int
    leaves_per_step: int
    steps: int
    ms_per_step_excluding_evaluator: float
    ms_per_step_evaluator: float
    ms_per_move: float

    def line(self) -> str:
        return (f"{self.game} B={self.batch} sims={self.simulations} leaves/step={self.leaves_per_step}: "
                f"search overhead {self.ms_per_step_excluding_evaluator:.2f} ms/step (fake evaluator "
                f"{self.ms_per_step_evaluator:.2f} ms/step), {self.ms_per_move:.1f} ms/move, {self.steps} steps")


class _TableEvaluator:
    """Logits and value looked up from a fixed random table by a hash of the board (a stand-in for a network
    whose output depends on the position); records the time spent inside it."""

    def __init__(self, num_cells: int, num_actions: int, rng: np.random.Generator) -> None:
        self.num_cells = num_cells
        self.weights = rng.integers(1, 1 << 20, size=num_cells).astype(np.int64)
        self.logits = rng.normal(size=(4099, num_actions)).astype(np.float32)
        self.seconds = 0.0

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        rows = ((states[:, : self.num_cells].astype(np.int64) + 1) @ self.weights) % self.logits.shape[0]
        out = self.logits[rows], np.tanh(self.logits[rows, 0])
        self.seconds += time.perf_counter() - start
        return out


def measure_overhead(game_name: str, batch: int, simulations: int, leaves_per_step: int = 1, moves: int = 12,
                     seed: int = 0) -> OverheadReport:
    """Run `moves` batched search moves and time them; returns an OverheadReport."""
    game = make_game(game_name)
    rng = np.random.default_rng(seed)
    evaluator = _TableEvaluator(game.num_cells, game.num_actions, rng)
    config = SearchConfig(num_simulations=simulations, leaves_per_step=leaves_per_step)
    mcts = BatchedMCTS(game, evaluator, config, rng)
    states = game.initial_states(batch)
    start = time.perf_counter()
    played = 0
    for _ in range(moves):
        idx = np.flatnonzero(~game.is_terminal(states))
        if idx.size == 0:
            break
        result = mcts.search(states[idx], add_noise=True, slots=idx)
        actions = select_actions(result.visits, 1.0, rng)
        mcts.advance(actions, slots=idx)
        states[idx] = game.step(states[idx], actions)
        played += 1
    elapsed = time.perf_counter() - start
    steps = mcts.evaluator_calls
    return OverheadReport(game_name, batch, simulations, leaves_per_step, steps,
                          1000.0 * (elapsed - evaluator.seconds) / steps, 1000.0 * evaluator.seconds / steps,
                          1000.0 * elapsed / max(played, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--sims", type=int, default=32)
    parser.add_argument("--leaves-per-step", type=int, default=1)
    parser.add_argument("--moves", type=int, default=12)
    args = parser.parse_args()
    print(measure_overhead(args.game, args.batch, args.sims, args.leaves_per_step, args.moves).line())


if __name__ == "__main__":
    main()
