"""The tactics benchmark (`zeroforge bench tactics`): how often a model's search does what a labelled position asks.

`zeroforge bench tactics --game connect4`: how often the search keeps a position's game-theoretic outcome, on
positions labelled by the perfect solver (shared.games.connect4.solver).

Positions: random games (uniform legal moves, never a move that ends the game) stopped after a ply count drawn
uniformly from [min_plies, max_plies]; a position is kept when the solver settles every legal move within its
node budget and the side to move is not lost (some move draws or wins). The model plays each kept position as
`analyze` does (the match players' search: no noise, MCTS-solver on, `sims` simulations, all positions in one
batched search). A move keeps the outcome when its solved value equals the position's best value (a win stays a
win, a draw a draw). Reported with 95% Wilson intervals: over all kept positions, over the critical ones (where
some legal move would lose the outcome), per outcome (won / drawn positions), and the rate of a uniformly random
legal move on the same positions.

`zeroforge bench tactics --game othello` (or othello-6x6): the same on endgames labelled by the exact endgame solver
(shared.games.othello.solver): random games stopped once the number of empty squares drawn uniformly from
[min_empties, max_empties] is reached.

Games with a solver at the root of the players (Gomoku's VCF, Othello's endgame solver, Connect Four's solver in
searches of 200 simulations or more: shared.search.root_solver) report each model twice: as `analyze` plays (root
solver on) and by its search alone (root solver off), since where the root solver settles a position, the first
figure measures the solver more than the network.

`zeroforge bench tactics --game gomoku-15` (any in-a-row game): "win in 1" and "must block" positions labelled by
the rules alone (shared.games.inarow_tactics). With `--vcf`, VCF attack and VCF defence positions instead
(shared.games.vcf_labels).

Each runner returns a JSON-ready report; cli.bench.tactics prints it.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from shared.games import family_of
from shared.games.base import Game
from shared.games.inarow import InARowGame
from shared.games.inarow_tactics import line_tactic_positions
from shared.games.random_positions import random_endgame, random_position
from shared.games.vcf_labels import VCF_DEPTH, vcf_tactic_positions
from shared.players.analysis import analyze_states
from shared.players.tactics_scores import (
    keep_report, line_keep_report, line_random_rates, random_move_rates, vcf_keep_report, vcf_random_rates,
)
from shared.search.root_solver import uses_root_solver
from shared.search.solved import UNKNOWN


def labelled_positions(game: Game, count: int, draw: Callable[[], np.ndarray],
                       label: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Sample positions with `draw()` ([S] int16) until `count` are kept (module docstring), or 50 * count were
    sampled; `label(state)` gives the solver's value of every action ([A] int64).

    Returns (states [N, S] int16, values [N, A] int64 from the solver: 1 win, 0 draw, -1 loss, -2 illegal,
    positions sampled, positions skipped over the node budget)."""
    states, values = [], []
    sampled = skipped = 0
    while len(states) < count and sampled < 50 * count:
        sampled += 1
        state = draw()
        moves = label(state)
        if np.any(moves == UNKNOWN):
            skipped += 1
        elif moves.max() >= 0:
            states.append(state)
            values.append(moves)
    return (np.array(states, np.int16).reshape(-1, game.state_size),
            np.array(values, np.int64).reshape(-1, game.num_actions), sampled, skipped)


def model_reports(game: Game, models: list[tuple[str, Any]], states: np.ndarray, search, seed: int,
                  score: Callable[[np.ndarray], dict[str, Any]]) -> list[dict[str, Any]]:
    """Let each model (models: (label, evaluator) pairs) choose a move in every state [N, S] int16 with one batched
    search as `analyze` does (SearchConfig `search`), and score the chosen actions [N] int64 with `score` -> one
    dict per model and root solver setting (on, then off, for games with one; shared.search.root_solver): its
    label, "root_solver" (bool), the score's entries and the search time."""
    reports = []
    for label, evaluate in models:
        for root_solver in (True, False) if uses_root_solver(game, search.num_simulations) else (False,):
            started = time.perf_counter()
            chosen = np.array([a.action for a in analyze_states(game, evaluate, states, search=search, pv_depth=1,
                                                                seed=seed, root_solver=root_solver)], np.int64)
            reports.append({"model": label, "root_solver": root_solver, **score(chosen),
                            "search_seconds": round(time.perf_counter() - started, 3)})
    return reports


