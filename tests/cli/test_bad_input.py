"""Known bad inputs, each stopped at start with one line that names it (exit 2, or 1 for an unreachable service),
never with a traceback and before anything is created or started."""
from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from cli import main

RUN = ["run", "--redis-url", "redis://127.0.0.1:1/0", "--no-local-workers"]


def _fails_in_one_line(args: list[str], needle: str, code: int = 2, input: str | None = None) -> str:
    result = CliRunner().invoke(main, args, input=input, env={"REDIS_URL": None, "ZEROFORGE_REDIS_URL": None})
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.lower().startswith("error")]
    assert len(errors) == 1 and needle in errors[0], result.output
    return errors[0]


@pytest.mark.parametrize("game, needle", [
    ("gomoku-0x0-0", "gomoku height 0 is out of range"),
    ("gomoku-5x5-6", "5x5 with 6 in a row can never be won"),
    ("go-4x4", "go board size 4 is out of range"),
    ("gomoku-99999x5-5", "unknown game 'gomoku-99999x5-5'"),
])
def test_impossible_games_are_refused(tmp_path, game, needle) -> None:
    _fails_in_one_line([*RUN, "--game", game, "--data-dir", str(tmp_path / "d")], needle)
    assert not (tmp_path / "d").exists()


def test_a_config_file_that_is_not_utf8(tmp_path) -> None:
    config = tmp_path / "bad.toml"
    config.write_bytes(b"\xff\xfe[search]\nsimulations = 3\n")
    _fails_in_one_line([*RUN, "--game", "tictactoe", "--config", str(config), "--data-dir", str(tmp_path / "d")],
                       "is not UTF-8 text")
    _fails_in_one_line(["eval", "random", "random", "--game", "tictactoe", "--games", "2", "--config", str(config)],
                       "is not UTF-8 text")


@pytest.mark.parametrize("toml, needle", [
    ("[search]\nsimulations = true\n", "search.simulations: must be a number, not true"),
    ("[search]\nc_puct = nan\n", "search.c_puct: must be a finite number"),
    ("[gate]\nanchor = false\n", "gate.anchor: must be text, not false"),
    ("[pipeline]\nseed = 99999999999999999999\n", "pipeline.seed"),
    ("[pipeline]\njob_retries = 1000\n", "pipeline.job_retries: must be <= 20"),
    ("search = 3\n", "must be inside a section"),
])
def test_config_values_out_of_their_bounds(tmp_path, toml, needle) -> None:
    config = tmp_path / "zeroforge.toml"
    config.write_text(toml)
    _fails_in_one_line([*RUN, "--game", "tictactoe", "--config", str(config), "--data-dir", str(tmp_path / "d")],
                       needle)


def test_an_unwritable_data_directory(tmp_path) -> None:
    _fails_in_one_line([*RUN, "--game", "tictactoe", "--data-dir", "/proc/zf"], "--data-dir /proc/zf: cannot create")
    (tmp_path / "file").write_text("x")
    _fails_in_one_line([*RUN, "--game", "tictactoe", "--data-dir", str(tmp_path / "file")], "is a file")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_a_gpu_device_without_a_gpu_fails_at_start_not_in_the_workers(tmp_path) -> None:
    args = ["run", "--redis-url", "redis://127.0.0.1:1/0", "--game", "tictactoe", "--set", "selfplay.device=cuda",
            "--data-dir", str(tmp_path / "d")]
    _fails_in_one_line(args, "selfplay.device: cuda: this machine has no CUDA GPU")
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("anchor, game, needle", [
    ("shipped", "othello-6x6", "no shipped model for othello-6x6"),
    ("minimax", "connect4", 'gate.anchor "minimax" exists only for tictactoe'),
    ("best", "tictactoe", "is not a fixed player that every worker has"),
    ("pure-mcts:0", "tictactoe", "pure-mcts needs 1 to 1,000,000 playouts"),
])
def test_an_unusable_anchor_fails_at_start(tmp_path, anchor, game, needle) -> None:
    _fails_in_one_line([*RUN, "--game", game, "--set", f"gate.anchor={anchor}", "--data-dir", str(tmp_path / "d")],
                       needle)


@pytest.mark.integration   # waits out a real connection's retries
def test_an_unreachable_redis_is_one_line_without_its_password(tmp_path) -> None:
    line = _fails_in_one_line(["run", "--redis-url", "redis://:s3cret@127.0.0.1:1/0", "--game", "tictactoe",
                               "--no-local-workers", "--data-dir", str(tmp_path / "d")], "is not reachable", code=1)
    assert "s3cret" not in line and "redis://:***@127.0.0.1:1/0" in line


@pytest.mark.parametrize("args, needle", [
    (["analyze", "--game", "tictactoe", "--moves", "²"], "'²' is not a tic-tac-toe square"),
    (["analyze", "--game", "connect4", "--moves", "4٣"], "is not a Connect Four column"),
    (["eval", "pure-mcts:99999999999999999999", "random", "--game", "tictactoe", "--games", "2"],
     "pure-mcts needs 1 to 1,000,000 playouts"),
    (["eval", "", "random", "--game", "tictactoe", "--games", "2"], "unknown player ''"),
    (["eval", "random", "random", "--game", "tictactoe", "--games", "2", "--seed", "-1"], "--seed"),
    (["eval", "random", "random", "--game", "tictactoe", "--games", "2", "--opening-seed", "-5"], "--opening-seed"),
    (["eval", "random", "random", "--game", "tictactoe", "--games", "3"], "games must be an even number"),
    (["selfplay", "--game", "tictactoe", "--generation", "1", "--seed", "-1"], "--seed"),
    (["worker", "--data-dir", ".", "--redis-url", "redis://:pw@[::1"], "--redis-url"),
    (["ui", "--port", "0"], "--port"),
])
def test_bad_command_line_values(tmp_path, args, needle) -> None:
    _fails_in_one_line(args + (["--data-dir", str(tmp_path)] if args[0] in ("analyze", "eval") else []), needle)


def test_a_damaged_model_in_jobs_by_hand(tmp_path) -> None:
    from services.initial_model import ensure_initial_model
    from shared.config import PipelineConfig, load_config
    from shared.layout import DataLayout
    from shared.registry import ModelRegistry

    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides={"game.blocks": 1, "game.channels": 8})
    layout = DataLayout(tmp_path / "data", "tictactoe")
    best = ensure_initial_model(layout, cfg.game, 0)
    model = ModelRegistry(layout.registry_dir).get(best).path
    model.write_bytes(model.read_bytes()[:100])
    tiny = ["--game", "tictactoe", "--data-dir", str(layout.root), "--set", "game.blocks=1", "--set", "game.channels=8"]
    _fails_in_one_line(["selfplay", *tiny, "--generation", "1"], "is damaged: sha256")
    _fails_in_one_line(["gate", *tiny, "--candidate", best], "is damaged: sha256")
    (layout.registry_dir / "versions" / best / "meta.json").write_bytes(b"\x00\xff")
    _fails_in_one_line(["train", *tiny, "--generation", "1"], "meta.json is damaged")
