"""Match statistics for the gatekeeper: paired score intervals, Elo, promotion and early stopping.

A gate match plays each opening twice with colours swapped; the two games form a *pair* and the
pair's mean score (from candidate A's side) is one of 0, .25, .5, .75, 1. Pairs are independent,
the two games of a pair are not (the opening favours one colour), so the interval is built from the
pair means: score +/- t_{0.975, P-1} * sd(pair means) / sqrt(P), clipped to [0, 1].

Degenerate case (P < 2 or all pair means equal, sd = 0): the t interval would have zero width, so a
Wilson score interval is used on the pair level instead, treating the mean pair score p as a
proportion over P trials. For any variable in [0, 1] with mean p the variance is at most p(1 - p),
so this is the conservative (widest-variance) choice; e.g. 50 pairs all won give [0.93, 1].

All pair scores are handled exactly in quarter units (integers 0..4).

Early stopping has two rules. The exact one (`forced_decision`) stops when no result of the remaining pairs can
change the final decision. The sequential one (`clear_decision`, Haybittle-Peto) stops when the interval of
the pairs played so far at a much higher confidence (the gate's 99.9%) already lies on one side of the threshold:
each interim look then spends at most (1 - 0.999) / 2 of false decisions, so a gate with a look after each of its
chunks keeps close to the 95% interval's error rate (measured in tests/runtime/test_stats.py), and a clear result
ends after a few chunks instead of most of them.

`bootstrap_mean` is the ablations' interval (cli/bench/ablation.py): the mean of per-position figures with a
bootstrap percentile interval over the positions.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
#: The fewest pairs before the sequential early stop may look (the t interval needs a few pairs to be sound).
EARLY_STOP_MIN_PAIRS = 20
PROMOTION_RULES = ("ci_low_above", "score_above")


class StatsError(ValueError):
    """Bad input to a statistics function; the message says what is wrong."""


@dataclass(frozen=True)
class EvalStats:
    """Result of a paired match from player A's side. Scores in [0, 1]; Elo is A minus B."""

    games: int
    pairs: int
    wins: int
    draws: int
    losses: int
    score: float
    ci_low: float
    ci_high: float
    elo: float
    elo_low: float
    elo_high: float
    interval: str  # "t" (pair-level t interval) or "wilson" (degenerate fallback, see module doc)
    # A's [wins, draws, losses] with the first player's side (+1 stones) and with the second's; None when the
    # games' colours are not known (stats built from pair scores alone)
    a_first: list[int] | None = None
    a_second: list[int] | None = None

    def to_dict(self) -> dict:
        """Plain JSON-serialisable dict (for the registry's gate record and reports)."""
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    """A gate decision: promote or not; `why`, the short cause a gate line prints (e.g. "score 0.470 not above
    0.55"); `reason`, `why` followed by the match's figures, as the registry records it."""
    promote: bool
    reason: str
    why: str


def _to_quarters(pair_scores: np.ndarray) -> np.ndarray:
    """[P] float pair means in {0, .25, .5, .75, 1} -> [P] int64 quarter units 0..4 (validated)."""
    scores = np.asarray(pair_scores, dtype=np.float64).reshape(-1)
    quarters = np.rint(scores * 4.0)
    if not np.all(np.isfinite(scores)) or np.any(np.abs(scores * 4.0 - quarters) > 1e-9):
        raise StatsError("pair scores must be means of two games: each one of 0, 0.25, 0.5, 0.75 or 1")
    if np.any((quarters < 0) | (quarters > 4)):
        raise StatsError("pair scores must lie in [0, 1] (score of player A)")
    return quarters.astype(np.int64)


