"""Priors from logits, Dirichlet root noise, and choosing moves from search results (`choose_moves`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from shared.search.errors import SearchError

if TYPE_CHECKING:
    from shared.search.mcts import SearchResult


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over legal actions only: logits [M, A] float, legal [M, A] bool -> priors [M, A] float32.

    Illegal actions get 0 and each row sums to 1 over its legal actions. NaN logits count as -inf and +inf as
    the largest float. A row without mass (every legal logit -inf or NaN) becomes uniform over its legal actions.
    """
    big = np.finfo(np.float32).max
    clean = np.nan_to_num(np.asarray(logits, np.float32), nan=-np.inf, posinf=big, neginf=-np.inf)
    masked = np.where(legal, clean, np.float32(-np.inf))
    row_max = masked.max(axis=1, keepdims=True)                        # [M, 1]
    no_mass = ~np.isfinite(row_max[:, 0])
    shifted = masked - np.where(np.isfinite(row_max), row_max, np.float32(0.0))
    weights = np.exp(shifted)                                          # [M, A] float32, 0 where illegal
    weights[no_mass] = legal[no_mass]
    total = weights.sum(axis=1, keepdims=True)
    return (weights / np.maximum(total, np.float32(1e-30))).astype(np.float32)


def dirichlet_noise(legal: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet(alpha) noise over each row's legal actions: legal [K, A] bool -> noise [K, A] float32 (0 if illegal).

    Sampled as normalised Gamma(alpha, 1) variables, which is the Dirichlet distribution over the legal subset.
    """
    gamma = rng.gamma(alpha, 1.0, size=legal.shape).astype(np.float32) * legal
    total = gamma.sum(axis=1, keepdims=True)
    # Gamma samples with a tiny alpha can all underflow to 0; fall back to uniform over legal moves then.
    empty = total[:, 0] <= 0
    gamma[empty] = legal[empty]
    total[empty] = legal[empty].sum(axis=1, keepdims=True)
    return gamma / total


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
    """
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
