"""services.gatekeeper: opening chunks, a real match job, and the merged report with its decision."""
from __future__ import annotations

import pytest

from flows.gate import gate_line, gate_table_row, report_markdown
from services.gatekeeper import match_job, summarize_match
from shared.players.match import split_openings
from tests.services.conftest import match_payload


@pytest.mark.parametrize("openings, jobs", [(1, 1), (5, 2), (10, 3), (7, 7), (3, 8), (200, 4)])
def test_split_openings_covers_every_index_once(openings: int, jobs: int) -> None:
    chunks = split_openings(openings, jobs)
    flat = [i for chunk in chunks for i in chunk]
    assert sorted(flat) == list(range(openings))
    assert len(chunks) == min(openings, jobs) and all(chunks)
    assert max(map(len, chunks)) - min(map(len, chunks)) <= 1  # balanced


def test_random_against_minimax_never_beats_perfect_play(layout, context, config) -> None:
    chunk = match_job(match_payload(layout, config, "random", "minimax", [0, 2, 3], 4, seed=1), context)
    assert [p["opening"] for p in chunk["pairs"]] == [0, 2, 3]
    assert all(len(p["scores"]) == 2 and set(p["scores"]) <= {0.0, 0.5, 1.0} for p in chunk["pairs"])
    assert all(s < 1.0 for p in chunk["pairs"] for s in p["scores"]), "minimax lost a game of tic-tac-toe"


def test_match_between_registry_versions(layout, context, config, initial_version) -> None:
    chunk = match_job(match_payload(layout, config, initial_version, "best", [1], 2), context)
    # "best" resolves through the registry to the same version: a network match with the openings' global indices
    assert [p["opening"] for p in chunk["pairs"]] == [1] and len(chunk["pairs"][0]["scores"]) == 2
    assert chunk["seconds"] >= 0


def _chunk(pair_scores: list[list[float]], first_opening: int = 0) -> dict:
    """A match_job-shaped result from per-pair scores (A's view)."""
    return {"pairs": [{"opening": first_opening + i, "scores": s} for i, s in enumerate(pair_scores)], "seconds": 0.1}


def test_summary_merges_chunks() -> None:
    a = _chunk([[1.0, 0.5], [0.0, 1.0]], first_opening=0)
    b = _chunk([[0.5, 0.5]], first_opening=2)
    report = summarize_match([b, a], "score_above", 0.5)
    assert (report["games"], report["pairs"]) == (6, 3)
    assert (report["wins"], report["draws"], report["losses"]) == (2, 3, 1)
    assert report["score"] == pytest.approx(3.5 / 6)
    assert 0.0 <= report["ci_low"] <= report["score"] <= report["ci_high"] <= 1.0
    assert report["promote"] is True and report["rule"] == "score_above" and "score" in report["reason"]


def test_all_pairs_won_promotes() -> None:
    report = summarize_match([_chunk([[1.0, 1.0]] * 10), _chunk([[1.0, 1.0]] * 10, first_opening=10)],
                             "ci_low_above", 0.5)
    assert report["score"] == 1.0 and report["ci_low"] > 0.5 and report["promote"] is True
    assert report["elo"] > 0


def test_all_pairs_drawn_is_rejected() -> None:
    report = summarize_match([_chunk([[0.5, 0.5]] * 20)], "ci_low_above", 0.5)
    assert report["score"] == 0.5 and report["promote"] is False
    assert report["why"] == f"interval {report['ci_low']:.3f}-{report['ci_high']:.3f} not above 0.5"
    assert report["reason"].startswith(report["why"] + "; score 0.500")


def test_all_pairs_drawn_promotes_with_promote_all_draws() -> None:
    report = summarize_match([_chunk([[0.5, 0.5]] * 20)], "ci_low_above", 0.5, promote_all_draws=True)
    assert report["promote"] is True and report["why"] == "all 40 games drawn: gate.promote_all_draws"
    # a pair of one win and one loss scores 0.5 too, but it is not a drawn match: the rule decides
    split = summarize_match([_chunk([[0.5, 0.5]] * 19 + [[1.0, 0.0]])], "ci_low_above", 0.5, promote_all_draws=True)
    assert split["score"] == 0.5 and split["promote"] is False


