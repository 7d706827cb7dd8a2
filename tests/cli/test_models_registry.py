"""`zeroforge models` promote --force, rollback to retired, history with who and why, and the lineage tree."""
from __future__ import annotations

import json
import sys

import pytest

from cli.model_views import lineage_json
from cli.models import models
from shared.layout import DataLayout
from shared.registry import ModelRegistry, default_actor
from tests.cli.conftest import one_line_error

ANCHOR = {"opponent": "pure-mcts:200", "games": 20, "score": 0.8, "ci_low": 0.7, "ci_high": 0.9, "elo": 240.8,
          "elo_low": 150.0, "elo_high": 380.0}


@pytest.fixture
def registry(tictactoe_registry) -> ModelRegistry:
    """The tic-tac-toe registry of the tictactoe_registry data root: 000001 best, 000002 a candidate from it
    whose gate passed (with an anchor match), 000003 a candidate from 000002 without a gate result."""
    registry = ModelRegistry(DataLayout(tictactoe_registry, "tictactoe").registry_dir)
    model = registry.get(1).path
    registry.register(model, parent="000001", generation=1)
    registry.set_gate_result("2", {"score": 0.625, "ci_low": 0.51, "ci_high": 0.73, "elo": 88.7, "games": 40,
                                   "best": "000001", "promote": True, "anchor": ANCHOR})
    registry.register(model, parent="000002", generation=2)
    return registry


def _run(runner, registry: ModelRegistry, *args: str):
    result = runner.invoke(models, [*args, "--data-dir", str(registry.directory.parents[2])])
    assert result.exit_code == 0, result.output
    return result


def test_promote_needs_force_for_a_version_that_never_passed_a_gate(runner, registry):
    root = ["--data-dir", str(registry.directory.parents[2])]
    one_line_error(runner.invoke(models, ["promote", "3", *root]), "never passed a gate")
    one_line_error(runner.invoke(models, ["promote", "3", *root]), "--force")
    assert registry.best_version() == "000001"
    gated = _run(runner, registry, "promote", "2", "--reason", "won its gate")
    assert f"promote: 000002 (previous best 000001): won its gate [by {default_actor()}]" in gated.stdout
    forced = _run(runner, registry, "promote", "3", "--force", "--reason", "try it in self-play")
    assert "promote (forced): 000003 (previous best 000002): try it in self-play" in forced.stdout
    listing = json.loads(_run(runner, registry, "ls", "--json").stdout)
    assert [(v["version"], v["status"], v["forced"]) for v in listing] == [
        ("000001", "promoted", False), ("000002", "promoted", False), ("000003", "promoted", True)]
    assert "promoted (forced)" in _run(runner, registry, "ls").stdout


def test_rollback_retires_the_abandoned_best_and_history_says_who_and_why(runner, registry):
    _run(runner, registry, "promote", "2")
    rolled = _run(runner, registry, "rollback", "1", "--reason", "loses to the anchor")
    assert "rollback: 000001 (previous best 000002, now retired): loses to the anchor" in rolled.stdout
    shown = json.loads(_run(runner, registry, "show", "2", "--json").stdout)
    assert (shown["status"], shown["status_reason"]) == ("retired", "rolled back to 000001: loses to the anchor")
    back = _run(runner, registry, "rollback", "2", "--reason", "the anchor games were misconfigured")
    assert "rollback: 000002" in back.stdout and registry.get(1).status == "retired"   # no --force: it was best
    registry.reject("3", reason="gate lost", by="gate")
    history = json.loads(_run(runner, registry, "history", "--json").stdout)
    assert [(e["event"], e["version"], e.get("retired"), e["by"]) for e in history] == [
        ("promote", "000001", None, default_actor()), ("promote", "000002", None, default_actor()),
        ("rollback", "000001", "000002", default_actor()), ("rollback", "000002", "000001", default_actor()),
        ("reject", "000003", None, "gate")]
    table = _run(runner, registry, "history").stdout.splitlines()
    assert table[0].split() == ["time", "(UTC)", "event", "version", "previous", "best", "retired", "by", "reason"]
    assert "loses to the anchor" in table[3] and "000002" in table[3] and default_actor() in table[3]
    assert table[5].split()[-4:] == ["-", "gate", "gate", "lost"]


