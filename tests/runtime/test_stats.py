"""Gate statistics: Elo, paired t intervals (checked against scipy and by hand), fallback, decisions,
exact early stopping (checked against brute-force enumeration of every completion) and the sequential stop
(its error rate simulated)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from shared.stats import (
    EARLY_STOP_MIN_PAIRS,
    StatsError,
    _interval_from_moments,
    can_stop_early,
    clear_decision,
    decide_promotion,
    early_stop_reason,
    elo_from_score,
    evaluate_pairs,
    forced_decision,
    pair_interval,
    paired_evaluation,
)

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _stats(pair_scores):
    """paired_evaluation with counts consistent with the pair scores (draws fill the half points)."""
    quarters = np.rint(np.asarray(pair_scores) * 4).astype(int)
    wins = int(sum(q // 2 for q in quarters))
    draws = int(sum(q % 2 for q in quarters))
    return paired_evaluation(pair_scores, wins=wins, draws=draws, losses=2 * len(quarters) - wins - draws)


def test_elo_known_numbers_and_inverse():
    assert elo_from_score(0.75) == pytest.approx(190.8485, abs=1e-4)  # 400 * log10(3)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.8485, abs=1e-4)
    for elo in (-500.0, -35.5, 0.0, 120.0, 800.0):
        assert elo_from_score(1.0 / (1.0 + 10.0 ** (-elo / 400.0))) == pytest.approx(elo)   # the expected score
    assert elo_from_score(1.0, games=100) == pytest.approx(elo_from_score(0.995))  # clipped to 1 - 0.5/games
    assert elo_from_score(0.0, games=100) == pytest.approx(-elo_from_score(0.995))
    with pytest.raises(StatsError, match="pass games to clip"):
        elo_from_score(1.0)


def test_t_interval_by_hand_and_against_scipy():
    scores = np.array([1.0, 0.5, 0.75, 0.5])
    # by hand: mean 0.6875, sample sd 0.239357, sem 0.119678, t_{0.975,3} = 3.182446, half-width 0.380865
    low, high, method = pair_interval(scores)
    assert method == "t"
    assert low == pytest.approx(0.6875 - 0.380865, abs=1e-5)
    assert high == 1.0  # 1.068 clipped to [0, 1]
    scores = np.array([1.0, 0.5, 0.75, 0.25, 0.5, 0.75, 0.5, 0.25])
    expected = scipy_stats.t.interval(0.95, len(scores) - 1, loc=scores.mean(), scale=scipy_stats.sem(scores))
    assert pair_interval(scores)[:2] == pytest.approx(expected)
    ttest = scipy_stats.ttest_1samp(scores, 0.5).confidence_interval(0.95)
    assert pair_interval(scores)[:2] == pytest.approx((ttest.low, ttest.high))


def test_paired_evaluation_fields():
    stats = _stats([1.0, 0.5, 0.75, 0.25, 0.5, 0.75, 0.5, 0.25])
    assert (stats.games, stats.pairs, stats.wins + stats.draws + stats.losses) == (16, 8, 16)
    assert stats.score == pytest.approx(0.5625)
    assert stats.ci_low < stats.score < stats.ci_high
    assert stats.elo == pytest.approx(elo_from_score(0.5625))
    assert stats.elo_low == pytest.approx(elo_from_score(stats.ci_low, 16))
    assert stats.elo_high == pytest.approx(elo_from_score(stats.ci_high, 16))
    as_dict = stats.to_dict()
    assert as_dict["interval"] == "t" and as_dict["games"] == 16 and isinstance(as_dict["score"], float)


def test_monotonicity():
    base = [0.5, 0.75, 0.25, 0.5, 1.0, 0.5]
    better = [0.75, 0.75, 0.25, 0.5, 1.0, 0.5]
    assert _stats(better).score > _stats(base).score and _stats(better).elo > _stats(base).elo
    scores = np.linspace(0.01, 0.99, 50)
    assert np.all(np.diff([elo_from_score(s) for s in scores]) > 0)
    # more pairs with the same spread give a narrower interval
    widths = [np.subtract(*pair_interval(np.tile(base, k))[1::-1]) for k in (1, 2, 4, 8)]
    assert all(a > b for a, b in zip(widths, widths[1:]))


def test_swapping_players_mirrors_everything():
    scores = np.array([1.0, 0.75, 0.5, 0.75, 0.25, 1.0, 0.5])
    a, b = _stats(scores), _stats(1.0 - scores)
    assert b.score == pytest.approx(1 - a.score)
    assert (b.ci_low, b.ci_high) == pytest.approx((1 - a.ci_high, 1 - a.ci_low))
    assert (b.elo, b.elo_low, b.elo_high) == pytest.approx((-a.elo, -a.elo_high, -a.elo_low))
    assert (b.wins, b.losses) == (a.losses, a.wins)


def test_pairing_narrows_the_interval_when_colour_matters():
    """Every opening is won by the first player half the time; A's edge shows as 0.75 pairs. Treating the
    40 games as independent inflates the variance with the colour effect the pairs cancel."""
    results = np.array([[1, -1]] * 10 + [[1, 0]] * 10)  # [P=20, 2] results from A's side
    paired = evaluate_pairs((results + 1) / 2.0)
    games = (results.reshape(-1) + 1) / 2.0  # [40] per-game scores
    independent = scipy_stats.t.interval(0.95, games.size - 1, loc=games.mean(), scale=scipy_stats.sem(games))
    assert paired.score == pytest.approx(games.mean()) == pytest.approx(0.625)
    assert paired.ci_high - paired.ci_low < 0.5 * (independent[1] - independent[0])
    assert paired.ci_low > 0.5 > independent[0]  # significant only when the pairing is used


def test_colour_split_counts_each_side_apart():
    """A wins every game with the first player's side and loses or draws with the second's: the per-side counts
    show it (column 0 of the game scores is A first), the totals cannot."""
    scores = np.array([[1.0, 0.0]] * 6 + [[1.0, 0.5]] * 3 + [[0.5, 0.0]])
    stats = evaluate_pairs(scores)
    assert stats.a_first == [9, 1, 0] and stats.a_second == [0, 3, 7]
    assert (stats.wins, stats.draws, stats.losses) == (9, 4, 7)
    assert stats.to_dict()["a_first"] == [9, 1, 0]
    assert _stats([0.5, 1.0]).a_first is None           # pair scores alone carry no colours


def test_degenerate_pairs_use_wilson_fallback():
    stats = _stats([1.0] * 50)
    z = scipy_stats.norm.ppf(0.975)
    assert stats.interval == "wilson"
    assert stats.ci_high == 1.0 and stats.ci_low == pytest.approx(50 / (50 + z * z))
    assert stats.elo == pytest.approx(elo_from_score(0.995))  # clipped to 1 - 0.5/100 games
    draws = _stats([0.5] * 10)
    assert draws.interval == "wilson" and draws.ci_low < 0.5 < draws.ci_high
    single = _stats([0.75])
    assert single.interval == "wilson" and 0 < single.ci_low < 0.75 < single.ci_high <= 1


def test_bad_input_is_rejected():
    with pytest.raises(StatsError, match="0, 0.25, 0.5, 0.75 or 1"):
        paired_evaluation([0.3], wins=1, draws=0, losses=1)
    with pytest.raises(StatsError, match="must equal 2 \\* pairs"):
        paired_evaluation([1.0, 0.5], wins=2, draws=0, losses=0)
    with pytest.raises(StatsError, match="pass the counts of the same games"):
        paired_evaluation([1.0, 0.5], wins=1, draws=2, losses=1)
    with pytest.raises(StatsError, match="no pairs played"):
        paired_evaluation([], wins=0, draws=0, losses=0)
    with pytest.raises(StatsError, match=r"\[P, 2\] array"):
        evaluate_pairs(np.array([1, 0, 0.5]))


def test_decide_promotion_rules():
    stats = _stats([1.0, 0.75, 0.75, 0.5, 0.75, 1.0, 0.5, 0.75, 0.75, 0.5])
    decision = decide_promotion(stats, "ci_low_above", 0.5)
    assert decision.promote and decision.reason.startswith("interval ") and "Elo" in decision.reason
    assert decision.why == f"interval {stats.ci_low:.3f}-{stats.ci_high:.3f} above 0.5"
    assert decision.reason.startswith(decision.why + "; score ")
    assert decide_promotion(stats, "ci_low_above", 0.7).why.endswith("not above 0.7")
    assert decide_promotion(stats, "score_above", 0.55).why == f"score {stats.score:.3f} above 0.55"
    assert not decide_promotion(stats, "ci_low_above", 0.7).promote
    assert decide_promotion(stats, "score_above", 0.55).promote
    weak = _stats([0.5, 0.75, 0.25, 0.5, 0.75, 0.5])
    assert decide_promotion(weak, "score_above", 0.5).promote
    assert not decide_promotion(weak, "ci_low_above", 0.5).promote
    with pytest.raises(StatsError, match="valid rules: ci_low_above, score_above"):
        decide_promotion(stats, "gut_feeling", 0.5)


def test_promote_all_draws_promotes_only_a_match_of_draws():
    drawn = paired_evaluation([0.5] * 10, wins=0, draws=20, losses=0)
    assert not decide_promotion(drawn, "ci_low_above", 0.5).promote
    decision = decide_promotion(drawn, "ci_low_above", 0.5, promote_all_draws=True)
    assert decision.promote and decision.why == "all 20 games drawn: gate.promote_all_draws"
    assert decision.reason.startswith(decision.why)
    balanced = paired_evaluation([0.5] * 10, wins=10, draws=0, losses=10)  # each pair one win, one loss
    assert not decide_promotion(balanced, "score_above", 0.5, promote_all_draws=True).promote
    losing = _stats([0.5] * 9 + [0.25])
    assert not decide_promotion(losing, "ci_low_above", 0.5, promote_all_draws=True).promote
    assert decide_promotion(_stats([1.0] * 10), "ci_low_above", 0.5, promote_all_draws=True).why.startswith("interval")


def test_early_stop_waits_while_an_all_drawn_match_could_still_promote():
    # 5 drawn pairs of 6: no completion lifts ci_low above 0.5, so the rule alone has rejected already
    assert forced_decision([0.5] * 5, 6, "ci_low_above", 0.5) is False
    assert can_stop_early([0.5] * 5, 6, "ci_low_above", 0.5)
    assert not can_stop_early([0.5] * 5, 6, "ci_low_above", 0.5, draws_may_promote=True)
    assert can_stop_early([1.0] * 40, 50, "ci_low_above", 0.5, draws_may_promote=True)  # a forced promotion stops


def _decisions_over_all_completions(partial, total, rule, threshold) -> set[bool]:
    decisions = set()
    for rest in itertools.combinations_with_replacement(LEVELS, total - len(partial)):  # order is irrelevant
        decisions.add(decide_promotion(_stats(list(partial) + list(rest)), rule, threshold).promote)
    return decisions


@pytest.mark.parametrize("rule,threshold", [("ci_low_above", 0.5), ("ci_low_above", 0.35), ("score_above", 0.55)])
def test_early_stop_matches_brute_force(rule, threshold):
    rng = np.random.default_rng(7)
    checked_forced = 0
    for _ in range(40):
        total = int(rng.integers(1, 8))
        played = int(rng.integers(0, total + 1))
        partial = list(rng.choice(LEVELS, size=played, p=[0.1, 0.15, 0.2, 0.25, 0.3]))
        if rng.random() < 0.3 and played:  # degenerate prefixes exercise the Wilson fallback
            partial = [partial[0]] * played
        possible = _decisions_over_all_completions(partial, total, rule, threshold)
        forced = forced_decision(partial, total, rule, threshold)
        assert (forced is None) == (len(possible) == 2), (partial, total)
        if forced is not None:
            assert possible == {forced}
            checked_forced += 1
        assert can_stop_early(partial, total, rule, threshold) == (forced is not None)
    assert checked_forced > 0


def test_early_stop_on_constructed_sequences():
    assert forced_decision([1.0] * 40, 50, "ci_low_above", 0.5) is True  # 10 losses cannot pull ci_low to 0.5
    assert forced_decision([1.0] * 30, 50, "ci_low_above", 0.5) is None  # 20 losses still could
    assert forced_decision([0.0] * 10, 20, "score_above", 0.55) is False  # even 10 wins give only 0.5
    assert forced_decision([0.5] * 5, 6, "score_above", 0.55) is None
    assert forced_decision([0.5, 0.5], 2, "score_above", 0.55) is False  # nothing left to play
    with pytest.raises(StatsError, match="total_pairs"):
        forced_decision([1.0] * 3, 2, "score_above", 0.5)
    assert math.isclose(1.0 / (1.0 + 10.0 ** (-elo_from_score(0.6) / 400.0)), 0.6)


def test_sequential_stop_on_constructed_sequences():
    assert clear_decision([1.0] * 20, "ci_low_above", 0.5, 0.999)[0] is True
    assert clear_decision([0.0] * 20, "score_above", 0.55, 0.999)[0] is False
    assert clear_decision([1.0] * (EARLY_STOP_MIN_PAIRS - 1), "ci_low_above", 0.5, 0.999)[0] is None   # too few
    mixed = [0.25, 0.75] * 30 + [1.0] * 5                      # mean 0.54: its 99.9% interval straddles 0.5
    decision, low, high = clear_decision(mixed, "ci_low_above", 0.5, 0.999)
    assert decision is None and (low, high) == pair_interval(mixed, 0.999)[:2] and low < 0.5 < high
    # 0.65 over 80 pairs: no completion is ruled out by the exact stop, the 99.9% interval is above 0.5
    strong = [1.0] * 34 + [0.75] * 10 + [0.5] * 16 + [0.25] * 10 + [0.0] * 10
    assert forced_decision(strong, 200, "ci_low_above", 0.5) is None
    assert early_stop_reason(strong, 200, "ci_low_above", 0.5) is None
    reason = early_stop_reason(strong, 200, "ci_low_above", 0.5, confidence=0.999)
    assert reason.startswith("the 99.9% interval of the pairs played") and "above 0.5" in reason
    assert can_stop_early(strong, 200, "ci_low_above", 0.5, confidence=0.999)
    with pytest.raises(StatsError, match="confidence"):
        clear_decision(strong, "ci_low_above", 0.5, 1.0)


def test_sequential_stop_never_rejects_a_match_that_may_still_promote_all_drawn():
    drawn = [0.5] * 400               # 99.9% interval about 0.42-0.58: clearly below 0.6
    assert clear_decision(drawn, "score_above", 0.6, 0.999)[0] is False
    assert early_stop_reason(drawn, 500, "score_above", 0.6, confidence=0.999) is not None
    assert early_stop_reason(drawn, 500, "score_above", 0.6, draws_may_promote=True, confidence=0.999) is None


def _simulated_gates(probabilities, matches: int, pairs: int, looks: list[int], confidence: float | None,
                     seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Matches of `pairs` pairs (pair scores in quarters drawn with `probabilities`), the ci_low_above 0.5 rule,
    a sequential look at `confidence` after each count of pairs in `looks`. Returns (decision [M] bool, pairs
    played [M] int, the decision of the full match [M] bool)."""
    rng = np.random.default_rng(seed)
    quarters = rng.choice(5, size=(matches, pairs), p=probabilities).astype(np.int64)
    qsum, qsq = np.cumsum(quarters, axis=1), np.cumsum(quarters * quarters, axis=1)
    full = _interval_from_moments(pairs, qsum[:, -1], qsq[:, -1])[0] > 0.5
    decision, played = full.copy(), np.full(matches, pairs)
    open_ = np.ones(matches, bool)
    for look in looks if confidence is not None else []:
        low, high, _ = _interval_from_moments(look, qsum[:, look - 1], qsq[:, look - 1], confidence)
        stop = open_ & ((low > 0.5) | (high < 0.5))
        decision[stop], played[stop] = low[stop] > 0.5, look
        open_ &= ~stop
    return decision, played, full


