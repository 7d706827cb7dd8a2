"""The oracle figures of a network: how often its moves keep the exact outcome of labelled positions.

On an OracleSet (shared.games.oracle_set) the network chooses a move in every position twice: by its raw policy
(the argmax of its logits over the legal moves, all positions in one network call) and by a small search as the
match players search (no root noise, MCTS-solver on, the game's root solver off so the figure is the network's
and the search's, all positions in one batched search: shared.players.analysis.analyze_states). Each choice is
scored as the outcome-keeping rate (the move keeps the position's exact outcome) and, where the set knows exact
scores, the optimal-move rate; each with its 95% Wilson interval, next to the rate of a uniformly random legal
move on the same positions.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from shared.games.base import Game
from shared.games.oracle_set import OracleSet
from shared.players.analysis import analyze_states
from shared.players.tactics_scores import Rate, rate
from shared.search.types import Evaluator, SearchConfig


@dataclass(frozen=True)
class OracleFigures:
    """One network measured on one oracle set: rates of its raw policy and of its search (simulations each),
    the optimal-move rates (None when the set knows only outcomes), a random legal move's expected rate, and the
    measurement's wall seconds."""

    positions: int
    simulations: int
    raw: Rate
    search: Rate
    raw_optimal: Rate | None
    search_optimal: Rate | None
    random_move: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (Rates as dicts)."""
        return asdict(self)


def raw_policy_moves(game: Game, evaluate: Evaluator, states: np.ndarray) -> np.ndarray:
    """The raw policy's move in each state: states [N, S] int16 -> [N] int64, the legal action with the highest
    logit (one network call; ties to the lower action)."""
    logits, _ = evaluate(states)                                              # [N, A] float32
    return np.where(game.legal_mask(states), logits, -np.inf).argmax(axis=1).astype(np.int64)


def search_moves(game: Game, evaluate: Evaluator, states: np.ndarray, search: SearchConfig,
                 seed: int = 0) -> np.ndarray:
    """The search's move in each state (analyze_states: one batched search, no noise, MCTS-solver on, no root
    solver): states [N, S] int16 -> [N] int64."""
    analyses = analyze_states(game, evaluate, states, search=replace(search, solver=True), top_k=1, seed=seed,
                              pv_depth=1, root_solver=False)
    return np.array([a.action for a in analyses], np.int64)


def hit_rate(good: np.ndarray, chosen: np.ndarray) -> Rate:
    """How many chosen moves are good: good [N, A] bool, chosen [N] int64 -> Rate (95% Wilson interval)."""
    hits = good[np.arange(good.shape[0]), chosen]
    return rate(int(hits.sum()), int(hits.size))


def random_move_rate(good: np.ndarray, legal: np.ndarray) -> float:
    """Expected rate of a uniformly random legal move: good, legal [N, A] bool -> the mean share of good legal
    moves (NaN for no positions)."""
    share = (good & legal).sum(axis=1) / np.maximum(legal.sum(axis=1), 1)
    return float(share.mean()) if share.size else float("nan")


def oracle_hits(game: Game, evaluate: Evaluator, oracle: OracleSet, search: SearchConfig,
                seed: int = 0) -> dict[str, np.ndarray]:
    """Position by position, whether `evaluate`'s raw policy and its search (`search`) keep each position's exact
    outcome: {"raw", "search"} -> [N] bool, plus {"raw_optimal", "search_optimal"} when the set knows exact scores."""
    rows = np.arange(len(oracle))
    moves = {"raw": raw_policy_moves(game, evaluate, oracle.states),
             "search": search_moves(game, evaluate, oracle.states, search, seed)}
    hits = {name: oracle.keeps[rows, chosen] for name, chosen in moves.items()}
    if oracle.optimal is not None:
        hits.update({f"{name}_optimal": oracle.optimal[rows, chosen] for name, chosen in moves.items()})
    return hits


def figures_of_hits(game: Game, oracle: OracleSet, hits: dict[str, np.ndarray], simulations: int,
                    seconds: float) -> OracleFigures:
    """OracleFigures from oracle_hits' {"raw", "search"[, "raw_optimal", "search_optimal"]} -> [N] bool on
    `oracle`, measured with `simulations` in `seconds`."""
    def figure(name: str) -> Rate | None:
        return rate(int(hits[name].sum()), int(hits[name].size)) if name in hits else None

    return OracleFigures(
        positions=len(oracle), simulations=simulations, raw=figure("raw"), search=figure("search"),
        raw_optimal=figure("raw_optimal"), search_optimal=figure("search_optimal"),
        random_move=random_move_rate(oracle.keeps, game.legal_mask(oracle.states)), seconds=round(seconds, 3))


def measure_oracle(game: Game, evaluate: Evaluator, oracle: OracleSet, search: SearchConfig,
                   seed: int = 0) -> OracleFigures:
    """Score `evaluate`'s raw policy and its search (`search`, e.g. the match search at 16 simulations) on
    `oracle` (module docstring)."""
    started = time.perf_counter()
    hits = oracle_hits(game, evaluate, oracle, search, seed)
    return figures_of_hits(game, oracle, hits, search.num_simulations, time.perf_counter() - started)


def hits_by_kind(oracle: OracleSet, hits: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """oracle_hits' {"raw", "search", ...} -> [N] bool split by the set's position kinds: one dict per kind with
    positions, "kind" (its name) and per figure the Rate as a dict (95% Wilson interval); [] for a set without
    kinds. Kinds with no position are left out."""
    if oracle.kinds is None:
        return []
    rows = []
    for index, name in enumerate(oracle.kind_names):
        members = oracle.kinds == index
        if members.any():
            rows.append({"kind": name, "positions": int(members.sum()),
                         **{figure: asdict(rate(int(hit[members].sum()), int(members.sum())))
                            for figure, hit in hits.items()}})
    return rows


def compare_on_oracle(game: Game, models: list[tuple[str, Evaluator]], oracle: OracleSet, search: SearchConfig,
                      seed: int = 0, resamples: int = 4000) -> dict[str, Any]:
    """Several networks scored on the same oracle set, and each after the first compared with the first position
    by position. models: (label, evaluator) pairs, at least one. Returns a JSON-ready dict: "positions",
    "simulations", "source", "models" (per model its label and OracleFigures.to_dict(), with 95% Wilson
    intervals, and "kinds": hits_by_kind's rows, empty for a set without kinds) and "differences" (per model after
    the first: its label, the first's, and per figure the paired difference of hit rates (mean, low, high) with a
    95% bootstrap interval over positions, shared.stats.bootstrap_mean)."""
    from shared.stats import bootstrap_mean

    if not models:
        raise ValueError("compare_on_oracle needs at least one model")
    scored = []
    for label, evaluate in models:
        started = time.perf_counter()
        hits = oracle_hits(game, evaluate, oracle, search, seed)
        figures = figures_of_hits(game, oracle, hits, search.num_simulations, time.perf_counter() - started)
        scored.append((label, hits, figures))
    base_label, base_hits, _ = scored[0]
    differences = [{"model": label, "baseline": base_label,
                    **{name: list(bootstrap_mean(hits[name].astype(np.float64) - base_hits[name],
                                                 resamples=resamples))
                       for name in hits}}
                   for label, hits, _ in scored[1:]]
    return {"game": game.name, "positions": len(oracle), "simulations": search.num_simulations,
            "source": oracle.source,
            "models": [{"model": label, **figures.to_dict(), "kinds": hits_by_kind(oracle, hits)}
                       for label, hits, figures in scored],
            "differences": differences}


def oracle_line_of(figures: dict[str, Any]) -> str:
    """'raw policy keeps 83.1% [80.2, 85.7] of 600 positions, 16 sims 87.0% [84.1, 89.4] (random move 41.2%)'
    from OracleFigures.to_dict(), with the optimal-move rates after it when the set has them."""
    def pct(r: dict[str, Any]) -> str:
        return f"{100 * r['rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"

    sims = figures["simulations"]
    text = (f"raw policy keeps {pct(figures['raw'])} of {figures['positions']} positions, {sims} sims "
            f"{pct(figures['search'])} (random move {100 * figures['random_move']:.1f}%)")
    if figures.get("raw_optimal") and figures.get("search_optimal"):
        text += f"; optimal move: raw {pct(figures['raw_optimal'])}, {sims} sims {pct(figures['search_optimal'])}"
    return text
