"""Self-play speed benchmark: network throughput vs batched search vs one-game-at-a-time search.

One run measures, with an untrained network of the game's default size (random weights are fine
for speed) and, on CPU, one torch thread:

1. forward:    network positions/s at the batch size the search uses (games * leaves_per_step),
               on real encoded positions, after warm-up (encoding excluded).
2. batched:    `play_selfplay_games` over `games` games for `moves` moves at `sims` simulations:
               simulations/s = games * sims * moves / time (actual positions played are used if
               games end early), moves/s = positions played / time, and
               ratio = simulations/s / forward positions/s (1.0 = the search costs nothing beyond
               the network; the search adds selection, expansion, backup, encoding).
               overlap (off | on | both): SelfPlayConfig.overlap for this run; `both` plays the batched run
               without and then with overlap (same seed) and reports both rates side by side.
3. sequential: the same search on ONE game with one leaf per network call (games=1,
               leaves_per_step=1) for min(moves, 16) moves (the same opening phase as (2), so
               the positions are comparable); speedup = moves/s of (2) / moves/s of (3).

The search code is the real one from shared.search; this module only drives and times it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import torch

from shared.games import make_game
from shared.games.base import Game
from shared.network.evaluator import TorchEvaluator, configure_torch_threads
from shared.network.modelfile import create_model
from shared.network.resnet import PolicyValueNet
from shared.network.spec import NetworkError, NetworkSpec, default_network_spec
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games


@dataclass(frozen=True)
class BenchSettings:
    """What to measure (see the module docstring)."""

    game: str
    games: int = 64
    sims: int = 32
    moves: int = 8
    device: str = "cpu"
    spec: NetworkSpec | None = None          # None -> default_network_spec(game)
    leaves_per_step: int = 1
    sequential_moves: int | None = None      # None -> min(moves, 16)
    seed: int = 0
    torch_threads: int = 1                   # CPU only; CUDA runs leave torch's setting alone
    forward_seconds: float = 1.5             # minimum timed duration of the forward measurement
    use_bf16: bool | None = None             # None -> TorchEvaluator default (bf16 on CUDA, fp32 on CPU)
    precision: str | None = None             # auto | fp32 | bf16; overrides use_bf16 (see shared.network.precision)
    cuda_graphs: bool = False
    compile_model: bool = False
    overlap: str = "off"                     # off | on | both (both: two batched runs, side by side)

    def validate(self) -> None:
        for name in ("games", "sims", "moves", "leaves_per_step", "torch_threads"):
            if getattr(self, name) < 1:
                raise NetworkError(f"bench: --{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.sequential_moves is not None and self.sequential_moves < 1:
            raise NetworkError(f"bench: sequential moves must be >= 1, got {self.sequential_moves}")
        if self.overlap not in ("off", "on", "both"):
            raise NetworkError(f"bench: overlap {self.overlap!r} is not one of off, on, both")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise NetworkError(f"bench: device {self.device!r} is not supported; use cpu or cuda")


class CountingEvaluator:
    """Wraps an Evaluator, counting calls, evaluated positions and seconds spent inside it."""

    def __init__(self, evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]) -> None:
        self.evaluate = evaluate
        self.calls = 0
        self.positions = 0
        self.seconds = 0.0

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """states [M, S] int16 -> (logits [M, A] float32, values [M] float32), timed."""
        start = time.perf_counter()
        out = self.evaluate(states)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.positions += states.shape[0]
        return out


def sample_positions(game: Game, count: int, seed: int, max_plies: int = 12) -> np.ndarray:
    """`count` non-terminal positions after 0..max_plies random legal moves: [count, S] int16."""
    rng = np.random.default_rng(seed)
    states = game.initial_states(count)
    target_plies = rng.integers(0, max_plies + 1, size=count)
    for ply in range(max_plies):
        live = np.flatnonzero((target_plies > ply) & ~game.is_terminal(states))
        if live.size == 0:
            break
        mask = game.legal_mask(states[live])                             # [L, A] bool
        scores = np.where(mask, rng.random(mask.shape), -1.0)           # random legal action per row
        stepped = game.step(states[live], scores.argmax(axis=1))
        keep = ~game.is_terminal(stepped)                                # stop one move before the end
        states[live[keep]] = stepped[keep]
    return states


def measure_forward(evaluator: TorchEvaluator, planes: np.ndarray, min_seconds: float, windows: int = 3) -> list[float]:
    """Network-only positions/s on encoded planes [M, C, H, W] float32, one rate per timed window.

    2 warm-up calls, then `windows` windows of >= min_seconds / windows each (at least 2 calls each).
    """
    for _ in range(2):
        evaluator.forward_planes(planes)
    rates = []
    for _ in range(windows):
        calls, start = 0, time.perf_counter()
        while True:
            evaluator.forward_planes(planes)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds / windows and calls >= 2:
                rates.append(calls * planes.shape[0] / elapsed)
                break
    return rates


def _selfplay_config(settings: BenchSettings, leaves_per_step: int, moves: int,
                     overlap: bool = False) -> SelfPlayConfig:
    search = SearchConfig(num_simulations=settings.sims, leaves_per_step=leaves_per_step)
    return SelfPlayConfig(search=search, max_moves=moves, overlap=overlap)


def run_selfplay(game: Game, evaluate: Callable, games: int, config: SelfPlayConfig, seed: int) -> tuple[int, float]:
    """Play `games` self-play games under `config`; returns (positions played, seconds)."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    records = play_selfplay_games(game, evaluate, games, config, rng)
    return int(records.states.shape[0]), time.perf_counter() - start