def test_a_narrow_win_passes_score_above_but_not_the_interval_rule() -> None:
    pairs = [[1.0, 0.5]] * 3 + [[0.5, 0.5]] * 5 + [[0.0, 0.5]] * 2  # score 0.525 over 10 pairs
    by_score = summarize_match([_chunk(pairs)], "score_above", 0.5)
    by_interval = summarize_match([_chunk(pairs)], "ci_low_above", 0.5)
    assert by_score["score"] == pytest.approx(0.525)
    assert by_score["promote"] is True and by_interval["promote"] is False


@pytest.mark.parametrize("anchor", ["weights", "gnugo:1", "pure-mcts:1000", "minimax", "shipped", "000012"])
def test_match_jobs_accept_every_fixed_player_an_anchor_may_name(layout, config, anchor) -> None:
    """Every player spec the config accepts as gate.anchor travels in a match job (a file path never does)."""
    assert match_payload(layout, config, "000001", anchor, [0], 1)["player_b"] == anchor


@pytest.mark.parametrize("player", ["models/x.pt", "nonsense", "pure-mcts:0"])
def test_match_jobs_refuse_files_and_unknown_players(layout, config, player) -> None:
    with pytest.raises(ValueError, match=player.split(":")[0].split("/")[0]):
        match_payload(layout, config, "000001", player, [0], 1)


def test_gate_line_says_why_it_promoted_or_rejected() -> None:
    ids = {"generation": 3, "candidate": "000004", "best": "000003"}
    drawn = {**summarize_match([_chunk([[0.5, 0.5]] * 20)], "ci_low_above", 0.5, promote_all_draws=True), **ids}
    assert gate_line(drawn) == (f"gen 3 gate 000004 vs 000003: W/D/L 0/40/0, score 0.500 [{drawn['ci_low']:.3f}, "
                                f"{drawn['ci_high']:.3f}], Elo +0 -> PROMOTE (all 40 games drawn: gate.promote_all_draws)")
    assert drawn["reason"].startswith(drawn["why"])          # the registry records the same cause, with figures
    weak = {**summarize_match([_chunk([[0.5, 0.0]] * 10 + [[1.0, 0.5]] * 6)], "score_above", 0.55), **ids}
    assert gate_line(weak).endswith(f"-> reject (score {weak['score']:.3f} not above 0.55)")


def test_an_early_stopped_gate_says_after_how_many_pairs_and_why() -> None:
    ids = {"generation": 2, "candidate": "000003", "best": "000002"}
    reason = "the 99.9% interval of the pairs played, 0.550-0.930, was already above 0.5 (sequential stop: ...)"
    report = {**summarize_match([_chunk([[1.0, 1.0]] * 20 + [[1.0, 0.0]] * 5)], "ci_low_above", 0.5), **ids,
              "early_stopped": True, "early_reason": reason, "planned_pairs": 200}
    assert "W/D/L 45/0/5 (stopped after 25 of 200 pairs), score" in gate_line(report)
    assert f"Stopped early after 25 of 200 pairs: {reason}." in report_markdown("Generation 2 gate", report)
    exact = {**report, "early_reason": None}
    assert "pairs: the remaining pairs could not change the decision." in report_markdown("gate", exact)


def test_gate_table_row_is_rounded_with_short_columns() -> None:
    report = summarize_match([_chunk([[1.0, 0.5], [0.0, 1.0], [1.0, 1.0], [0.5, 0.0], [1.0, 0.5]])],
                             "score_above", 0.5)
    row = gate_table_row(report)
    assert list(row) == ["games", "W/D/L", "score", "95% CI", "Elo", "Elo 95% CI", "decision"]
    assert row["score"] == round(report["score"], 3) and len(str(row["score"])) <= 5
    assert row["95% CI"] == f"{report['ci_low']:.3f}-{report['ci_high']:.3f}"
    assert row["Elo"] == f"{round(report['elo']):+d}" and " to " in row["Elo 95% CI"]
    assert (row["W/D/L"], row["decision"]) == ("5/3/2", "promote")
