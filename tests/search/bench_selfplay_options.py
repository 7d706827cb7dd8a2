"""Cost of the self-play options: plies and recorded positions per second with an untrained default-size network.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python tests/search/bench_selfplay_options.py \
        --game gomoku-8x8-5 --games 32 --sims 100 --moves 12 --repeats 2

Each variant plays --games games for at most --moves plies (one batch, one torch thread); the variants alternate
--repeats times so that a busy machine slows them alike. Not a test (pytest collects test_*.py only).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from shared.games import make_game
from shared.network.evaluator import TorchEvaluator
from shared.network.modelfile import create_model
from shared.network.spec import default_network_spec
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games

VARIANTS = {
    "default (p=1, no resign)": {},
    "playout caps p=0.25 (fast = sims/4)": {"full_search_fraction": 0.25},
    "resign at -0.9 (10% no-resign)": {"resign_threshold": -0.9},
}


def main() -> None:
    """Print one line per variant and run (plies/s, recorded positions/s), then a JSON summary of the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="gomoku-8x8-5")
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--sims", type=int, default=100)
    parser.add_argument("--moves", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    game = make_game(args.game)
    evaluator = TorchEvaluator(create_model(game, default_network_spec(game.name), seed=0), game, device="cpu")
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for repeat in range(args.repeats):
        for name, options in VARIANTS.items():
            config = SelfPlayConfig(search=SearchConfig(num_simulations=args.sims), max_moves=args.moves, **options)
            start = time.perf_counter()
            records = play_selfplay_games(game, evaluator, args.games, config, np.random.default_rng(repeat))
            seconds = time.perf_counter() - start
            plies, rows = int(records.plies.sum()), int(records.states.shape[0])
            figures[name].append((plies / seconds, rows / seconds))
            print(f"{name:<38} run {repeat}: {plies} plies, {rows} recorded in {seconds:.1f} s: "
                  f"{plies / seconds:.1f} plies/s, {rows / seconds:.1f} recorded positions/s", flush=True)
    summary = {name: {"plies_per_s": round(float(np.median([f[0] for f in runs])), 1),
                      "recorded_per_s": round(float(np.median([f[1] for f in runs])), 1)}
               for name, runs in figures.items()}
    print(json.dumps({"game": args.game, "games": args.games, "sims": args.sims, "moves": args.moves,
                      "variants": summary}))


if __name__ == "__main__":
    main()
