"""Shared-network benchmark: N search processes with ONE network (services.inference) vs N processes each with
its own copy of the same network, playing the same games (same seeds, same weights).

    shared:   play_selfplay_shared(..., processes=N) as a worker on `device` runs it (services.inference's
              `server_parallelism`): the network runs in this process and the children search and send their leaf
              batches; on CPU each batch is evaluated on its own as it arrives, up to N passes at once on N threads
              of one torch thread each (parallel mode); on CUDA the batches are merged into one forward pass.
    other:    the same with the other mode (merged on CPU, parallel on CUDA), for comparison.
    separate: N spawned processes, each with its own TorchEvaluator of the same weights on `device` (one torch
              thread on CPU; one CUDA context each on a GPU), playing the same share of games with the same seed.

Reports moves/s of each (wall clock from start to the last record, process start-up included) and how many games
of each shared mode are identical move for move to the separate ones (batch merging may change float rounding in
the network, so games can diverge once a rounding flips a choice; the parallel mode's passes see the separate
workers' batches, and with a row-wise deterministic evaluator both modes are identical, see
tests/services/test_inference.py).
"""
from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import numpy as np

from services.inference import server_parallelism
from services.search_pool import merge_records, play_selfplay_shared, records_as_dict, split_games
from shared.games import make_game
from shared.network.evaluator import TorchEvaluator, configure_torch_threads
from shared.network.modelfile import create_model
from shared.network.spec import NetworkSpec, default_network_spec
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
from shared.search.selfplay import SelfPlayRecords


def _evaluator(game_name: str, spec: NetworkSpec, seed: int, precision: str, device: str) -> TorchEvaluator:
    game = make_game(game_name)
    return TorchEvaluator(create_model(game, spec, seed=seed), game, device=device, precision=precision)


def _separate_child(game_name: str, spec: NetworkSpec, weight_seed: int, precision: str, device: str, games: int,
                    config: SelfPlayConfig, seed: int, out: Any, index: int) -> None:
    """One process with its own network copy: play `games` games, put (index, records dict) on `out`."""
    configure_torch_threads(1)
    evaluator = _evaluator(game_name, spec, weight_seed, precision, device)
    records = play_selfplay_games(make_game(game_name), evaluator, games, config, np.random.default_rng(seed))
    out.put((index, records_as_dict(records)))


def _identical_games(a: SelfPlayRecords, b: SelfPlayRecords) -> int:
    same = 0
    for g in range(a.results.shape[0]):
        moves_a, moves_b = a.action[a.game_id == g], b.action[b.game_id == g]
        same += int(moves_a.shape == moves_b.shape and bool((moves_a == moves_b).all()))
    return same


def run_shared_benchmark(game_name: str, games: int, sims: int, moves: int, processes: int,
                         spec: NetworkSpec | None = None, precision: str = "fp32", seed: int = 0,
                         window_s: float = 0.002, device: str = "cpu") -> dict[str, Any]:
    """Time the three modes (see the module docstring); returns a JSON-compatible dict: shared_*, other_* and
    separate_* figures (positions, seconds, moves_per_s; identical_games for the two shared modes), other_mode
    ("merged" or "parallel"), device."""
    spec = spec or default_network_spec(game_name)
    configure_torch_threads(1)
    config = SelfPlayConfig(search=SearchConfig(num_simulations=sims), max_moves=moves)
    seeds = [seed + 100 + k for k in range(processes)]
    shares = split_games(games, processes)

    evaluator = _evaluator(game_name, spec, seed, precision, device)
    evaluator(make_game(game_name).initial_states(2))                      # warm-up outside the timing
    product = server_parallelism(device, processes)
    other = 1 if product > 1 else processes
    timed = {}
    for mode, parallel in (("shared", product), ("other", other)):
        start = time.perf_counter()
        records = play_selfplay_shared(game_name, evaluator, games, config, seeds, processes, window_s=window_s,
                                       parallel=parallel)
        timed[mode] = (records, time.perf_counter() - start)

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    start = time.perf_counter()
    children = [ctx.Process(target=_separate_child, args=(game_name, spec, seed, precision, device, share, config,
                                                          seeds[k], out, k), daemon=True)
                for k, share in enumerate(shares)]
    for child in children:
        child.start()
    try:
        parts = dict(out.get(timeout=3600) for _ in children)
    finally:
        for child in children:
            child.join(30)
            if child.is_alive():
                child.terminate()
                child.join(5)
    separate_s = time.perf_counter() - start
    separate = merge_records([SelfPlayRecords(**parts[k]) for k in range(len(shares))])
    report = {"game": game_name, "network": spec.to_dict(), "games": games, "sims": sims, "moves": moves,
              "processes": processes, "precision": precision, "device": device,
              "other_mode": "merged" if other == 1 else "parallel"}
    for mode, (records, seconds) in timed.items():
        report.update({f"{mode}_positions": int(records.states.shape[0]), f"{mode}_seconds": seconds,
                       f"{mode}_moves_per_s": records.states.shape[0] / seconds,
                       f"{mode}_identical_games": _identical_games(records, separate)})
    report.update({"separate_positions": int(separate.states.shape[0]), "separate_seconds": separate_s,
                   "separate_moves_per_s": separate.states.shape[0] / separate_s,
                   "identical_games": report["shared_identical_games"]})
    return report


def format_shared_report(r: dict[str, Any]) -> str:
    """One block of text for a run_shared_benchmark result."""
    net = r["network"]
    how = {"merged": "one merged pass at a time, as a GPU worker does",
           "parallel": "batches served in parallel, as a CPU worker does"}
    shared_mode = "parallel" if r["other_mode"] == "merged" else "merged"
    return "\n".join([
        f"{r['game']} {net['blocks']}x{net['channels']} {r['precision']} on {r['device']}, {r['games']} games x "
        f"{r['moves']} moves, {r['sims']} sims, {r['processes']} search processes",
        f"one shared network   {r['shared_moves_per_s']:,.2f} moves/s ({r['shared_positions']} moves in "
        f"{r['shared_seconds']:.2f} s; {how[shared_mode]})",
        f"  {r['other_mode'] + ' batches':<19}{r['other_moves_per_s']:,.2f} moves/s ({r['other_positions']} moves in "
        f"{r['other_seconds']:.2f} s; {how[r['other_mode']]})",
        f"separate networks    {r['separate_moves_per_s']:,.2f} moves/s ({r['separate_positions']} moves in "
        f"{r['separate_seconds']:.2f} s)",
        f"shared / separate    {r['shared_moves_per_s'] / r['separate_moves_per_s']:.2f}x; identical games "
        f"{r['shared_identical_games']} of {r['games']}",
        f"{r['other_mode'] + ' / separate':<21}{r['other_moves_per_s'] / r['separate_moves_per_s']:.2f}x; identical "
        f"games {r['other_identical_games']} of {r['games']}",
    ])


__all__ = ["format_shared_report", "run_shared_benchmark"]
