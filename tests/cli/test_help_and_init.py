"""Help texts name every option's meaning and default; `models init` makes the first model by hand; the by-hand
jobs print tables (JSON with --json)."""
from __future__ import annotations

import json

import pytest

from cli import main
from shared.layout import DataLayout
from shared.registry import ModelRegistry


def _help(runner, *command: str) -> str:
    result = runner.invoke(main, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("command", [("ui",), ("selfplay",), ("train",), ("gate",), ("bench", "selfplay"), ("run",),
                                     ("models", "init"), ("models", "export"), ("models", "tree"), ("models", "promote"),
                                     ("models", "reject"), ("models", "rollback"), ("models", "history"),
                                     ("models", "strength"), ("pbrain",), ("shards", "show")])
def test_every_option_has_help(runner, command):
    import click

    group = main
    ctx = click.Context(main)
    for name in command:
        group = group.get_command(ctx, name)
    for param in group.params:
        if isinstance(param, click.Option) and param.name != "help":
            assert param.help, f"{' '.join(command)} {param.opts[0]} has no help text"


def test_help_wording(runner):
    assert "--data-dir DIRECTORY" in _help(runner, "ui")
    assert "Game to train" not in _help(runner, "selfplay") and "Game to train" not in _help(runner, "gate")
    assert "8 for tictactoe" in _help(runner, "run")
    assert "cuda:N" in _help(runner, "bench", "selfplay")


def test_bench_accepts_cuda_n_and_refuses_it_in_one_line_without_a_gpu(runner):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: cuda:0 would be accepted")
    result = runner.invoke(main, ["bench", "selfplay", "--game", "tictactoe", "--device", "cuda:1"])
    assert result.exit_code == 2 and "Invalid value" not in result.output and "cuda" in result.stderr


def test_models_init_then_jobs_by_hand(runner, tmp_path):
    data = ["--data-dir", str(tmp_path)]
    result = runner.invoke(main, ["models", "init", "--game", "tictactoe", *data])
    assert result.exit_code == 0, result.output
    assert "as 000001 and made it best" in result.stdout
    registry = ModelRegistry(DataLayout(tmp_path, "tictactoe").registry_dir)
    assert registry.best_version() == "000001"
    again = runner.invoke(main, ["models", "init", "--game", "tictactoe", *data])
    assert again.exit_code == 0 and "already has a best model: 000001; nothing changed" in again.stdout
    small = ["--game", "tictactoe", *data, "--set", "selfplay.games_per_job=4", "--set", "train.steps_per_generation=4",
             "--set", "train.batch_size=8", "--set", "gate.games=4", "--set", "gate.jobs=1"]
    table = runner.invoke(main, ["selfplay", *small, "--generation", "1", "--job-id", "by-hand"])
    assert table.exit_code == 0, table.output
    assert "job id" in table.stdout and "by-hand" in table.stdout and "{" not in table.stdout
    as_json = runner.invoke(main, ["train", *small, "--generation", "1", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["version"] == "000002"
    gate = runner.invoke(main, ["gate", *small, "--candidate", "000002"])
    assert gate.exit_code == 0, gate.output
    assert "000002 vs 000001" in gate.stdout and "decision (not applied)" in gate.stdout


def test_jobs_on_a_fresh_directory_point_to_models_init(runner, tmp_path):
    result = runner.invoke(main, ["selfplay", "--game", "tictactoe", "--generation", "1", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "zeroforge models init --game tictactoe" in result.output
