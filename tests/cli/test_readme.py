"""The documentation's command examples run as written, so the README and docs/ cannot drift.

Every line of a ```bash block that calls `.venv/bin/zeroforge`, in README.md and in every docs/**/*.md, is an
example. The ones in ILLUSTRATIVE are too slow (or never end, or need a running `zeroforge run`) for the test suite,
in whatever file they appear; those in ILLUSTRATIVE_IN only in the file named (README.md's tour reads the data of
the install command's training run, which the test does not make). Illustrative examples have their options checked
against the click commands (parsing, nothing runs). All the others run with bash, each file's examples in the file's
order in one temporary directory of its own (a fresh clone's view: no data directory, ZEROFORGE_DATA_DIR unset), so
an example may use what an earlier example OF THE SAME FILE made (docs/operating.md: `models init`, `selfplay` and
`train` before `shards show` and `models rollback`). `.venv/bin/zeroforge` there is a small script that runs this
checkout's `python -m cli`; each example gets "quit" on stdin (for `play`) and must exit with 0.

Relative links of the same files must point to files that exist.
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

#: Examples that are not run wherever they appear, each with the reason (the key is the line without its comment).
ILLUSTRATIVE = {
    "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 -e '.[test]' && .venv/bin/zeroforge run --game tictactoe":
        "installs the package and trains tic-tac-toe for minutes",
    ".venv/bin/zeroforge run --game connect4 --generations 0 --data-dir runs/c4":
        "a training run until stopped",
    ".venv/bin/zeroforge run --game connect4 --generations 20 --set selfplay.games_per_job=256 --data-dir runs/c4":
        "a 20-generation training run",
    ".venv/bin/zeroforge run --game gomoku-8x8-5 --set selfplay.full_search_fraction=0.25 --set "
    "train.value_target_mix=0.5 --set train.samples_per_position=4":
        "a training run until stopped (the options it sets are checked by tests/runtime/test_config.py)",
    ".venv/bin/zeroforge run --game go-9x9 --generations 0":
        "a Go training run until stopped",
    ".venv/bin/zeroforge run --game go-9x9 --generations 0 --set gate.anchor=gnugo:1":
        "a Go training run until stopped (gnugo:1 as an anchor is checked by tests/services/test_gatekeeper.py)",
    ".venv/bin/zeroforge run --game gomoku-15 --set game.blocks=4 --set game.channels=48 --set search.simulations=16 "
    "--set selfplay.games_per_job=128 --set selfplay.jobs_per_generation=2 --set train.samples_per_position=4 --set "
    "gate.simulations=16 --set gate.jobs=8 --set gate.anchor=none":
        "a 15x15 training run until stopped (its settings are those of the run below)",
    ".venv/bin/zeroforge run --game gomoku-15 --workers 1 --max-hours 0.8 --set pipeline.seed=1 --set "
    "game.line_planes=true --set search.root=gumbel --set search.simulations=16 --set game.blocks=4 --set "
    "game.channels=48 --set selfplay.games_per_job=128 --set selfplay.jobs_per_generation=2 --set "
    "train.samples_per_position=4 --set train.torch_threads=1 --set gate.simulations=16 --set gate.jobs=8 --set gate.anchor=none":
        "the shipped 15x15 model's training run (three sittings, 113 minutes)",
    ".venv/bin/zeroforge models strength":
        "needs a finished generation, which no example before it trains (tests/cli/test_models_registry.py and "
        "tests/e2e/test_pipeline_e2e.py run it on recorded generations)",
    ".venv/bin/zeroforge bench ablation --game connect4 --out runs/abl-cont --max-hours 0.5 --seeds 0,1 --arm sync "
    "--arm \"cont: pipeline.overlap_selfplay=true train.samples_per_position=13.3 train.steps_per_generation=4000\"":
        "four half-hour training runs (tests/cli/test_bench_ablation.py runs two tiny ones end to end)",
    ".venv/bin/zeroforge run --game connect4 --generations 20 --data-dir runs/trunk-s0 --set pipeline.seed=0":
        "an hour-long training run (the trunk of the next example)",
    ".venv/bin/zeroforge bench ablation --game connect4 --out runs/abl-late --trunk \"runs/trunk-s{seed}\" --max-hours "
    "0.5 --seeds 0,1 --arm base --arm \"window: train.replay_window_positions=300000\"":
        "four half-hour training runs from two hour-long trunks (tests/cli/test_bench_ablation.py continues a tiny "
        "trunk end to end)",
    ".venv/bin/zeroforge bench oracle --game connect4 --model best --from-shards runs/c4/games/connect4/shards "
    "--set-file own-400.npz":
        "needs a Connect Four run's shards (tests/cli/test_bench_oracle.py runs --from-shards on a written shard)",
    ".venv/bin/zeroforge bench oracle --game connect4 --model shipped --model best --positions 400 --seed 1000":
        "the solver labels 400 Connect Four positions first, 30-60 s (tests/cli/test_bench_oracle.py runs the "
        "command on tic-tac-toe)",
    ".venv/bin/zeroforge bench oracle --game othello --model shipped --model best --phase late-midgame --set-file "
    "late-400.npz":
        "the solver labels 400 late-midgame Othello positions first, about 25 minutes "
        "(tests/cli/test_bench_oracle.py builds a 3-position 6x6 set)",
    ".venv/bin/zeroforge ui":
        "starts a server that runs until Ctrl-C",
    ".venv/bin/zeroforge ui --data-dir runs/c4 --game connect4":
        "starts a server that runs until Ctrl-C (tests/e2e/test_ui.py runs two side by side)",
    ".venv/bin/zeroforge status --data-dir runs/c4":
        "reads runs/c4, which no example before it trains (tests/e2e/test_status.py runs it during a run, "
        "tests/e2e/test_run_lifecycle.py after one)",
    ".venv/bin/zeroforge status --data-dir runs/c4 --json":
        "reads runs/c4, which no example before it trains (tests/e2e/test_status.py runs it during a run, "
        "tests/e2e/test_run_lifecycle.py after one)",
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
    # the strength figures of the game pages: each reproduces a measurement of BENCHMARKS.md (minutes to an hour)
    ".venv/bin/zeroforge eval shipped minimax --game tictactoe --games 100 --sims 1":
        "reproduces a BENCHMARKS.md figure (tests/e2e/test_tictactoe_strength.py checks it from scratch)",
    ".venv/bin/zeroforge eval shipped pure-mcts:1000 --game connect4 --games 100 --sims 400 --json":
        "reproduces a BENCHMARKS.md figure (about 3 minutes on 2 cores)",
    ".venv/bin/zeroforge bench tactics --game connect4 --model shipped --positions 300 --sims 200 --max-nodes 2000000 --json":
        "reproduces a BENCHMARKS.md figure (minutes of solving)",
    ".venv/bin/zeroforge eval shipped pure-mcts:5000 --game gomoku-6x6-4 --games 100 --sims 400 --json":
        "reproduces a BENCHMARKS.md figure (minutes)",
    ".venv/bin/zeroforge eval shipped pure-mcts:5000 --game gomoku-8x8-5 --games 100 --sims 400 --json":
        "reproduces a BENCHMARKS.md figure (about 4 minutes on 2 cores)",
    ".venv/bin/zeroforge eval shipped pure-mcts:1000 --game gomoku-15 --games 100 --sims 400 --json":
        "reproduces a BENCHMARKS.md figure (about 12 minutes)",
    ".venv/bin/zeroforge bench tactics --game gomoku-15 --vcf --positions 100 --sims 400 --json":
        "reproduces a BENCHMARKS.md figure (minutes)",
    ".venv/bin/zeroforge eval shipped weights --game othello --games 100 --sims 100 --json":
        "reproduces a BENCHMARKS.md figure (about 2 minutes)",
    ".venv/bin/zeroforge eval shipped pure-mcts:1000 --game othello --games 40 --sims 100 --json":
        "reproduces a BENCHMARKS.md figure (about 4 minutes)",
    ".venv/bin/zeroforge bench tactics --game othello --model shipped --positions 200 --empties 10-16 --sims 200 --json":
        "reproduces a BENCHMARKS.md figure (about 2 minutes)",
    ".venv/bin/zeroforge eval shipped pure-mcts:1000 --game go-9x9 --games 100 --json":
        "reproduces a BENCHMARKS.md figure (about 20 minutes)",
    ".venv/bin/zeroforge eval shipped gnugo:1 --game go-9x9 --games 100 --json":
        "reproduces a BENCHMARKS.md figure (about 20 minutes)",
}

#: Examples that are not run in one file only (file relative to the repository -> {line: reason}).
ILLUSTRATIVE_IN = {
    "README.md": {
        ".venv/bin/zeroforge shards ls --game tictactoe":
            "the tour reads the install command's run; docs/operating.md runs it on a generation made by hand",
        ".venv/bin/zeroforge shards show --index 0 --move 3":
            "the tour reads the install command's run; docs/operating.md runs `shards show` on a generation made "
            "by hand",
        ".venv/bin/zeroforge models ls --game tictactoe":
            "the tour reads the install command's run; docs/operating.md runs it on a registry made by hand",
        '.venv/bin/zeroforge models rollback 000002 --game tictactoe --reason "trying the older one"':
            "the tour reads the install command's run; docs/operating.md runs `models rollback` on a registry "
            "made by hand",
        ".venv/bin/zeroforge models history --game tictactoe":
            "the tour reads the install command's run; docs/operating.md runs `models history` on a registry made "
            "by hand",
        ".venv/bin/zeroforge eval best minimax --game tictactoe --games 20":
            "docs/engines.md runs `eval shipped minimax` (the model that `best` falls back to without a registry); "
            "kept out to hold the test's time",
    },
    # each game page shows its notation with an `analyze`; those of the less obvious notations run (Gomoku's rows
    # from the bottom, Othello's from the top, Go's columns without I), these two only parse, to hold the time
    "docs/games/tictactoe.md": {
        ".venv/bin/zeroforge analyze --game tictactoe --moves 51 --json":
            "a few seconds of start-up for digits 1-9; tests/cli/test_analyze.py analyses tic-tac-toe positions",
    },
    "docs/games/connect4.md": {
        ".venv/bin/zeroforge analyze --game connect4 --moves 4453 --json":
            "the same line runs in docs/engines.md",
    },
}

#: What each file's examples leave in their directory, checked after they ran.
MADE = {
    "docs/engines.md": lambda d: (d / "tictactoe.onnx").is_file()
    and (d / "game.sgf").read_text().startswith("(;FF[4]GM[4]"),
    "docs/operating.md": lambda d: any((d / "zeroforge-data").rglob("*.h5")),
    # the toy game trained through `zeroforge run`: the initial model and one candidate, and its shards
    "docs/adding-a-game.md": lambda d: len(list((d / "runs/toy/games/toyline-4/models/versions").iterdir())) == 2
    and any((d / "runs/toy/games/toyline-4/shards").rglob("*.h5")),
}


def doc_files() -> list[str]:
    """README.md, then every Markdown page under docs/, as paths relative to the repository."""
    return ["README.md"] + sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md"))


def file_examples(name: str) -> list[str]:
    """Lines of a file's ```bash blocks that call .venv/bin/zeroforge, comments removed, in order."""
    text = (REPO / name).read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"^[ \t]*```bash\n(.*?)^[ \t]*```", text, flags=re.S | re.M):
        for line in block.splitlines():
            if COMMAND in line:
                examples.append(_without_comment(line))
    return examples


