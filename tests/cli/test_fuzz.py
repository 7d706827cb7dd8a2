"""Property-based fuzzing (hypothesis) of the command line and the configuration: whatever the arguments, config
files, move strings and damaged registry or shard files, every command ends with a result or a short error, never
a traceback and never a hang. Examples are derandomized (the same inputs on every run) and bounded in number and
time; commands that would start real work get inputs that stop before it (an unreachable --redis-url for `run`,
a handful of cheap games for `eval`)."""
from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli import main
from shared.config import SECTIONS, ConfigError, PipelineConfig, load_config

pytestmark = pytest.mark.timeout(600)

FUZZ = settings(max_examples=100, deadline=30_000, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.differing_executors])
UNREACHABLE_REDIS = "redis://:pw@127.0.0.1:1/0"

#: Text that a user could type: any unicode, plus the characters that matter to parsers.
texts = st.text(min_size=0, max_size=24) | st.sampled_from(["", " ", "²", "٣", "-1", "0", "1e9", "nan", "inf", "true",
                                                           "../../x", "none", "9" * 30, "\x00", "é", "a\nb"])


def mostly(valid: st.SearchStrategy, junk: st.SearchStrategy, in_ten: int = 8) -> st.SearchStrategy:
    """`valid` in `in_ten` examples out of ten, `junk` in the others (so that commands get past their first check
    often enough to reach the deeper ones). (one_of with repeated branches would not weigh them: it merges them.)"""
    return st.sampled_from([True] * in_ten + [False] * (10 - in_ten)).flatmap(lambda ok: valid if ok else junk)


small = st.integers(0, 8).map(str)
seeds = mostly(st.integers(0, 2**31).map(str), st.sampled_from(["-1", "2147483649", str(2**63), "1e3", "x", ""]))
numbers = mostly(small, st.one_of(st.integers(-10**6, 10**6).map(str), st.floats(allow_nan=True).map(str),
                                  st.sampled_from([str(2**31), str(2**63), "9" * 30, "-0", "0x10", "1_000"]), texts), 6)
values = st.one_of(numbers, st.sampled_from(["true", "false", "none", "cpu", "cuda", "cuda:3", "adamw", "sgd",
                                                      "pure-mcts:1", "random", "minimax", "shipped", "best",
                                                      "ci_low_above", "score_above", "redis://:pw@127.0.0.1:1/0",
                                                      "localhost:6379", "/tmp/x", "~/x"]))
_valid_games = st.sampled_from(["tictactoe", "connect4", "gomoku-6x6-4", "othello-6x6", "go-5x5"])
games = mostly(_valid_games, st.sampled_from(["gomoku-0x0-0", "gomoku-5x5-6", "gomoku-5x5-5", "go-4x4", "gomoku-15",
                                              "gomoku-99999x5-5", "Tictactoe", " connect4 ", "othello"]) | texts)
_FIELDS = sorted((section, field) for section, model in SECTIONS.items() for field in model.model_fields)
_field_items = st.builds(lambda sf, v: f"{sf[0]}.{sf[1]}={v}", st.sampled_from(_FIELDS), values)
settings_items = mostly(_field_items, st.builds(lambda s, f, v: f"{s}.{f}={v}", texts, texts, values) | texts, 9)


def _invoke(args: list[str], input: str | None = None):
    """Run `zeroforge ARGS` in this process; the environment and signal handlers are put back afterwards."""
    saved_env, saved_term = dict(os.environ), signal.getsignal(signal.SIGTERM)
    try:
        return CliRunner().invoke(main, args, input=input, env={"REDIS_URL": None, "ZEROFORGE_REDIS_URL": None,
                                                                 "PREFECT_API_URL": None})
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        signal.signal(signal.SIGTERM, saved_term)