def _interval_from_moments(
    pairs: int, qsum: np.ndarray, qsq: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised interval from exact quarter-unit moments.

    pairs: P; qsum, qsq: [K] int64 sums of quarter scores and of their squares over the P pairs.
    Returns (low [K] float64, high [K] float64, is_t [K] bool), clipped to [0, 1].
    """
    qsum = np.asarray(qsum, dtype=np.int64)
    qsq = np.asarray(qsq, dtype=np.int64)
    mean = qsum / (4.0 * pairs)
    spread = pairs * qsq - qsum * qsum  # = 16 * P * (P-1) * sample variance; exact integer
    is_t = (spread > 0) & (pairs >= 2)
    # t interval (only used where is_t; the 'maximum' guards the unused entries)
    sd = np.sqrt(np.maximum(spread, 0) / (16.0 * pairs * max(pairs - 1, 1)))
    t_crit = scipy_stats.t.ppf(0.5 + confidence / 2.0, max(pairs - 1, 1))
    t_half = t_crit * sd / math.sqrt(pairs)
    # Wilson score interval on the pair level (degenerate fallback)
    z = scipy_stats.norm.ppf(0.5 + confidence / 2.0)
    shrink = 1.0 + z * z / pairs
    centre = (mean + z * z / (2.0 * pairs)) / shrink
    w_half = z / shrink * np.sqrt(mean * (1.0 - mean) / pairs + z * z / (4.0 * pairs * pairs))
    low = np.where(is_t, mean - t_half, centre - w_half)
    high = np.where(is_t, mean + t_half, centre + w_half)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0), is_t


def pair_interval(pair_scores: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, str]:
    """(low, high, method) of the mean pair score; pair_scores [P] float in {0, .25, .5, .75, 1}."""
    quarters = _to_quarters(pair_scores)
    if quarters.size == 0:
        raise StatsError("no pairs played: an interval needs at least one pair of games")
    low, high, is_t = _interval_from_moments(
        quarters.size, np.array([quarters.sum()]), np.array([(quarters * quarters).sum()]), confidence
    )
    return float(low[0]), float(high[0]), "t" if is_t[0] else "wilson"


def elo_from_score(score: float, games: int | None = None) -> float:
    """Elo difference -400 * log10(1/score - 1). With `games`, the score is first clipped to
    [0.5/games, 1 - 0.5/games] (a finite value for 0% or 100%); without, it must lie in (0, 1)."""
    if games is not None:
        if games < 1:
            raise StatsError(f"games must be >= 1 to clip the score, got {games}")
        score = min(max(score, 0.5 / games), 1.0 - 0.5 / games)
    if not 0.0 < score < 1.0:
        raise StatsError(f"score must be strictly between 0 and 1 for a finite Elo (got {score}); pass games to clip")
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of an Elo difference, 1 / (1 + 10^(-elo/400)): the inverse of elo_from_score
    (up to its clipping); a float in (0, 1)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def paired_evaluation(pair_scores: np.ndarray, *, wins: int, draws: int, losses: int) -> EvalStats:
    """Statistics of a paired match. pair_scores: [P] float, each pair's mean score for A in
    {0, .25, .5, .75, 1}; wins/draws/losses: A's game counts (must add up to 2P and match the
    mean score). Raises StatsError on inconsistent input."""
    quarters = _to_quarters(pair_scores)
    pairs = int(quarters.size)
    games = 2 * pairs
    if pairs == 0:
        raise StatsError("no pairs played: play at least one opening (two games) before evaluating")
    if min(wins, draws, losses) < 0 or wins + draws + losses != games:
        raise StatsError(f"wins + draws + losses = {wins}+{draws}+{losses} must equal 2 * pairs = {games}")
    if 2 * wins + draws != int(quarters.sum()):  # both sides = 4 * P * score
        raise StatsError(
            f"counts give score {(wins + 0.5 * draws) / games:.4f} but the pair scores average "
            f"{quarters.mean() / 4:.4f}; pass the counts of the same games"
        )
    score = float(quarters.sum() / (4.0 * pairs))
    ci_low, ci_high, method = pair_interval(quarters / 4.0)
    return EvalStats(
        games=games, pairs=pairs, wins=int(wins), draws=int(draws), losses=int(losses),
        score=score, ci_low=ci_low, ci_high=ci_high,
        elo=elo_from_score(score, games), elo_low=elo_from_score(ci_low, games),
        elo_high=elo_from_score(ci_high, games), interval=method,
    )


def pair_means(game_scores: np.ndarray) -> np.ndarray:
    """Pair scores: game_scores [P, 2] float (A's points in the two games of each pair: 1 win, .5 draw, 0 loss)
    -> [P] float64 means. The only place that turns games into pair scores."""
    scores = np.asarray(game_scores, dtype=np.float64).reshape(-1, 2)
    return scores.mean(axis=1)


def evaluate_pairs(game_scores: np.ndarray) -> EvalStats:
    """paired_evaluation of the games of a paired match: game_scores [P, 2] float, A's points per game (1 win,
    0.5 draw, 0 loss), row p holding the two games of opening p, A on the first player's side in column 0 and on
    the second's in column 1. The only place that counts wins, draws and losses for a match report; also A's
    W/D/L per side (`a_first`, `a_second`), which tells a game's first-move advantage from a difference in
    strength."""
    scores = np.asarray(game_scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] != 2 or not np.isin(scores, (0.0, 0.5, 1.0)).all():
        raise StatsError(f"game scores must be a [P, 2] array of 1/0.5/0 (A's points), got shape {scores.shape}")
    stats = paired_evaluation(pair_means(scores), wins=int((scores == 1.0).sum()),
                              draws=int((scores == 0.5).sum()), losses=int((scores == 0.0).sum()))
    first, second = ([int((scores[:, col] == points).sum()) for points in (1.0, 0.5, 0.0)] for col in (0, 1))
    return replace(stats, a_first=first, a_second=second)


def _check_rule(rule: str, threshold: float) -> None:
    if rule not in PROMOTION_RULES:
        raise StatsError(f"unknown promotion rule {rule!r}; valid rules: {', '.join(PROMOTION_RULES)}")
    if not 0.0 < threshold < 1.0:
        raise StatsError(f"threshold must be a score strictly between 0 and 1, got {threshold}")


def decide_promotion(stats: EvalStats, rule: str, threshold: float, promote_all_draws: bool = False) -> Decision:
    """Promote the candidate when, by `rule`, its score beats `threshold`:
    "ci_low_above": ci_low > threshold (significantly better than threshold at 95%);
    "score_above": score > threshold (e.g. 0.55, the classic AlphaGo Zero gate).
    With promote_all_draws, a match whose every game was drawn also promotes: it is no evidence either way,
    and the candidate has trained on more data (for games whose good players always draw, tic-tac-toe,
    where otherwise the best stops changing once two players draw everything)."""
    _check_rule(rule, threshold)
    summary = (
        f"score {stats.score:.3f} [{stats.ci_low:.3f}, {stats.ci_high:.3f}] over {stats.games} games "
        f"(+{stats.wins} ={stats.draws} -{stats.losses}), "
        f"Elo {stats.elo:+.0f} [{stats.elo_low:+.0f}, {stats.elo_high:+.0f}]"
    )
    if rule == "ci_low_above":
        promote = stats.ci_low > threshold
        why = f"interval {stats.ci_low:.3f}-{stats.ci_high:.3f} {'above' if promote else 'not above'} {threshold}"
    else:
        promote = stats.score > threshold
        why = f"score {stats.score:.3f} {'above' if promote else 'not above'} {threshold}"
    if not promote and promote_all_draws and stats.draws == stats.games:
        promote, why = True, f"all {stats.games} games drawn: gate.promote_all_draws"
    return Decision(promote=promote, reason=f"{why}; {summary}", why=why)


def _completion_moments(partial: np.ndarray, remaining: int) -> tuple[np.ndarray, np.ndarray]:
    """Quarter-unit moments (qsum [K], qsq [K]) of the completions that bound the final decision.

    For each possible quarter sum m = 0..4R of the R remaining pairs the mean is fixed, and the t-based
    ci_low = mean - k * sd falls as the spread grows, so over completions with that sum it is extreme
    at the most even completion (values b and b+1, b = m // R) and the most extreme one (as many 4s as
    possible, one remainder, the rest 0), by majorisation. The most even completion may make every
    pair equal, where the Wilson fallback applies instead; it is a candidate itself. The best t-based
    completion with the same sum (one pair +1, one -1) never needs checking: the most even completion
    of sum m + 1 has a higher mean and a smaller spread, so its ci_low is higher. Exact (see tests).
    """
    m = np.arange(4 * remaining + 1, dtype=np.int64)  # [K/2] possible remaining quarter sums
    base, extra = np.divmod(m, remaining)
    even_sq = extra * (base + 1) ** 2 + (remaining - extra) * base**2
    fours, rest = np.divmod(m, 4)
    extreme_sq = 16 * fours + rest**2
    sums = np.concatenate([m, m])
    squares = np.concatenate([even_sq, extreme_sq])
    return sums + partial.sum(), squares + (partial * partial).sum()


def forced_decision(partial_pair_scores: np.ndarray, total_pairs: int, rule: str, threshold: float) -> bool | None:
    """The promotion decision if it no longer depends on the pairs still to play, else None.

    partial_pair_scores: [k] float pair means played so far; total_pairs: pairs in the full match.
    Exact: every possible result of the remaining pairs is covered (see _completion_moments).
    """
    _check_rule(rule, threshold)
    partial = _to_quarters(partial_pair_scores)
    remaining = total_pairs - partial.size
    if total_pairs < 1 or remaining < 0:
        raise StatsError(f"total_pairs ({total_pairs}) must be >= 1 and >= the pairs played ({partial.size})")
    if rule == "score_above":  # the score depends only on the sum: all-loss and all-win bound it
        qsum = partial.sum() + np.array([0, 4 * remaining])  # [2] quarter sums
        outcomes = qsum / (4.0 * total_pairs) > threshold
    elif remaining == 0:
        low = _interval_from_moments(total_pairs, np.array([partial.sum()]), np.array([(partial * partial).sum()]))[0]
        outcomes = low > threshold
    else:
        qsum, qsq = _completion_moments(partial, remaining)
        outcomes = _interval_from_moments(total_pairs, qsum, qsq)[0] > threshold
    if outcomes.all():
        return True
    if not outcomes.any():
        return False
    return None


def clear_decision(partial_pair_scores: np.ndarray, rule: str, threshold: float, confidence: float,
                   min_pairs: int = EARLY_STOP_MIN_PAIRS) -> tuple[bool | None, float, float]:
    """The sequential stop: (decision, low, high) where low-high is the interval at `confidence` of the mean of
    partial_pair_scores [k] float (pair means played so far); decision is True when the interval lies above
    `threshold`, False when below, None when it straddles it or fewer than `min_pairs` pairs were played.
    Either rule's decision on these pairs agrees: an interval above the threshold has its 95% interval and its
    mean above it too, and one below has both below."""
    _check_rule(rule, threshold)
    if not 0.5 < confidence < 1.0:
        raise StatsError(f"confidence must be in (0.5, 1), got {confidence}")
    partial = np.asarray(partial_pair_scores, np.float64).reshape(-1)
    if partial.size < max(2, min_pairs):
        return None, 0.0, 1.0
    low, high, _ = pair_interval(partial, confidence)
    if low > threshold:
        return True, low, high
    if high < threshold:
        return False, low, high
    return None, low, high


def early_stop_reason(partial_pair_scores: np.ndarray, total_pairs: int, rule: str, threshold: float,
                      draws_may_promote: bool = False, confidence: float | None = None) -> str | None:
    """Why a match of `total_pairs` pairs may stop after the pairs played so far (partial_pair_scores [k] float),
    as a phrase for its report, or None when it must go on: the exact stop (forced_decision), then, with
    `confidence`, the sequential one (clear_decision). draws_may_promote: promote_all_draws is set and every
    game so far was drawn, so a match that stays all drawn promotes and no rejection is final."""
    forced = forced_decision(partial_pair_scores, total_pairs, rule, threshold)
    if forced is not None and not (forced is False and draws_may_promote):
        return "the remaining pairs could not change the decision"
    if confidence is None:
        return None
    clear, low, high = clear_decision(partial_pair_scores, rule, threshold, confidence)
    if clear is None or (clear is False and draws_may_promote):
        return None
    return (f"the {100 * confidence:g}% interval of the pairs played, {low:.3f}-{high:.3f}, was already "
            f"{'above' if clear else 'below'} {threshold} (sequential stop: gate.early_stop_confidence)")


def can_stop_early(partial_pair_scores: np.ndarray, total_pairs: int, rule: str, threshold: float,
                   draws_may_promote: bool = False, confidence: float | None = None) -> bool:
    """True when early_stop_reason (same arguments) gives a reason to stop: without `confidence`, when no result
    of the remaining total_pairs - k pairs can change the decision of `decide_promotion(rule, threshold,
    promote_all_draws)` on the full match (best and worst cases checked exactly)."""
    return early_stop_reason(partial_pair_scores, total_pairs, rule, threshold, draws_may_promote,
                             confidence) is not None


def bootstrap_mean(values: np.ndarray, confidence: float = CONFIDENCE, resamples: int = 4000,
                   seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high) of values [N] float (one figure per position, e.g. a hit 0/1 averaged over an arm's seeds,
    or the paired difference of two arms) with a bootstrap percentile interval over the N positions
    (scipy.stats.bootstrap). Constant values give the interval (mean, mean); StatsError for no values."""
    values = np.asarray(values, np.float64)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
        raise StatsError(f"bootstrap_mean needs a non-empty 1-d array of finite values, got shape {values.shape}")
    mean = float(values.mean())
    if np.ptp(values) == 0:
        return mean, mean, mean
    result = scipy_stats.bootstrap((values,), np.mean, confidence_level=confidence, n_resamples=resamples,
                                   method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return mean, float(result.confidence_interval.low), float(result.confidence_interval.high)
