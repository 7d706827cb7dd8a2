"""The README's command examples run as written, in order, in a fresh directory, so the README cannot drift.

Every line of a ```bash block that calls `.venv/bin/zeroforge` is an example. The ones in ILLUSTRATIVE are
too slow (or never end) for the test suite: their options are only checked against the click commands
(parsing, nothing runs). All the others run with bash in one temporary directory (a fresh clone's view: no
data directory, ZEROFORGE_DATA_DIR unset), where `.venv/bin/zeroforge` is a small script that runs this
checkout's `python -m cli`; each gets "quit" on stdin (for `play`) and must exit with 0.
"""
from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cli import main

REPO = Path(__file__).resolve().parents[2]
COMMAND = ".venv/bin/zeroforge"

#: Examples that are not run, each with the reason (the key is the line without its comment).
ILLUSTRATIVE = {
    "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 -e '.[test]' && .venv/bin/zeroforge run --game tictactoe":
        "installs the package and trains tic-tac-toe for minutes",
    ".venv/bin/zeroforge run --game connect4 --generations 20 --set selfplay.games_per_job=256 --data-dir runs/c4":
        "a 20-generation training run",
    ".venv/bin/zeroforge run --game gomoku-8x8-5 --set selfplay.full_search_fraction=0.25 --set "
    "train.value_target_mix=0.5 --set train.samples_per_position=4":
        "a training run until stopped (the options it sets are checked by tests/runtime/test_config.py)",
    ".venv/bin/zeroforge run --game go-9x9 --generations 0":
        "a Go training run until stopped",
    ".venv/bin/zeroforge run --game go-9x9 --generations 0 --set gate.anchor=gnugo:1":
        "a Go training run until stopped (gnugo:1 as an anchor is checked by tests/services/test_gatekeeper.py)",
    ".venv/bin/zeroforge models strength":
        "needs a finished generation, which no example before it trains (tests/cli/test_models_registry.py and "
        "tests/e2e/test_pipeline_e2e.py run it on recorded generations)",
    ".venv/bin/zeroforge ui":
        "starts a server that runs until Ctrl-C",
    ".venv/bin/zeroforge ui --data-dir runs/c4 --game connect4":
        "starts a server that runs until Ctrl-C (tests/e2e/test_ui.py runs two side by side)",
    ".venv/bin/zeroforge eval best pure-mcts:1000 --game connect4 --games 100 --json":
        "100 games against 1000-playout pure MCTS take many minutes (tests/cli/test_eval.py plays `best` "
        "without a registry, the fallback to the shipped model this line relies on)",
    "OMP_NUM_THREADS=1 .venv/bin/zeroforge bench selfplay --game connect4 --games 128 --sims 32 --moves 8":
        "a benchmark (about a minute)",
    "OMP_NUM_THREADS=1 .venv/bin/zeroforge bench selfplay --game gomoku-15 --games 64 --sims 16 --moves 8 --json":
        "a benchmark (about a minute)",
    ".venv/bin/zeroforge gtp --game go-9x9 --model best --sims 400":
        "an engine that waits for GTP commands (tests/cli/test_gtp.py plays a whole game against GNU Go with a "
        "small model)",
}


def readme_examples() -> list[str]:
    """Lines of the README's ```bash blocks that call .venv/bin/zeroforge, comments removed, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if COMMAND in line:
                examples.append(_without_comment(line))
    return examples


def _without_comment(line: str) -> str:
    """The command without a trailing `# comment` (a # inside quotes stays)."""
    quoted, out = None, []
    for i, ch in enumerate(line):
        if quoted:
            quoted = None if ch == quoted else quoted
        elif ch in "'\"":
            quoted = ch
        elif ch == "#" and (i == 0 or line[i - 1] == " "):
            break
        out.append(ch)
    return "".join(out).strip()


def _zeroforge_args(example: str) -> list[str]:
    """The arguments given to zeroforge in an example line (after .venv/bin/zeroforge, up to | or &&)."""
    rest = example.split(COMMAND, 1)[1]
    rest = re.split(r"\s(?:\||&&|;)\s", rest)[0]
    return shlex.split(rest)


def _check_options(args: list[str]) -> None:
    """Parse `args` with the zeroforge click commands (and subcommands) without running anything."""
    command, ctx, rest = main, click.Context(main, info_name="zeroforge"), list(args)
    while isinstance(command, click.Group):          # zeroforge's groups take no options of their own
        assert rest, f"{args}: a command is missing"
        sub = command.get_command(ctx, rest[0])
        assert sub is not None, f"{args}: no command {rest[0]!r}"
        ctx = click.Context(sub, info_name=rest[0], parent=ctx)
        command, rest = sub, rest[1:]
    command.make_context(ctx.info_name, rest, parent=ctx.parent)   # parses and checks every option


def test_every_example_is_run_or_listed_as_illustrative():
    examples = readme_examples()
    assert len(examples) >= 25
    stale = [line for line in ILLUSTRATIVE if line not in examples]
    assert not stale, f"ILLUSTRATIVE lists lines the README no longer has: {stale}"


@pytest.mark.parametrize("example", sorted(ILLUSTRATIVE))
def test_illustrative_examples_have_valid_options(example):
    _check_options(_zeroforge_args(example))


def test_readme_examples_run_as_written(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEROFORGE_DATA_DIR", raising=False)
    shim = tmp_path / ".venv" / "bin" / "zeroforge"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("ZEROFORGE_DATA_DIR", None)
    ran = 0
    for example in readme_examples():
        if example in ILLUSTRATIVE:
            continue
        _check_options(_zeroforge_args(example))
        result = subprocess.run(["bash", "-c", example], cwd=tmp_path, env=env, input="quit\n", text=True,
                                capture_output=True, timeout=600)
        assert result.returncode == 0, f"{example}\nstdout:\n{result.stdout[-2000:]}\nstderr:\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr and "error:" not in result.stderr, f"{example}\n{result.stderr}"
        ran += 1
    assert ran >= 20
    assert (tmp_path / "tictactoe.onnx").is_file() and (tmp_path / "game.sgf").read_text().startswith("(;FF[4]GM[4]")