def solved_tactics(game: Game, models: list[tuple[str, Any]], search, *, positions: int, seed: int,
                   span: tuple[int, int], max_nodes: int) -> dict[str, Any]:
    """Sample and label `positions` positions once (Connect Four: after span = (min, max) random plies; Othello:
    with span = (min, max) empty squares), let each model's search (models: (label, evaluator) pairs; SearchConfig
    `search`) choose a move in each, and report per model the keep rates (keep_report, under "models") with the
    random move's rates and the sampling and timing facts."""
    rng = np.random.default_rng(seed)
    low, high = span
    family = family_of(game)
    label, span_key = family.tactics_solver(game, max_nodes), family.tactics_span
    if span_key == "plies":
        draw = lambda: random_position(game, rng, int(rng.integers(low, high + 1)))  # noqa: E731
    else:
        draw = lambda: random_endgame(game, rng, int(rng.integers(low, high + 1)))  # noqa: E731
    started = time.perf_counter()
    states, values, sampled, skipped = labelled_positions(game, positions, draw, label)
    report = {"game": game.name, "positions": int(states.shape[0]), "sampled": sampled,
              "skipped_over_budget": skipped, span_key: [low, high], "simulations": search.num_simulations,
              "seed": seed, "max_nodes": max_nodes, **random_move_rates(values),
              "solve_seconds": round(time.perf_counter() - started, 3)}
    report["models"] = model_reports(game, models, states, search, seed, lambda chosen: keep_report(values, chosen))
    return report


def line_tactics(game: InARowGame, models: list[tuple[str, Any]], search, *, positions: int,
                 seed: int) -> dict[str, Any]:
    """`positions` positions of each kind (line_tactic_positions), searched by each model (models: (label,
    evaluator) pairs; SearchConfig `search`) in one batch -> per model the rates of line_keep_report (under
    "models"), the random move's rates, and timing facts."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    states, kinds, outcomes = line_tactic_positions(game, positions, rng)
    report = {"game": game.name, "positions": int(states.shape[0]), "simulations": search.num_simulations,
              "seed": seed, **line_random_rates(kinds, outcomes),
              "sample_seconds": round(time.perf_counter() - started, 3)}
    report["models"] = model_reports(game, models, states, search, seed,
                                     lambda chosen: line_keep_report(kinds, outcomes, chosen))
    return report


def vcf_tactics(game: InARowGame, models: list[tuple[str, Any]], search, *, positions: int, seed: int,
                max_seconds: float = 3600.0) -> dict[str, Any]:
    """`positions` positions of each VCF kind (vcf_tactic_positions), searched by each model (models: (label,
    evaluator) pairs; SearchConfig `search`) as `analyze` plays -> per model the rates of vcf_keep_report (under
    "models"), a random legal move's rates, and how the positions were found."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    states, kinds, good, labelled = vcf_tactic_positions(game, positions, rng, max_seconds=max_seconds)
    legal = game.legal_mask(states) if states.shape[0] else np.zeros_like(good)
    report = {"game": game.name, "positions": int(states.shape[0]), "labelled": labelled, "depth": VCF_DEPTH,
              "simulations": search.num_simulations, "seed": seed,
              **vcf_random_rates(kinds, good, legal),
              "sample_seconds": round(time.perf_counter() - started, 3)}
    report["models"] = (model_reports(game, models, states, search, seed,
                                      lambda chosen: vcf_keep_report(kinds, good, chosen))
                        if states.shape[0] else [])
    return report