def test_tree_shows_lineage_status_gate_anchor_and_best(runner, registry):
    _run(runner, registry, "promote", "2")
    registry.set_gate_result("3", {"score": 0.42, "ci_low": 0.31, "ci_high": 0.55, "best": "000002", "promote": False})
    registry.reject("3", reason="gate lost", by="gate")
    _run(runner, registry, "rollback", "1", "--reason", "regressed")
    registry.register(registry.get(1).path, parent="000001", generation=3)
    _run(runner, registry, "promote", "4", "--force")
    text = _run(runner, registry, "tree").stdout
    lines = text.splitlines()
    assert lines[0] == "tictactoe: 4 versions, best 000004"
    assert lines[1].endswith("000001  gen 0  promoted")   # superseded by a promotion, not rolled back from
    line = next(line for line in lines if "000002" in line and "gen 1" in line)
    assert line.endswith("000002  gen 1  retired  gate vs 000001 0.625 [0.510, 0.730] promote  anchor "
                         "pure-mcts:200: 0.800, Elo +241")
    assert "000003  gen 2  rejected  gate vs 000002 0.420 [0.310, 0.550] reject" in text
    assert "branch from 000001" in text
    assert "000004  gen 3  promoted (forced)  <- best" in text
    # the line leading to the best continues at the root's depth; the abandoned line hangs under 000001
    depth = {v: next(len(line) - len(line.lstrip("│├└─ ")) for line in lines if f"{v}  gen" in line)
             for v in ("000001", "000002", "000003", "000004")}
    assert depth["000001"] == depth["000004"] < depth["000002"] == depth["000003"]
    printed = _run(runner, registry, "tree", "--json").stdout
    assert printed.startswith('[\n  {\n    "version": "000001"')   # a shallow lineage is indented
    forest = json.loads(printed)
    (root,) = forest
    assert [c["version"] for c in root["children"]] == ["000002", "000004"]
    assert root["children"][0]["children"][0]["gate"]["decision"] == "reject"
    assert root["children"][0]["anchor"]["elo"] == 240.8 and root["children"][1]["best"] is True


def test_tree_of_a_damaged_registry_warns_and_shows_the_rest(runner, registry):
    (registry.directory / "versions/000002/meta.json").write_text("garbage")
    result = runner.invoke(models, ["tree", "--data-dir", str(registry.directory.parents[2])])
    assert result.exit_code == 0, result.output
    assert "000002/meta.json is damaged" in result.stderr
    assert "000003  gen 2  candidate  (parent 000002 missing)" in result.stdout


def test_tree_json_of_a_chain_deeper_than_the_recursion_limit():
    forest = node = {"version": "000001", "children": []}
    for number in range(2, 1501):
        child = {"version": f"{number:06d}", "children": []}
        node["children"].append(child)
        node = child
    limit = sys.getrecursionlimit()
    text = lineage_json([forest])
    assert sys.getrecursionlimit() == limit and text.count('"version"') == 1500 and "\n" not in text
    sys.setrecursionlimit(10_000)   # a reader needs a raised limit too for a lineage this deep (see README)
    try:
        assert json.loads(text) == [forest]
    finally:
        sys.setrecursionlimit(limit)


def test_models_strength_reads_the_metrics_file_and_says_when_there_is_none(tmp_path) -> None:
    from click.testing import CliRunner

    from shared.curves import GenerationMetrics, append_metrics

    root = tmp_path / "data"
    layout = DataLayout(root, "tictactoe")
    layout.registry_dir.mkdir(parents=True)
    runner = CliRunner()
    empty = runner.invoke(models, ["strength", "--game", "tictactoe", "--data-dir", str(root)])
    assert empty.exit_code == 2 and "no finished generation" in empty.output and "zeroforge run" in empty.output
    for generation, anchor in ((1, None), (2, 0.45)):
        append_metrics(layout.metrics_path, GenerationMetrics(
            generation=generation, time=f"2026-01-01T0{generation}:00:00+00:00", games=10, positions=90,
            first_player_wins=5, draws=3, second_player_wins=2, selfplay_seconds=30.0, generation_seconds=900.0,
            promoted=anchor is not None, anchor="minimax" if anchor else None, anchor_score=anchor,
            anchor_ci_low=0.3 if anchor else None, anchor_ci_high=0.6 if anchor else None))
    plot = tmp_path / "hours.png"
    result = runner.invoke(models, ["strength", "--game", "tictactoe", "--data-dir", str(root),
                                  "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "0.450 [0.300, 0.600]" in result.output and "0.50" in result.output and plot.exists()
    rows = json.loads(runner.invoke(models, ["strength", "--json", "--game", "tictactoe",
                                           "--data-dir", str(root)]).output)
    assert [(r["generation"], r["hours"], r["anchor_score"]) for r in rows] == [(1, 0.25, None), (2, 0.5, 0.45)]


def test_promote_of_a_version_that_was_best_before_points_to_rollback(runner, registry):
    _run(runner, registry, "promote", "2")
    root = ["--data-dir", str(registry.directory.parents[2])]
    one_line_error(runner.invoke(models, ["promote", "1", *root]),
                   "version 000001 was best before (status promoted; the best now is 000002), so making it best "
                   "again is a rollback: run `zeroforge models rollback 000001`")
    assert registry.best_version() == "000002" and [e["event"] for e in registry.history()] == ["promote", "promote"]
    rolled = _run(runner, registry, "rollback", "1")
    assert "rollback: 000001 (previous best 000002, now retired)" in rolled.stdout and registry.get(2).status == "retired"
