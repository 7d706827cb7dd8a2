"""`zeroforge bench tactics --vcf` end to end (the labeller is tested in tests/games/test_vcf_labels.py)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli import main
from shared.games.vcf_labels import VCF_DEPTH


def test_bench_tactics_vcf_end_to_end_with_the_shipped_model() -> None:
    result = CliRunner().invoke(main, ["bench", "tactics", "--game", "gomoku-6x6-4", "--vcf", "--positions", "4",
                                       "--sims", "16", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["positions"] == 8 and report["depth"] == VCF_DEPTH
    assert [(m["root_solver"], m["vcf"]["total"], m["vcf_defence"]["total"]) for m in report["models"]] == [
        (True, 4, 4), (False, 4, 4)]
    with_solver = report["models"][0]
    assert with_solver["vcf"]["hits"] == 4          # the players' root VCF solver finds every one of them


def test_vcf_is_refused_for_games_without_lines() -> None:
    result = CliRunner().invoke(main, ["bench", "tactics", "--game", "connect4", "--vcf"])
    assert result.exit_code != 0 and "--vcf" in result.output


