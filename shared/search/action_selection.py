"""Choosing moves: from a search's visit counts (`select_actions`: temperature sampling, ties at random), from a
whole search result (`choose_moves`: proven wins first, proven losses avoided), and among the best scores of any
move ranking (`pick_among_best`); and the training policy with the solver's proofs applied (`solved_policy`)."""
from __future__ import annotations

import numpy as np

from shared.search.errors import SearchError
from shared.search.types import SearchResult


def pick_among_best(scores: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """Argmax per row of scores [B, A] float -> actions [B] int64; ties -> lowest index when rng is None, else
    uniformly random among the tied actions."""
    if rng is None:
        return scores.argmax(axis=1).astype(np.int64)
    best = scores == scores.max(axis=1, keepdims=True)
    return np.where(best, rng.random(scores.shape), -1.0).argmax(axis=1).astype(np.int64)


def select_actions(visits: np.ndarray, temperature: float | np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Choose one action per row from root visit counts.

    visits [B, A] (float or int, >= 0, at least one positive per row); temperature a float or [B] floats >= 0.
    Temperature 0: the most visited action, ties broken uniformly at random with `rng` (so equal visit counts do
    not always favour the lowest action index). Temperature T > 0: sample with probability visits^(1/T)
    (computed in log space, so small T does not overflow). Returns actions [B] int64.
    """
    visits = np.asarray(visits, np.float64)
    if visits.ndim != 2:
        raise SearchError(f"select_actions: visits must be [B, A], got shape {visits.shape}")
    if visits.shape[0] and not (visits.max(axis=1) > 0).all():
        raise SearchError("select_actions: a row has no visits; search the position before choosing a move")
    temps = np.broadcast_to(np.asarray(temperature, np.float64), (visits.shape[0],))
    if (temps < 0).any() or not np.isfinite(temps).all():
        raise SearchError(f"select_actions: temperatures must be finite and >= 0, got {temps}")
    greedy = temps == 0
    log_v = np.log(np.where(visits > 0, visits, 1.0))
    scaled = np.where(visits > 0, log_v / np.where(greedy, 1.0, temps)[:, None], -np.inf)
    # Greedy rows: only the maxima keep a weight, all equal, so sampling breaks ties uniformly.
    is_max = visits == visits.max(axis=1, keepdims=True)
    scaled = np.where(greedy[:, None], np.where(is_max, 0.0, -np.inf), scaled)
    probs = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    cumulative = np.cumsum(probs, axis=1)
    draws = rng.random(visits.shape[0]) * cumulative[:, -1]
    actions = (cumulative <= draws[:, None]).sum(axis=1)
    # A draw can never select a zero-probability action; guard the float edge at the last column.
    return np.minimum(actions, visits.shape[1] - 1).astype(np.int64)


def choose_moves(result: SearchResult, temperature: float | np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The one move chooser of players and self-play: a search result [B rows] -> actions [B] int64.

    Per row: a proven winning move when there is one (the most visited of them, ties at random); else never a
    proven losing move while another move is available (weights: the visits of the other moves, or uniform over
    them when none of them was visited); when every move is proven lost, never one that loses at once while
    another does not (result.loses_at_once: the lost side still blocks; weights: visits + 1 of those moves);
    else `select_actions` on the visits with the row's temperature
    (0 = most visited, ties at random; T > 0 = sample visits^(1/T)). Rows without proven moves give exactly
    what select_actions(result.visits, temperature, rng) gives, with the same draws from rng.

    Rows whose search chose its move itself (result.chosen >= 0: the Gumbel root, which applies the solver rules
    itself, see shared.search.gumbel) get that move whatever the temperature, without drawing from rng.
    """
    chosen = np.asarray(result.chosen)
    own = chosen >= 0
    if own.any():
        actions = chosen.astype(np.int64)
        if not own.all():
            temps = np.broadcast_to(np.asarray(temperature, np.float64), own.shape)
            actions[~own] = choose_moves(result.rows(~own), temps[~own], rng)
        return actions
    visits = np.asarray(result.visits, np.float64)
    proven = np.asarray(result.proven)
    temps = np.array(np.broadcast_to(np.asarray(temperature, np.float64), (visits.shape[0],)))
    if not proven.any():
        return select_actions(visits, temps, rng)
    weights = visits.copy()
    wins = proven == 1
    win_rows = wins.any(axis=1)
    # +1 so that a proven win the search did not need to visit can be chosen; greedy among the wins.
    weights[win_rows] = np.where(wins[win_rows], visits[win_rows] + 1.0, 0.0)
    temps[win_rows] = 0.0
    available = (visits > 0) | (np.asarray(result.prior) > 0)
    safe = available & (proven != -1)
    avoid_rows = ~win_rows & (proven == -1).any(axis=1) & safe.any(axis=1)
    safe_visits = np.where(safe[avoid_rows], visits[avoid_rows], 0.0)
    unvisited = safe_visits.max(axis=1) <= 0
    safe_visits[unvisited] = safe[avoid_rows][unvisited]               # uniform over the safe moves
    weights[avoid_rows] = safe_visits
    loses_at_once = np.asarray(result.loses_at_once)
    resist = available & ~loses_at_once
    lost_rows = ~win_rows & ~avoid_rows & loses_at_once.any(axis=1) & resist.any(axis=1)
    weights[lost_rows] = np.where(resist[lost_rows], visits[lost_rows] + 1.0, 0.0)
    return select_actions(weights, temps, rng)


def solved_policy(result: SearchResult) -> np.ndarray:
    """The search's training policy with the MCTS-solver's proofs applied, as choose_moves applies them to the move:
    result [B rows] -> [B, A] float32, each row summing to 1 where result.policy's does.

    Per row: where some move is proven to win, the policy's mass on the proven wins only (uniform over them when
    the search put none there); else, where some moves are proven to lose and another legal move is not, the mass
    on the moves not proven lost (uniform over them when the search put none there); else (no proofs, or every
    move proven lost) result.policy unchanged. Legal moves are those with a prior or a visit (result.prior is 0
    for illegal moves). A row with no mass at all (no visits) is left as it is.
    """
    policy = np.asarray(result.policy, np.float32)
    proven = np.asarray(result.proven)
    if not proven.any():
        return policy.copy()
    legal = (np.asarray(result.prior) > 0) | (np.asarray(result.visits) > 0)
    wins = proven == 1
    win_rows = wins.any(axis=1)
    safe = legal & (proven != -1)
    keep = np.where(win_rows[:, None], wins, safe)                        # [B, A] the moves that keep mass
    avoid_rows = ~win_rows & ((proven == -1) & legal).any(axis=1) & safe.any(axis=1)
    rows = (win_rows | avoid_rows) & (policy.sum(axis=1) > 0)
    kept = np.where(keep, policy, 0.0)
    mass = kept.sum(axis=1, keepdims=True)
    kept = np.where(mass > 0, kept, keep.astype(np.float32))              # no mass on them: uniform over them
    kept = kept / kept.sum(axis=1, keepdims=True).clip(min=1e-30)
    return np.where(rows[:, None], kept, policy).astype(np.float32)