def readme_examples() -> list[str]:
    """The README's examples (kept for callers of the first version of this test)."""
    return file_examples("README.md")


def is_illustrative(name: str, example: str) -> bool:
    return example in ILLUSTRATIVE or example in ILLUSTRATIVE_IN.get(name, {})


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
    files = doc_files()
    assert {"docs/configuration.md", "docs/operating.md", "docs/engines.md", "docs/reliability.md"} <= set(files)
    examples = {name: file_examples(name) for name in files}
    everywhere = [line for lines in examples.values() for line in lines]
    assert len(everywhere) >= 40
    stale = [line for line in ILLUSTRATIVE if line not in everywhere]
    assert not stale, f"ILLUSTRATIVE lists lines no documentation file has any more: {stale}"
    for name, lines in ILLUSTRATIVE_IN.items():
        stale = [line for line in lines if line not in examples.get(name, [])]
        assert not stale, f"ILLUSTRATIVE_IN[{name!r}] lists lines {name} no longer has: {stale}"
    run = [line for name, lines in examples.items() for line in lines if not is_illustrative(name, line)]
    assert len(run) >= 25


ILLUSTRATIVE_LINES = sorted(set(ILLUSTRATIVE) | {line for lines in ILLUSTRATIVE_IN.values() for line in lines})