def test_sequential_stop_keeps_the_gates_error_rate():
    """Simulated 200-pair gates (the default 400 games) with a look after each 25 pairs (8 chunks): under the
    null (a candidate exactly as strong) the 99.9% looks add at most half a point of false promotions to the
    95% interval's ~2.5%, where 95% looks would more than double them; a clearly better candidate (0.6) gets the
    full match's decision in at least 99% of the gates, after about half the pairs."""
    looks = list(range(25, 200, 25))
    null = [0.15, 0.15, 0.4, 0.15, 0.15]
    final_only = _simulated_gates(null, 20_000, 200, looks, None, seed=1)[0].mean()
    sequential = _simulated_gates(null, 20_000, 200, looks, 0.999, seed=1)[0].mean()
    naive = _simulated_gates(null, 20_000, 200, looks, 0.95, seed=1)[0].mean()
    assert 0.015 < final_only < 0.035
    assert final_only <= sequential <= final_only + 0.005
    assert naive > 2 * final_only
    better = [0.08, 0.12, 0.35, 0.2, 0.25]                  # mean 0.605
    decision, played, full = _simulated_gates(better, 20_000, 200, looks, 0.999, seed=2)
    assert (decision == full).mean() >= 0.99 and played.mean() < 0.6 * 200
    print(f"\nnull: false promotions {final_only:.4f} (95% at the end only), {sequential:.4f} (99.9% looks), "
          f"{naive:.4f} (95% looks); 0.605: agrees with the full match {(decision == full).mean():.4f}, "
          f"{played.mean():.1f} of 200 pairs played")