def _build(settings: BenchSettings) -> tuple[Game, NetworkSpec, PolicyValueNet, TorchEvaluator]:
    """The game, an untrained default-size network and its evaluator (one torch thread on CPU)."""
    game = make_game(settings.game)
    spec = settings.spec or default_network_spec(game.name)
    if settings.device == "cpu":
        configure_torch_threads(settings.torch_threads)
    model = create_model(game, spec, seed=settings.seed)
    evaluator = TorchEvaluator(model, game, device=settings.device, use_bf16=settings.use_bf16,
                               precision=settings.precision,
                               use_cuda_graphs=settings.cuda_graphs, compile_model=settings.compile_model)
    return game, spec, model, evaluator


def run_benchmark(settings: BenchSettings, log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Run all three measurements; returns a flat dict of settings and figures (JSON-compatible)."""
    settings.validate()
    game, spec, model, evaluator = _build(settings)
    batch = settings.games * settings.leaves_per_step
    positions = sample_positions(game, batch, settings.seed)               # [batch, S] int16
    planes = evaluator.encode(positions)                                   # [batch, C, H, W] float32
    evaluator.bf16_at(batch)                                               # auto: decide before timing
    log(f"forward pass at batch {batch} (and at batch 1) ...")
    forward_rates = measure_forward(evaluator, planes, settings.forward_seconds / 2)
    forward_rate_1 = float(np.median(measure_forward(evaluator, planes[:1], settings.forward_seconds / 4)))

    log(f"batched self-play: {settings.games} games x {settings.moves} moves at {settings.sims} simulations ...")
    # Warm-up: one move of every game, so that first-call costs (kernel loading, oneDNN primitives) and the first
    # touch of the search trees' memory (kept by the process afterwards, as in a worker that has played a job
    # before) stay out of the timing.
    run_selfplay(game, evaluator, settings.games, _selfplay_config(settings, settings.leaves_per_step, 1),
                 settings.seed + 1)
    counting = CountingEvaluator(evaluator)
    batched_config = _selfplay_config(settings, settings.leaves_per_step, settings.moves, settings.overlap == "on")
    played, batched_seconds = run_selfplay(game, counting, settings.games, batched_config, settings.seed + 2)
    overlap_figures: dict[str, Any] = {}
    if settings.overlap == "both":
        log("batched self-play again with overlap on ...")
        run_selfplay(game, evaluator, settings.games,
                     _selfplay_config(settings, settings.leaves_per_step, 1, True), settings.seed + 1)
        overlap_counting = CountingEvaluator(evaluator)
        on_played, on_seconds = run_selfplay(
            game, overlap_counting, settings.games,
            _selfplay_config(settings, settings.leaves_per_step, settings.moves, True), settings.seed + 2)
        overlap_figures = {"overlap_on": {
            "positions_played": on_played, "selfplay_seconds": on_seconds,
            "simulations_per_s": on_played * settings.sims / on_seconds, "moves_per_s": on_played / on_seconds,
            "network_calls": overlap_counting.calls,
            "mean_network_batch": overlap_counting.positions / max(overlap_counting.calls, 1)}}

    sequential_moves = settings.sequential_moves or min(settings.moves, 16)
    log(f"sequential search: 1 game x {sequential_moves} moves, one leaf per network call ...")
    sequential_played, sequential_seconds = run_selfplay(
        game, evaluator, 1, _selfplay_config(settings, 1, sequential_moves), settings.seed + 3)

    # Forward windows before AND after self-play; the median is robust to other processes taking the core.
    forward_rates += measure_forward(evaluator, planes, settings.forward_seconds / 2)
    figures = {
        "forward_batch": batch, "forward_positions_per_s": float(np.median(forward_rates)),
        "forward_batch1_positions_per_s": forward_rate_1,
        "positions_played": played, "selfplay_seconds": batched_seconds,
        "simulations_per_s": played * settings.sims / batched_seconds, "moves_per_s": played / batched_seconds,
        "network_calls": counting.calls, "evaluated_positions": counting.positions,
        "mean_network_batch": counting.positions / max(counting.calls, 1),
        "network_time_fraction": counting.seconds / batched_seconds,
        "sequential_moves": sequential_played, "sequential_seconds": sequential_seconds,
        "sequential_moves_per_s": sequential_played / sequential_seconds,
        **overlap_figures,
    }
    if overlap_figures:
        overlap_figures["overlap_on"]["ratio"] = (overlap_figures["overlap_on"]["simulations_per_s"]
                                                  / figures["forward_positions_per_s"])
    return _with_settings_and_ratios(settings, game, spec, model, evaluator, figures)


def _with_settings_and_ratios(settings: BenchSettings, game: Game, spec: NetworkSpec, model: PolicyValueNet,
                              evaluator: TorchEvaluator, figures: dict[str, Any]) -> dict[str, Any]:
    """Add the settings and the derived ratios to the measured figures."""
    return {
        "game": game.name, "games": settings.games, "sims": settings.sims, "moves": settings.moves,
        "leaves_per_step": settings.leaves_per_step, "device": settings.device,
        "precision": "bf16" if evaluator.use_bf16 else "fp32", "cuda_graphs": settings.cuda_graphs,
        "compile": settings.compile_model, "overlap": settings.overlap,
        "network": {**spec.to_dict(), "parameters": model.num_parameters()},
        "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__,
        **figures,
        # 1.0 = the search costs nothing beyond the network forward passes at the same batch size.
        "ratio": figures["simulations_per_s"] / figures["forward_positions_per_s"],
        "speedup": figures["moves_per_s"] / figures["sequential_moves_per_s"],
        # What batching alone can buy: network throughput at the search's batch vs at batch 1.
        "network_batching_gain": figures["forward_positions_per_s"] / figures["forward_batch1_positions_per_s"],
    }


def format_report(result: dict[str, Any]) -> str:
    """Human-readable table of a `run_benchmark` result."""
    net = result["network"]
    rows = [
        ("game / device", f"{result['game']} / {result['device']} ({result['torch_threads']} torch thread(s), "
                          f"{result['precision']})"),
        ("network", f"{net['blocks']}x{net['channels']} (value hidden {net['value_hidden']}"
                    f"{', global pooling' if net.get('global_pool') else ''}"
                    f"{', line planes' if net.get('line_planes') else ''}), {net['parameters']:,} parameters"),
        ("search", f"{result['games']} games x {result['moves']} moves, {result['sims']} sims, "
                   f"{result['leaves_per_step']} leaves per tree per network call"),
        ("forward (batch %d)" % result["forward_batch"], f"{result['forward_positions_per_s']:,.0f} positions/s"),
        ("batched self-play", f"{result['simulations_per_s']:,.0f} simulations/s, {result['moves_per_s']:,.2f} moves/s "
                              f"({result['positions_played']} moves in {result['selfplay_seconds']:.2f} s)"),
        ("  network calls", f"{result['network_calls']} calls, mean batch {result['mean_network_batch']:.1f}, "
                            f"{100 * result['network_time_fraction']:.0f}% of self-play time in the evaluator"),
        ("forward (batch 1)", f"{result['forward_batch1_positions_per_s']:,.0f} positions/s "
                              f"(batching gain {result['network_batching_gain']:.1f}x)"),
        ("ratio sims/forward", f"{result['ratio']:.2f}"),
        ("sequential (1 game, 1 leaf)", f"{result['sequential_moves_per_s']:,.2f} moves/s "
                                        f"({result['sequential_moves']} moves in {result['sequential_seconds']:.2f} s)"),
        ("speedup batched/sequential", f"{result['speedup']:.1f}x"),
    ]
    if "overlap_on" in result:
        on = result["overlap_on"]
        rows[4] = ("batched self-play (overlap off)", rows[4][1])
        rows[8:8] = [
            ("batched self-play (overlap on)",
             f"{on['simulations_per_s']:,.0f} simulations/s, {on['moves_per_s']:,.2f} moves/s "
             f"({on['positions_played']} moves in {on['selfplay_seconds']:.2f} s, {on['network_calls']} calls, "
             f"mean batch {on['mean_network_batch']:.1f})"),
            ("ratio sims/forward (overlap on)", f"{on['ratio']:.2f}"),
        ]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


def with_spec(settings: BenchSettings, blocks: int | None, channels: int | None,
              global_pool: bool = False, line_planes: bool = False) -> BenchSettings:
    """Apply --blocks/--channels/--global-pool/--line-planes on top of the game's default spec."""
    if blocks is None and channels is None and not global_pool and not line_planes:
        return settings
    base = settings.spec or default_network_spec(settings.game)
    return replace(settings, spec=NetworkSpec(blocks if blocks is not None else base.blocks,
                                              channels if channels is not None else base.channels,
                                              base.value_hidden, global_pool=global_pool or base.global_pool,
                                              line_planes=line_planes or base.line_planes))


__all__ = ["BenchSettings", "CountingEvaluator", "format_report", "measure_forward", "run_benchmark",
           "sample_positions", "with_spec"]
