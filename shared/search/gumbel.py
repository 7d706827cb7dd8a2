"""The Gumbel AlphaZero root (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR 2022), for
SearchConfig.root = "gumbel": which root action each simulation takes, the move played and the training policy.

Per searched position (one row; all rows of a search step are handled together in numpy):

1. Gumbel noise g(a) ~ Gumbel(0, 1) for every legal action (one draw of an [A] row per position; g = 0 without
   noise, which makes the search deterministic). The root priors get no Dirichlet noise.
2. The m = min(gumbel_considered, legal actions) actions with the highest g(a) + logits(a) are considered; actions
   the solver proved lost are left out while some action is not proven lost.
3. Sequential halving spends the simulations on them: simulation i (0-based, counted in this search) is forced
   at the root to the considered action of the highest score g + logits + sigma(completed Q) among those that
   have exactly `considered_visit_sequence(m, n)[i]` visits in this search (when none has, among all
   considered actions). Below the root the PUCT descent of shared.search.puct runs unchanged: this is Gumbel
   AlphaZero's root only, not the deterministic interior rule of full Gumbel MuZero. With leaves_per_step > 1
   the rounds of one step are scheduled together from the statistics at the step's start (each forced path
   counts as a visit for the next round).
4. Completed Q, from the ROOT player's view (the sign of SearchResult.q): a visited action's Q; an unvisited
   one gets v_mix = (v + sum_b N(b) * sum_visited P(b) Q(b) / sum_visited P(b)) / (1 + sum_b N(b)), with v the
   root's mean value at the start of the search (the network's value at a fresh root; the reused subtree's mean
   at a reused one); an action proven won or lost by the solver gets its exact +1 / -1. The completed Q of the
   legal actions is rescaled to [0, 1] by its min and max (denominator at least 1e-8), then
   sigma(q) = (gumbel_c_visit + max_a N(a)) * gumbel_c_scale * q. N counts every visit, reused ones included.
5. The move: the argmax of g + logits + sigma among the considered actions with the most visits in this search
   (those that survived the halving; not proven lost while another survivor is not).
6. The training policy: softmax(logits + sigma(completed Q)) over all legal actions (0 on illegal ones; 0 also
   on actions proven lost while some action is not proven lost).
7. Solver: when an action is proven won, the move is the proven win of the highest g + logits + sigma and the
   training policy is one-hot on it (the result is exact, as the PUCT self-play's visits concentrate on a proven
   win); such a root also stops forcing actions (PUCT then takes the win at once). At a root proven lost every
   action loses: the move is the best by g + logits + sigma among those that do not lose at once
   (SearchResult.loses_at_once, the "resist longest" rule of choose_moves), the policy as in 6.

Logits are log(prior) of the root's clean prior (softmax is shift-invariant, so this is the network's logits up to
a constant per row); a legal action whose prior underflowed to 0 gets log(float32 tiny).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from shared.search.tree import ROOT, TreeStorage
from shared.search.types import SearchConfig, SearchResult

#: Smallest denominator of the min-max rescaling of the completed Q (as mctx).
RESCALE_EPSILON = 1e-8


@lru_cache(maxsize=256)
def _sequence(num_considered: int, num_simulations: int) -> tuple[int, ...]:
    if num_considered <= 1:
        return tuple(range(num_simulations))
    rounds_of_halving = math.ceil(math.log2(num_considered))
    sequence: list[int] = []
    visits = [0] * num_considered
    alive = num_considered
    while len(sequence) < num_simulations:
        extra = max(1, num_simulations // (rounds_of_halving * alive))
        for _ in range(extra):
            sequence.extend(visits[:alive])
            visits[:alive] = [v + 1 for v in visits[:alive]]
        alive = max(2, alive // 2)
    return tuple(sequence[:num_simulations])


def considered_visit_sequence(num_considered: int, num_simulations: int) -> np.ndarray:
    """Sequential halving's visit targets: [num_simulations] int32, entry i the visit count (in this search) an
    action must have to be taken by simulation i. Phases of halving: each of the `alive` actions (m at first,
    then halved, never below 2) gets max(1, n // (ceil(log2 m) * alive)) more visits per phase, in rounds that
    visit each alive action once; with m <= 1 the one action takes every simulation (targets 0, 1, 2, ...)."""
    return np.array(_sequence(int(num_considered), int(num_simulations)), np.int32)


def root_logits(prior: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """log(prior) [K, A] float32 on legal actions (at least log(float32 tiny)), -inf on illegal ones."""
    tiny = np.finfo(np.float32).tiny
    safe = np.where(legal, np.maximum(prior, tiny), np.float32(1.0))
    return np.where(legal, np.log(safe), np.float32(-np.inf)).astype(np.float32)


def completed_q(q: np.ndarray, visits: np.ndarray, prior: np.ndarray, legal: np.ndarray, proven: np.ndarray,
                value: np.ndarray) -> np.ndarray:
    """Completed Q [K, A] float32 from the root player's view (0 on illegal actions): q [K, A] the children's mean
    values (root player's view), visits [K, A] their visit counts, prior [K, A] the root prior (0 on illegal),
    legal [K, A] bool, proven [K, A] int8 solver results (+1 won, -1 lost), value [K] the root value estimate v.
    Visited actions keep q, unvisited ones get v_mix (module docstring, 4), proven ones +-1."""
    visited = (visits > 0) & legal
    total = visits.sum(axis=1)
    weight = np.where(visited, np.maximum(prior, np.finfo(np.float32).tiny), 0.0)
    weight_sum = weight.sum(axis=1)
    weighted_q = (weight * q).sum(axis=1) / np.where(weight_sum > 0, weight_sum, 1.0)
    v_mix = (value + total * weighted_q) / (total + 1.0)
    out = np.where(visited, q, v_mix[:, None])
    out = np.where(proven != 0, proven.astype(np.float32), out)
    return np.where(legal, out, 0.0).astype(np.float32)


def sigma(completed: np.ndarray, visits: np.ndarray, legal: np.ndarray, c_visit: float,
          c_scale: float) -> np.ndarray:
    """sigma(completed Q) [K, A] float32 (0 on illegal actions): completed [K, A] rescaled to [0, 1] by the min
    and max over the legal actions, times (c_visit + max_a visits [K, A]) * c_scale."""
    low = np.where(legal, completed, np.inf).min(axis=1, keepdims=True)
    high = np.where(legal, completed, -np.inf).max(axis=1, keepdims=True)
    rescaled = (completed - low) / np.maximum(high - low, RESCALE_EPSILON)
    scale = (c_visit + visits.max(axis=1, keepdims=True)) * c_scale
    return np.where(legal, scale * rescaled, 0.0).astype(np.float32)


def improved_policy(logits: np.ndarray, sigmas: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """softmax(logits + sigma) over the legal actions: [K, A] float32, 0 on illegal ones, rows summing to 1.
    logits [K, A] (-inf on illegal), sigmas [K, A], legal [K, A] bool."""
    scores = np.where(legal, logits + sigmas, -np.inf).astype(np.float64)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def _argmax_where(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Per row the allowed action [K, A] bool of the highest score (lowest index on ties): [K] int64."""
    return np.where(allowed, scores, -np.inf).argmax(axis=1).astype(np.int64)


def _top_m(scores: np.ndarray, allowed: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The m [K] allowed actions of the highest scores per row: [K, A] bool."""
    order = np.argsort(-np.where(allowed, scores, -np.inf), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(scores.shape[1])[None, :], axis=1)
    return allowed & (ranks < m[:, None])


@dataclass
class GumbelRoot:
    """The Gumbel root state of one search over K rows (tree slots): see the module docstring."""

    config: SearchConfig
    gumbel: np.ndarray        # [K, A] float32 g(a), 0 on illegal actions and without noise
    logits: np.ndarray        # [K, A] float32, -inf on illegal actions
    legal: np.ndarray         # [K, A] bool
    considered: np.ndarray    # [K, A] bool
    targets: np.ndarray       # [K, n] int32 sequential halving's visit target of each simulation
    base_visits: np.ndarray   # [K, A] float32 root children's visits before this search (reused)
    value: np.ndarray         # [K] float32 root value estimate v at the start, root player's view

    @classmethod
    def start(cls, tree: TreeStorage, slots: np.ndarray, num_simulations: int, config: SearchConfig,
              rng: np.random.Generator | None) -> GumbelRoot:
        """Draw the noise (rng None: g = 0) and pick the considered actions of the roots of `slots` [K] (prepared,
        with their clean priors in place) for a search of `num_simulations`."""
        visits, q, prior, proven, _, _ = tree.root_statistics(slots)
        legal = np.isfinite(tree.prior[slots, ROOT])
        logits = root_logits(prior, legal)
        gumbel = np.zeros(legal.shape, np.float32)
        if rng is not None:
            gumbel = np.where(legal, rng.gumbel(size=legal.shape), 0.0).astype(np.float32)
        not_lost = legal & (proven != -1)
        allowed = np.where(not_lost.any(axis=1, keepdims=True), not_lost, legal)
        m = np.minimum(allowed.sum(axis=1), config.gumbel_considered)
        considered = _top_m(gumbel + logits, allowed, m)
        table = np.stack([considered_visit_sequence(k, num_simulations) for k in range(int(m.max()) + 1)])
        root = tree.nodes[slots, ROOT]
        value = (root["value_sum"] / np.maximum(root["visits"], 1)).astype(np.float32)
        return cls(config, gumbel, logits, legal, considered, table[m], visits, value)

    def _scores(self, visits: np.ndarray, q: np.ndarray, prior: np.ndarray, proven: np.ndarray) -> np.ndarray:
        """g + logits + sigma(completed Q) [K, A] float32 (-inf on illegal actions) and sigma [K, A]."""
        completed = completed_q(q, visits, prior, self.legal, proven, self.value)
        sigmas = sigma(completed, visits, self.legal, self.config.gumbel_c_visit, self.config.gumbel_c_scale)
        return self.gumbel + self.logits + sigmas, sigmas

    def forced_actions(self, tree: TreeStorage, slots: np.ndarray, done: int, rounds: int) -> np.ndarray:
        """The root actions of simulations done .. done + rounds - 1 of the roots of `slots` [K]: [rounds, K]
        int32, -1 (PUCT's choice) at roots proven won or decided."""
        visits, q, prior, proven, _, proven_value = tree.root_statistics(slots)
        scores, _ = self._scores(visits, q, prior, proven)
        counts = visits - self.base_visits
        forced = np.empty((rounds, slots.shape[0]), np.int32)
        rows = np.arange(slots.shape[0])
        for k in range(rounds):
            index = min(done + k, self.targets.shape[1] - 1)
            eligible = self.considered & (counts == self.targets[:, index, None])
            eligible = np.where(eligible.any(axis=1, keepdims=True), eligible, self.considered)
            forced[k] = _argmax_where(scores, eligible)
            counts[rows, forced[k]] += 1
        forced[:, proven_value != 0] = -1
        return forced

    def finish(self, result: SearchResult) -> None:
        """Fill result.chosen [K] (the move) and result.policy [K, A] (the training policy) of this finished
        search (its K rows in the order of the search's slots)."""
        visits, q, proven = result.visits, result.q, result.proven
        scores, sigmas = self._scores(visits, q, result.prior, proven)
        lost = proven == -1
        some_safe = (self.legal & ~lost).any(axis=1, keepdims=True)
        counts = np.where(self.considered, visits - self.base_visits, -1.0)
        survivors = self.considered & (counts == counts.max(axis=1, keepdims=True))
        safe_survivors = survivors & ~lost
        survivors = np.where(safe_survivors.any(axis=1, keepdims=True), safe_survivors,
                             np.where(some_safe, self.considered & ~lost, survivors))
        survivors = np.where(survivors.any(axis=1, keepdims=True), survivors, self.legal & ~lost)
        chosen = _argmax_where(scores, survivors)
        policy = improved_policy(self.logits, sigmas, self.legal)
        policy = np.where(some_safe & lost, 0.0, policy)
        mass = policy.sum(axis=1, keepdims=True)
        underflow = mass[:, 0] <= 0                                      # every safe action's weight underflowed
        policy[underflow] = (self.legal & ~lost)[underflow]
        mass[underflow] = policy[underflow].sum(axis=1, keepdims=True)
        policy = (policy / mass).astype(np.float32)
        lost_root = result.proven_value == -1
        if lost_root.any():
            resist = self.legal[lost_root] & ~result.loses_at_once[lost_root]
            resist = np.where(resist.any(axis=1, keepdims=True), resist, self.legal[lost_root])
            chosen[lost_root] = _argmax_where(scores[lost_root], resist)
        wins = (proven == 1) & self.legal
        won = wins.any(axis=1)
        if won.any():
            chosen[won] = _argmax_where(scores[won], wins[won])
            policy[won] = 0.0
            policy[won, chosen[won]] = 1.0
        result.chosen = chosen
        result.policy = policy