def _clean(result) -> None:
    """A finished command: exit 0, or an error exit with a message, and never a traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}\n{result.output[-2000:]}")
    assert result.exit_code in (0, 1, 2, 130), result.output[-2000:]
    assert "Traceback" not in result.output, result.output[-3000:]
    if result.exit_code:
        assert result.output.strip(), "an error exit without a message"


@FUZZ
@given(game=games, items=st.lists(settings_items, max_size=3), generations=st.none() | numbers,
       workers=st.none() | numbers, config=st.none() | st.none() | st.binary(max_size=200) | st.text(max_size=200),
       data_dir=st.sampled_from(["ok", "ok", "ok", "/proc/zf", "file"]), local=st.booleans(),
       url=mostly(st.just(UNREACHABLE_REDIS), st.sampled_from(["redis://:pw@[::1", "http://:pw@x", "redis://",
                                                               "redis://:pw@127.0.0.1:99999/0", "unix:///nope"])))
def test_run_never_shows_a_traceback(tmp_path_factory, game, items, generations, workers, config, data_dir,
                                     local, url) -> None:
    tmp = tmp_path_factory.mktemp("run")
    args = ["run", "--game", game, "--redis-url", url] + ([] if local else ["--no-local-workers"])
    for item in items:
        args += ["--set", item]
    if generations is not None:
        args += ["--generations", generations]
    if workers is not None:
        args += ["--workers", workers]
    if config is not None:
        path = tmp / "zeroforge.toml"
        path.write_bytes(config if isinstance(config, bytes) else config.encode("utf-8", "surrogatepass"))
        args += ["--config", str(path)]
    (tmp / "file").write_text("not a directory")
    args += ["--data-dir", {"ok": str(tmp / "data"), "file": str(tmp / "file"), "/proc/zf": "/proc/zf"}[data_dir]]
    result = _invoke(args)
    _clean(result)
    assert result.exit_code != 0          # an unreachable Redis, at the latest
    assert "pw@" not in result.output     # the password of --redis-url is never printed


_valid_players = st.sampled_from(["random", "minimax", "pure-mcts:1", "pure-mcts:3", "best", "shipped", "000001"])
players = mostly(_valid_players, st.sampled_from(["pure-mcts:0", "pure-mcts:99999999999999999999", "pure-mcts:", "",
                                                 "x.pt", "../../etc/passwd", "pure-mcts:-1", "pure-mcts:٣"]) | texts)


@FUZZ
@given(a=players, b=players, game=mostly(st.sampled_from(["tictactoe", "connect4"]), games),
       count=mostly(st.sampled_from(["2", "4"]), st.sampled_from(["0", "3", "-2", "1000000000", "x", ""]), 9),
       sims=mostly(st.sampled_from(["1", "2"]), st.sampled_from(["0", "-1", "1000001", "x"]), 9),
       seed=seeds, opening_seed=seeds)
def test_eval_never_shows_a_traceback(tmp_path_factory, a, b, game, count, sims, seed, opening_seed) -> None:
    tmp = tmp_path_factory.mktemp("eval")
    result = _invoke(["eval", a, b, "--game", game, "--games", count, "--sims", sims, "--seed", seed,
                      "--opening-seed", opening_seed, "--data-dir", str(tmp)])
    _clean(result)


@FUZZ
@given(game=st.sampled_from(["tictactoe", "connect4", "gomoku-5x5-4", "othello-6x6", "go-5x5"]) | games,
       moves=texts | st.lists(st.sampled_from(["1", "5", "9", "4", "a1", "e5", "c3", "pass", " ", "10", "j1"]),
                               max_size=12).map(" ".join),
       sims=mostly(st.sampled_from(["1", "2"]), st.sampled_from(["0", "x", "-1"]), 9),
       top=mostly(st.sampled_from(["1", "3"]), st.sampled_from(["0", "-1", "10**9", "x", "1001"]), 9))
def test_analyze_never_shows_a_traceback(tmp_path_factory, game, moves, sims, top) -> None:
    tmp = tmp_path_factory.mktemp("analyze")
    result = _invoke(["analyze", "--game", game, "--moves", moves, "--sims", sims, "--top", top,
                      "--data-dir", str(tmp), "--json"])
    _clean(result)


@FUZZ
@given(moves=st.lists(texts | st.sampled_from(["5", "1", "9", "3", "7", "help", "quit"]), max_size=8))
def test_play_never_shows_a_traceback(tmp_path_factory, moves) -> None:
    tmp = tmp_path_factory.mktemp("play")
    result = _invoke(["play", "--game", "tictactoe", "--sims", "2", "--data-dir", str(tmp)],
                     input="\n".join(m.replace("\n", " ") for m in moves) + "\n")
    _clean(result)


@pytest.fixture(scope="module")
def registry_template(tmp_path_factory, tiny_models) -> Path:
    """A data root with a tic-tac-toe registry of two versions, the second promoted."""
    from shared.layout import DataLayout
    from shared.registry import ModelRegistry

    root = tmp_path_factory.mktemp("registry-template")
    registry = ModelRegistry(DataLayout(root, "tictactoe").registry_dir, game_name="tictactoe")
    first = registry.register(tiny_models["tictactoe"], generation=0).version
    registry.promote(first, reason="initial")
    second = registry.register(tiny_models["tictactoe"], parent=first, generation=1).version
    registry.set_gate_result(second, {"score": 0.6, "promote": True})
    registry.promote(second, reason="gate", by="gate")
    return root


damaged_files = st.sampled_from(["best.json", "history.jsonl", "versions/000001/meta.json",
                                 "versions/000002/meta.json", "versions/000002/model.pt"])
models_commands = st.sampled_from([["ls"], ["ls", "--json"], ["history"], ["history", "--json"], ["show", "2"],
                                   ["show", "1", "--json"], ["rollback", "1"], ["rollback", "1", "--force"],
                                   ["promote", "2"], ["reject", "2"], ["show", "x"], ["rollback", "٣"], ["tree"],
                                   ["tree", "--json"], ["promote", "1", "--force"]])
contents = st.binary(max_size=300) | st.sampled_from([b"", b"{}", b"[]", b'{"version": "000099"}', b"null",
                                                      b'{"version": 3}', b"[" * 5000, b"\xff\xfe"])


@FUZZ
@given(damage=st.lists(st.tuples(damaged_files, contents), max_size=3), command=models_commands)
def test_models_on_damaged_registries_never_show_a_traceback(tmp_path_factory, registry_template, damage,
                                                             command) -> None:
    from shared.layout import DataLayout

    root = tmp_path_factory.mktemp("models") / "data"
    shutil.copytree(registry_template, root)
    registry_dir = DataLayout(root, "tictactoe").registry_dir
    for name, data in damage:
        (registry_dir / name).write_bytes(data)
    _clean(_invoke(["models", *command, "--data-dir", str(root)]))


@FUZZ
@given(data=st.binary(max_size=400) | st.sampled_from([b"\x89HDF\r\n\x1a\n" + b"\x00" * 100]),
       game=st.none() | st.sampled_from(["0", "-1", "x", "99"]), move=st.none() | st.sampled_from(["1", "0", "-5"]))
def test_shards_on_damaged_files_never_show_a_traceback(tmp_path_factory, data, game, move) -> None:
    tmp = tmp_path_factory.mktemp("shards")
    path = tmp / "gen-000001" / "x.h5"
    path.parent.mkdir()
    path.write_bytes(data)
    args = ["shards", "show", str(path)] + (["--game", game] if game else []) + (["--move", move] if move else [])
    _clean(_invoke(args))
    _clean(_invoke(["shards", "ls", str(tmp)]))


@FUZZ
@given(command=st.sampled_from(["selfplay", "train", "gate"]), model=st.sampled_from(["1", "000002", "x", "../1", ""]),
       damage=st.lists(st.tuples(damaged_files, contents), max_size=2),
       generation=st.sampled_from(["1", "2"]) | numbers,
       device=mostly(st.just("cpu"), st.sampled_from(["cuda", "cuda:7", "gpu", ""]), 9), seed=seeds)
def test_jobs_by_hand_on_damaged_registries_never_show_a_traceback(tmp_path_factory, registry_template, command,
                                                                   model, damage, generation, device, seed) -> None:
    from shared.layout import DataLayout, data_id

    root = tmp_path_factory.mktemp("jobs") / "data"
    shutil.copytree(registry_template, root)
    data_id(root)
    registry_dir = DataLayout(root, "tictactoe").registry_dir
    for name, data in damage:
        (registry_dir / name).write_bytes(data)
    tiny = ["--set", "game.blocks=1", "--set", "game.channels=8", "--set", "search.simulations=2",
            "--set", "selfplay.games_per_job=2", "--set", "train.steps_per_generation=2", "--set", "train.batch_size=2",
            "--set", "gate.games=2", "--set", "gate.jobs=1", "--set", "gate.simulations=1"]
    which = {"selfplay": ["--model", model, "--generation", generation, "--seed", seed],
             "train": ["--parent", model, "--generation", generation, "--seed", seed],
             "gate": ["--candidate", model or "2"]}[command]
    _clean(_invoke([command, "--game", "tictactoe", "--data-dir", str(root), "--device", device, *tiny, *which]))


@FUZZ
@given(device=mostly(st.just("cpu"), st.sampled_from(["cuda:9", "gpu", ""])),
       queues=st.sampled_from(["selfplay", "selfplay,eval", "x", "", ",,"]),
       heartbeat=mostly(st.sampled_from(["1", "5"]), numbers), threads=mostly(st.sampled_from(["1", "2"]), numbers),
       url=mostly(st.just(UNREACHABLE_REDIS), st.sampled_from(["http://x", "", "redis://", "redis://:pw@[::1"])))
def test_worker_never_shows_a_traceback(tmp_path_factory, device, queues, heartbeat, threads, url) -> None:
    from shared.layout import data_id

    root = tmp_path_factory.mktemp("worker")
    data_id(root)
    result = _invoke(["worker", "--data-dir", str(root), "--device", device, "--queues", queues, "--heartbeat",
                      heartbeat, "--torch-threads", threads, "--redis-url", url])
    _clean(result)
    assert result.exit_code != 0 and "pw@" not in result.output


@settings(max_examples=150, deadline=10_000, derandomize=True, database=None)
@given(toml=st.text(max_size=300) | st.builds(
    lambda section, key, value: f"[{section}]\n{key} = {value}\n",
    st.sampled_from(sorted(SECTIONS)) | texts,
    st.sampled_from(sorted({f for m in SECTIONS.values() for f in m.model_fields})) | texts,
    st.sampled_from(["true", "false", "0", "-1", "1.5", "nan", "inf", '"x"', "[1, 2]", "{a = 1}", "1979-05-27",
                     "99999999999999999999", '"none"', '"cuda"', '"redis://:p@h:1/0"', "1e400"]) | numbers))
def test_any_config_file_gives_a_config_or_one_config_error(tmp_path_factory, toml) -> None:
    path = tmp_path_factory.mktemp("config") / "zeroforge.toml"
    path.write_text(toml, encoding="utf-8")
    try:
        load_config(PipelineConfig, "tictactoe", path, env=None)
    except ConfigError as exc:
        assert str(exc).strip() and ":p@" not in str(exc)
