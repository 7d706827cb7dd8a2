"""`zeroforge bench ablation`: the arm syntax, the checks made before hours of running, the pooled and paired
statistics, the report; and (integration tier) two real tiny runs scored end to end."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cli import main
from cli.bench.ablation import (DONE_FILE, AblationError, Arm, Plan, RunFigures, ablation_oracle_set, arm_summary,
                                check_plan, copy_trunk, format_report, parse_arm, results_path, run_figures)
from shared.stats import StatsError, bootstrap_mean


def test_arms_are_a_name_and_settings() -> None:
    assert parse_arm("base") == Arm("base")
    assert parse_arm("cont: pipeline.overlap_selfplay=true  train.samples_per_position=13.3") == Arm(
        "cont", ("pipeline.overlap_selfplay=true", "train.samples_per_position=13.3"))
    assert parse_arm("q: pipeline.store='s3://b/p x'") == Arm("q", ("pipeline.store=s3://b/p x",))
    for bad in ("", "1st", "a-b: x=1", "a: 'open"):
        with pytest.raises(AblationError, match="--arm"):
            parse_arm(bad)


def _plan(tmp_path: Path, *arms: Arm, max_hours: float | None = 0.5) -> Plan:
    return Plan("tictactoe", tmp_path, max_hours, (0, 1), arms)


def test_the_plan_is_checked_before_anything_runs(tmp_path: Path) -> None:
    check_plan(_plan(tmp_path, Arm("a"), Arm("b", ("search.simulations=8",))))
    with pytest.raises(AblationError, match="distinct names"):
        check_plan(_plan(tmp_path, Arm("a"), Arm("a")))
    with pytest.raises(AblationError, match="arm b: .*unknown key 'simulation'"):
        check_plan(_plan(tmp_path, Arm("a"), Arm("b", ("search.simulation=8",))))
    with pytest.raises(AblationError, match="arm b: .*search.simulations"):
        check_plan(_plan(tmp_path, Arm("a"), Arm("b", ("search.simulations=-3",))))


def test_a_finished_run_of_other_settings_stops_the_ablation_before_it_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, Arm("a"), Arm("b", ("search.simulations=8",)))
    run_dir = plan.run_dir(plan.arms[1], 1)
    run_dir.mkdir(parents=True)
    record = {"arm": "b", "seed": 1, "settings": ["pipeline.seed=1", "search.simulations=4"], "max_hours": 0.5,
              "workers": None, "command": [], "returncode": 0, "minutes": 29.0, "finished": "then"}
    (run_dir / DONE_FILE).write_text(json.dumps(record))
    with pytest.raises(AblationError, match="b-s1 holds a finished run with settings"):
        check_plan(plan)
    check_plan(_plan(tmp_path, Arm("a"), Arm("b", ("search.simulations=8",)), max_hours=None))   # scoring only
    record["settings"] = ["pipeline.seed=1", "search.simulations=8"]
    (run_dir / DONE_FILE).write_text(json.dumps(record))
    check_plan(plan)


def _trunk(root: Path, seed: int) -> Path:
    """A data directory with a tic-tac-toe best model (version 1), as a finished run leaves one."""
    from services.initial_model import ensure_initial_model
    from shared.config import PipelineConfig, load_config
    from shared.layout import DataLayout

    trunk = root / f"trunk-s{seed}"
    layout = DataLayout(trunk, "tictactoe")
    ensure_initial_model(layout, load_config(PipelineConfig, "tictactoe", env=None).game, seed)
    layout.data_id()
    return trunk


def test_trunks_are_checked_before_anything_runs(tmp_path: Path) -> None:
    arms = (Arm("a"), Arm("b", ("train.learning_rate=0.001",)))
    plan = Plan("tictactoe", tmp_path / "out", 0.5, (0, 1), arms, trunk=str(tmp_path / "trunk-s{seed}"))
    with pytest.raises(AblationError, match=r"trunk .*trunk-s0 holds no trained tictactoe model; make it with "
                                            r"`zeroforge run --game tictactoe --data-dir .*trunk-s0 --set pipeline.seed=0"):
        check_plan(plan)
    _trunk(tmp_path, 0)
    with pytest.raises(AblationError, match="trunk-s1 holds no trained"):
        check_plan(plan)
    _trunk(tmp_path, 1)
    check_plan(plan)
    with pytest.raises(AblationError, match=r"with several seeds each needs its own trunk; put \{seed\} in the path"):
        check_plan(Plan("tictactoe", tmp_path / "out", 0.5, (0, 1), arms, trunk=str(tmp_path / "trunk-s0")))
    check_plan(Plan("tictactoe", tmp_path / "out", 0.5, (0,), arms, trunk=str(tmp_path / "trunk-s0")))   # one seed


_GENERATION = {"time": "2026-12-06T09:00:00+00:00", "games": 8, "positions": 60, "first_player_wins": 3, "draws": 2,
               "second_player_wins": 3}


def test_a_run_from_a_trunk_starts_as_its_copy_and_counts_its_own_generations(tmp_path: Path) -> None:
    from shared.layout import DataLayout, redis_url_file

    trunk = _trunk(tmp_path, 0)
    metrics = DataLayout(trunk, "tictactoe").metrics_path
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.write_text("".join(json.dumps({**_GENERATION, "generation": g, "promoted": True, "generation_seconds": 60.0,
                                           "worker_selfplay_s": 50.0, "worker_train_s": 10.0}) + "\n"
                               for g in (1, 2, 3)))
    (trunk / DONE_FILE).write_text("{}")
    redis_url_file(trunk).write_text("redis://:pw@127.0.0.1:1/0")
    plan = Plan("tictactoe", tmp_path / "out", 0.5, (0,), (Arm("a"),), trunk=str(trunk))
    run_dir = plan.run_dir(plan.arms[0], 0)
    said: list[str] = []
    assert copy_trunk(plan, trunk, run_dir, said.append) == 3
    assert said == [f"a-s0: continues trunk {trunk} (3 generations)"]
    assert (run_dir / "zeroforge-id").read_text() == (trunk / "zeroforge-id").read_text()
    assert not (run_dir / DONE_FILE).exists() and not redis_url_file(run_dir).exists()
    assert not run_dir.with_name("a-s0.copying").exists()
    with DataLayout(run_dir, "tictactoe").metrics_path.open("a") as handle:     # the continued run's generation
        handle.write(json.dumps({**_GENERATION, "generation": 4, "promoted": False, "generation_seconds": 120.0,
                                 "worker_selfplay_s": 20.0, "worker_train_s": 80.0}) + "\n")
    record = {"arm": "a", "seed": 0, "settings": ["pipeline.seed=0"], "max_hours": 0.5, "workers": None,
              "command": [], "returncode": 0, "minutes": 2.0, "finished": "then", "trunk": str(trunk),
              "trunk_generations": 3}
    (run_dir / DONE_FILE).write_text(json.dumps(record))
    figures = run_figures(plan, plan.arms[0], 0)
    assert (figures.generations, figures.promoted, figures.minutes) == (1, 0, 2.0)
    assert figures.selfplay_share == pytest.approx(0.2)
    assert [point["minutes"] for point in figures.curve] == [1.0, 2.0, 3.0, 5.0]   # the curve keeps the trunk's
    check_plan(plan)
    with pytest.raises(AblationError, match="trunk .*; this ablation asks for .*, None: use another --out"):
        check_plan(Plan("tictactoe", tmp_path / "out", 0.5, (0,), (Arm("a"),)))


def test_commands_put_the_arms_settings_last() -> None:
    plan = Plan("connect4", Path("/x"), 0.25, (3,), (Arm("b", ("search.simulations=8",)),),
                ("search.simulations=16", "gate.games=100"), workers=1)
    command = plan.command(plan.arms[0], 3)
    assert command[3:] == ["run", "--game", "connect4", "--max-hours", "0.25", "--data-dir", "/x/b-s3",
                           "--workers", "1", "--set", "pipeline.seed=3", "--set", "search.simulations=16",
                           "--set", "gate.games=100", "--set", "search.simulations=8"]
    assert plan.runs() == [(plan.arms[0], 3)]


def test_bootstrap_mean() -> None:
    values = np.r_[np.ones(70), np.zeros(30)]
    mean, low, high = bootstrap_mean(values)
    assert mean == pytest.approx(0.7) and 0.6 < low < 0.7 < high < 0.8
    assert bootstrap_mean(np.full(9, 0.25)) == (0.25, 0.25, 0.25)
    assert bootstrap_mean(values, seed=3) == bootstrap_mean(values, seed=3)
    for bad in (np.zeros(0), np.array([0.5, np.nan]), np.zeros((2, 2))):
        with pytest.raises(StatsError):
            bootstrap_mean(bad)


def _run(arm: str, seed: int, raw: np.ndarray) -> RunFigures:
    return RunFigures(arm, seed, "000003", 4, 30.0, 3, 0.3, None,
                      [{"generation": 1, "minutes": 7.0, "raw": 0.6, "search": 0.7}],
                      {"raw": raw.astype(bool), "search": np.ones(raw.size, bool)})


def test_arms_pool_their_seeds_and_differences_are_paired_by_position() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(400) < 0.7
    flips = np.zeros(400, bool)
    flips[:40] = True                                                        # b keeps 40 more positions
    b = base | flips
    runs = [_run("a", 0, base), _run("a", 1, base), _run("b", 0, b), _run("b", 1, base)]
    summary = arm_summary(runs, ["a", "b"], resamples=2000)
    assert summary["arms"]["a"]["runs"] == 2
    assert summary["arms"]["a"]["raw"][0] == pytest.approx(base.mean())
    assert summary["arms"]["b"]["raw"][0] == pytest.approx((b.mean() + base.mean()) / 2)
    diff = summary["differences"]["b - a"]["raw"]
    assert diff[0] == pytest.approx(((b & ~base).sum() / 2) / 400)
    assert 0 < diff[1] <= diff[0] <= diff[2]                                 # paired: the noise of base cancels
    assert summary["differences"]["b - a"]["search"] == (0.0, 0.0, 0.0)
    matches = {"b - a": {"games": 400, "seeds": [0, 1], "score": 0.56, "ci_low": 0.52, "ci_high": 0.6, "elo": 41.9,
                         "per_seed": {0: 0.58, 1: 0.54}}}
    report = format_report(Plan("connect4", Path("/x"), 0.5, (0, 1), (Arm("a"), Arm("b"))), runs, summary, 400, 16,
                           matches)
    assert "a-s0" in report and "b - a" in report and "16 simulations" in report and "budget 0.5 h per run" in report
    assert "0.560 [0.520, 0.600]  +42  s0 0.580, s1 0.540" in report


def test_a_saved_set_file_replaces_the_built_set_and_keeps_its_own_results_file(tmp_path: Path) -> None:
    from shared.games import make_game
    from shared.games.oracle_set import save_oracle_set
    from shared.games.tictactoe.oracle import oracle_set

    plan = Plan("tictactoe", tmp_path, None, (0,), (Arm("a"),))
    saved = oracle_set(make_game("tictactoe"), 30, 7)
    save_oracle_set(tmp_path / "strong.npz", saved)
    loaded = ablation_oracle_set(plan, 400, 1000, lambda _: None, tmp_path / "strong.npz")
    assert np.array_equal(loaded.states, saved.states) and not (tmp_path / "oracle-400-s1000.npz").exists()
    assert results_path(plan, None) == tmp_path / "ablation.json"
    assert results_path(plan, tmp_path / "strong.npz") == tmp_path / "ablation-on-strong.json"
    with pytest.raises(AblationError, match="no such file.*--from-shards"):
        ablation_oracle_set(plan, 400, 1000, lambda _: None, tmp_path / "missing.npz")
    other = Plan("connect4", tmp_path, None, (0,), (Arm("a"),))
    with pytest.raises(AblationError, match="not a readable oracle set of connect4"):
        ablation_oracle_set(other, 400, 1000, lambda _: None, tmp_path / "strong.npz")
    runs = [RunFigures("a", 0, "000002", 1, 1.0, 1, None, None, [], {"raw": np.ones(30, dtype=bool)})]
    summary = arm_summary(runs, ["a"], resamples=200)
    assert "on one oracle set of 30 positions (strong.npz)" in format_report(plan, runs, summary, 30, 16, None,
                                                                            " (strong.npz)")


@pytest.mark.e2e
def test_two_tiny_arms_run_and_score_end_to_end(tmp_path: Path) -> None:
    """Two real `zeroforge run`s of tic-tac-toe (one generation each), scored on 60 minimax-labelled positions; a
    second call runs nothing again and gives the same figures."""
    out = tmp_path / "abl"
    args = ["bench", "ablation", "--game", "tictactoe", "--out", str(out), "--max-hours", "0.005", "--seeds", "0",
            "--arm", "base", "--arm", "few: search.simulations=4", "--positions", "60", "--match-games", "20",
            "--set", "selfplay.games_per_job=16", "--set", "train.steps_per_generation=20",
            "--set", "gate.games=20", "--set", "gate.anchor=none", "--set", "pipeline.oracle_positions=0"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    for name in ("base-s0", "few-s0"):
        assert (out / name / DONE_FILE).exists() and (out / f"{name}.log").exists()
    saved = json.loads((out / "ablation.json").read_text())
    assert [(r["arm"], r["seed"]) for r in saved["runs"]] == [("base", 0), ("few", 0)]
    assert all(len(r["hits"]["raw"]) == 60 and r["generations"] >= 1 for r in saved["runs"])
    assert set(saved["summary"]["arms"]) == {"base", "few"} and "few - base" in saved["summary"]["differences"]
    assert "on one oracle set of 60 positions" in first.output
    assert saved["head_to_head"]["few - base"]["games"] == 20 and "head to head" in first.output
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "base-s0: finished before" in again.output and "running zeroforge" not in again.output
    assert json.loads((out / "ablation.json").read_text())["summary"] == saved["summary"]
    (out / "oracle-60-s1000.npz").rename(tmp_path / "second.npz")     # a second set, scored without running
    rescored = CliRunner().invoke(main, [*args[:6], "--no-run", "--arm", "base", "--arm", "few: search.simulations=4",
                                         "--seeds", "0", "--set-file", str(tmp_path / "second.npz")])
    assert rescored.exit_code == 0, rescored.output
    assert "on one oracle set of 60 positions (second.npz)" in rescored.output
    second = json.loads((out / "ablation-on-second.json").read_text())
    assert second["oracle"]["set_file"] == str(tmp_path / "second.npz") and second["summary"] == saved["summary"]
    assert json.loads((out / "ablation.json").read_text())["summary"] == saved["summary"]
    # the first ablation's base run as the trunk of another: its run continues a copy of it
    base_generations = saved["runs"][0]["generations"]
    continued = CliRunner().invoke(main, ["bench", "ablation", "--game", "tictactoe", "--out", str(tmp_path / "cont"),
                                          "--max-hours", "0.005", "--seeds", "0", "--trunk", str(out / "base-s{seed}"),
                                          "--arm", "lr: train.learning_rate=0.001", *args[14:]])
    assert continued.exit_code == 0, continued.output
    assert f"lr-s0: continues trunk {out / 'base-s0'} ({base_generations} generations)" in continued.output
    record = json.loads((tmp_path / "cont" / "lr-s0" / DONE_FILE).read_text())
    assert record["trunk"] == str(out / "base-s0") and record["trunk_generations"] == base_generations
    run = json.loads((tmp_path / "cont" / "ablation.json").read_text())["runs"][0]
    assert run["generations"] >= 1 and len(run["curve"]) == base_generations + run["generations"]
    assert json.loads((out / "base-s0" / DONE_FILE).read_text())["trunk"] is None   # the trunk itself is untouched
