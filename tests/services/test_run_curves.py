"""The per-run curves: the metrics file, the per-generation TensorBoard scalars, the plots' integer generation
axes and the curves artifact's markdown (the functions the generation flow calls, called directly)."""
from __future__ import annotations

import base64
import json
import logging
from pathlib import Path

import pytest

from flows.curves import generation_metrics
from flows.curves_plot import TABLE_ROWS, curves_figure, curves_markdown, write_curves_plot
from flows.naming import artifact_key
from flows.strength_plot import StrengthPoint, strength_figure
from shared.curves import GenerationMetrics, ScalarWriter, append_metrics, read_metrics
from shared.layout import DataLayout

SELFPLAY = {"games": 96, "positions": 864, "first_player_wins": 50, "draws": 30, "second_player_wins": 16,
            "new_games": 48, "new_positions": 432, "seconds": 12.0}
TRAINING = {"version": "000002", "parent": "000001", "generation": 1, "reused": False, "steps": 120,
            "batch_size": 64, "positions": 864, "shards": [], "bad_shards": [], "loss": 2.5, "policy_loss": 2.0,
            "value_loss": 0.5, "first_loss": 3.1, "seconds": 4.0, "device": "cpu"}
GATE = {"games": 400, "wins": 150, "draws": 120, "losses": 130, "score": 0.525, "ci_low": 0.49, "ci_high": 0.56,
        "elo": 17.4, "elo_low": -7.0, "elo_high": 42.0, "promote": True, "candidate": "000002", "best": "000001"}
ANCHOR = {"opponent": "minimax", "games": 20, "wins": 2, "draws": 10, "losses": 8, "score": 0.35, "ci_low": 0.2,
          "ci_high": 0.5, "elo": -108.0, "elo_low": -241.0, "elo_high": 0.0}


def _record(generation: int, promoted: bool = True, anchor: dict | None = ANCHOR) -> GenerationMetrics:
    decision = {"promoted": promoted, "best": "000002", "anchor": anchor if promoted else None}
    return generation_metrics(generation, SELFPLAY, {**TRAINING, "loss": 2.5 - 0.1 * generation}, GATE, decision)


def test_a_generation_record_holds_speed_length_results_losses_gate_and_anchor() -> None:
    r = _record(3)
    assert (r.generation, r.games, r.positions, r.draws) == (3, 96, 864, 30)
    assert r.games_per_s == pytest.approx(48 / 12.0) and r.positions_per_s == pytest.approx(432 / 12.0)
    assert r.mean_game_length == pytest.approx(9.0) and r.first_player_win_rate == pytest.approx(50 / 96)
    assert (r.loss, r.policy_loss, r.value_loss, r.replay_positions) == (pytest.approx(2.2), 2.0, 0.5, 864)
    assert (r.gate_score, r.gate_ci_low, r.gate_ci_high, r.promoted) == (0.525, 0.49, 0.56, True)
    assert (r.anchor, r.anchor_elo, r.anchor_elo_low, r.anchor_elo_high) == ("minimax", -108.0, -241.0, 0.0)
    rejected = _record(4, promoted=False)
    assert rejected.promoted is False and rejected.anchor_elo is None and rejected.scalars()["gate/promoted"] == 0


def test_reused_shards_give_no_speed() -> None:
    r = generation_metrics(1, {**SELFPLAY, "new_games": 0, "new_positions": 0, "seconds": 0.2}, TRAINING, GATE,
                           {"promoted": False, "best": "000001"})
    assert r.games_per_s is None and r.positions_per_s is None and r.games == 96


def test_the_metrics_file_keeps_one_record_per_generation_and_skips_damaged_lines(tmp_path: Path, caplog) -> None:
    path = tmp_path / "reports" / "generations.jsonl"
    assert read_metrics(path) == []
    for generation in (1, 2):
        append_metrics(path, _record(generation))
    append_metrics(path, _record(2, promoted=False))        # generation 2 recorded again after a resume
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"generation": 3, "time": "x", "games": \n')  # a line cut short by a crash
    with caplog.at_level(logging.WARNING):
        records = read_metrics(path)
    assert [r.generation for r in records] == [1, 2] and records[1].promoted is False
    assert any("damaged line 4" in r.getMessage() for r in caplog.records)
    assert json.loads(path.read_text().splitlines()[0])["gate_score"] == 0.525