@pytest.mark.parametrize("example", ILLUSTRATIVE_LINES)
def test_illustrative_examples_have_valid_options(example):
    _check_options(_zeroforge_args(example))


@pytest.mark.parametrize("name", [n for n in doc_files() if any(not is_illustrative(n, e) for e in file_examples(n))])
def test_doc_examples_run_as_written(name, tmp_path, monkeypatch):
    monkeypatch.delenv("ZEROFORGE_DATA_DIR", raising=False)
    shim = tmp_path / ".venv" / "bin" / "zeroforge"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("ZEROFORGE_DATA_DIR", None)
    ran = 0
    for example in file_examples(name):
        if is_illustrative(name, example):
            continue
        _check_options(_zeroforge_args(example))
        result = subprocess.run(["bash", "-c", example], cwd=tmp_path, env=env, input="quit\n", text=True,
                                capture_output=True, timeout=600)
        assert result.returncode == 0, f"{name}: {example}\nstdout:\n{result.stdout[-2000:]}\nstderr:\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr and "error:" not in result.stderr, f"{name}: {example}\n{result.stderr}"
        ran += 1
    assert ran >= 1
    if name in MADE:
        assert MADE[name](tmp_path), f"{name}: its examples did not leave what they make"


def test_relative_links_point_to_files():
    broken = []
    for name in doc_files() + ["BENCHMARKS.md"]:
        text = (REPO / name).read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)             # links only in prose
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z][a-z0-9+.-]*:", path):        # an anchor in the page, or a URL
                continue
            if not ((REPO / name).parent / path).exists():
                broken.append(f"{name}: {target}")
    assert not broken, f"links to files that do not exist: {broken}"