def test_generation_scalars_are_readable_from_tensorboard(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard", reason="the [tensorboard] extra is part of [test]")
    from tests.services.test_training_curves import _scalars

    run_dir = DataLayout(tmp_path, "tictactoe").tensorboard_run_dir
    for record in (_record(1), _record(2, promoted=False)):   # the flow opens a writer per generation
        writer = ScalarWriter(run_dir)
        writer.write(record.generation, record.scalars())
        writer.close()
    curves = _scalars(run_dir)
    assert {"selfplay/games_per_s", "selfplay/positions_per_s", "selfplay/mean_game_length",
            "selfplay/first_player_win_rate", "selfplay/draws", "gate/score", "gate/ci_low", "gate/ci_high",
            "gate/promoted", "anchor/elo", "anchor/elo_low", "anchor/elo_high",
            "generation/replay_window_positions", "generation/loss"} <= set(curves)
    assert curves["gate/promoted"] == [(1, 1.0), (2, 0.0)]
    assert [step for step, _ in curves["anchor/elo"]] == [1]      # no anchor match in generation 2
    assert curves["selfplay/mean_game_length"][0][1] == pytest.approx(9.0)


def _integer_ticks(fig) -> list[list[float]]:
    return [list(ax.get_xticks()) for ax in fig.axes]


@pytest.mark.parametrize("generations", [[1], [1, 2], [1, 2, 3, 4, 5, 6, 7]])
def test_every_plot_has_whole_generation_ticks(generations: list[int]) -> None:
    import matplotlib.pyplot as plt

    curves = curves_figure([_record(g, promoted=g % 2 == 1) for g in generations], "t")
    points = [StrengthPoint(f"{g:06d}", g, 10.0 * g, "minimax", 0.4, -70.0, -120.0, -20.0) for g in generations]
    strength = strength_figure(points, "t")
    for fig in (curves, strength):
        fig.canvas.draw()
        for ticks in _integer_ticks(fig):
            assert ticks and all(float(t).is_integer() for t in ticks), ticks
        plt.close(fig)


def test_the_artifact_shows_the_table_and_the_png_inline(tmp_path: Path) -> None:
    records = [_record(g, promoted=g != 2) for g in range(1, TABLE_ROWS + 3)]
    png = write_curves_plot(records, tmp_path / "curves.png", "tictactoe training curves")
    markdown = curves_markdown(records, png, "tictactoe training curves")
    assert markdown.startswith("## tictactoe training curves")
    assert f"the newest {TABLE_ROWS} of {TABLE_ROWS + 2}" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [int(row.split("|")[1]) for row in rows] == list(range(3, TABLE_ROWS + 3))
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert table[0] == "| gen | games/s | length | loss | gate [95% CI] | promoted | anchor Elo [95% CI] |"
    assert max(map(len, table)) <= 85, table   # short headers and figures: fits the artifact page at 1280 px
    assert "| 4.00 | 9.0 | 2.200 |" in rows[0] and "0.525 [0.490, 0.560]" in rows[0] and "-108 [-241, +0]" in rows[0]
    encoded = markdown.split("data:image/png;base64,")[1].split(")")[0]
    assert base64.b64decode(encoded) == png.read_bytes() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert write_curves_plot([], tmp_path / "none.png", "t") is None and "data:image" not in curves_markdown([], None, "t")


def test_the_artifact_key_is_per_data_directory(tmp_path: Path) -> None:
    one, two = DataLayout(tmp_path / "a", "gomoku-8x8_5"), DataLayout(tmp_path / "b", "gomoku-8x8_5")
    key = artifact_key(one.game_name, one.root, "curves")
    assert key == f"gomoku-8x8-5-{one.data_id()[:6]}-curves" and key != artifact_key(two.game_name, two.root, "curves")


def test_hours_of_training_sum_the_generations_durations_and_estimate_old_records() -> None:
    from shared.curves import elapsed_hours

    timed = [_record(g).model_copy(update={"generation_seconds": 1800.0}) for g in (1, 2, 3)]
    assert [(h.generation, h.hours, h.estimated) for h in elapsed_hours(timed)] == [
        (1, 0.5, False), (2, 1.0, False), (3, 1.5, False)]
    # records from before generation_seconds: the time since the previous record (pauses included), the first
    # record's self-play time; once estimated, every later total is marked estimated
    old = [_record(g).model_copy(update={"time": f"2026-01-01T0{g}:00:00+00:00"}) for g in (1, 2)]
    mixed = old + [timed[2]]
    hours = elapsed_hours(mixed)
    assert hours[0].hours == pytest.approx(12.0 / 3600) and hours[0].estimated
    assert hours[1].hours == pytest.approx(1.0 + 12.0 / 3600) and hours[1].estimated
    assert hours[2].hours == pytest.approx(1.5 + 12.0 / 3600) and hours[2].estimated
    # with the run's start, the first record counts from it
    from datetime import datetime
    started = datetime.fromisoformat("2026-01-01T00:30:00+00:00")
    assert elapsed_hours(old, started)[0].hours == pytest.approx(0.5)


def test_the_anchor_interval_is_stored_and_recovered_from_elo_for_old_records() -> None:
    from shared.stats import elo_from_score, score_from_elo

    r = _record(1, anchor={**ANCHOR, "ci_low": 0.21, "ci_high": 0.49})
    assert r.anchor_interval == (0.21, 0.49)
    old = r.model_copy(update={"anchor_ci_low": None, "anchor_ci_high": None})
    low, high = old.anchor_interval
    assert low == pytest.approx(score_from_elo(-241.0)) and high == pytest.approx(0.5)
    assert score_from_elo(elo_from_score(0.3)) == pytest.approx(0.3)
    assert _record(2, promoted=False).anchor_interval is None


def test_the_anchor_hours_plot_is_a_png_and_skips_runs_without_an_anchor(tmp_path: Path) -> None:
    from flows.strength_plot import write_anchor_hours_plot

    records = [_record(g).model_copy(update={"generation_seconds": 600.0}) for g in (1, 2)]
    png = write_anchor_hours_plot(records, tmp_path / "hours.png", "test")
    assert png is not None and png.read_bytes().startswith(b"\x89PNG")
    assert write_anchor_hours_plot([_record(1, anchor=None)], tmp_path / "none.png", "test") is None
    assert not (tmp_path / "none.png").exists()
