"""Workers on "other hosts" for real: each in a network namespace of its own (a veth pair to this host, as root),
each with its own empty directory, reaching the pipeline's Redis and S3 store only over that link. The same
one-generation run with the same seed, once with local workers on the data directory and once with two namespace
workers through the store, plays the very same games (every shard's positions, targets and results equal), and the
store's share of the self-play time is printed (the issue's target: under 5%)."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from services.store_server import StoreServerError, start_store_server, weed_binary
from shared.layout import DataLayout
from shared.shards import list_shards, read_shard

ZEROFORGE = [sys.executable, "-m", "cli"]
ROOT = Path(__file__).resolve().parents[2]
TINY = ["--set", "game.blocks=1", "--set", "game.channels=8", "--set", "search.simulations=16",
        "--set", "selfplay.games_per_job=32", "--set", "selfplay.jobs_per_generation=4",
        "--set", "train.steps_per_generation=20", "--set", "train.batch_size=32",
        "--set", "gate.games=8", "--set", "gate.jobs=2", "--set", "gate.simulations=4", "--set", "gate.anchor_games=0",
        "--set", "pipeline.seed=11"]


def _can_make_namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("redis-server") is None:
        return False
    try:
        weed_binary()
    except StoreServerError:
        return False
    probe = f"zfp{os.getpid() % 100000}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return False
    try:     # a namespace alone is not enough: the test links it with a veth pair
        linked = subprocess.run(["ip", "link", "add", f"{probe}h", "type", "veth", "peer", "name", f"{probe}n"],
                                capture_output=True).returncode == 0
        if linked:
            subprocess.run(["ip", "link", "delete", f"{probe}h"], capture_output=True)
        return linked
    finally:
        subprocess.run(["ip", "netns", "delete", probe], capture_output=True)


pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900),
              pytest.mark.skipif(not _can_make_namespaces(), reason="needs root, iproute2, redis-server, SeaweedFS")]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _make_namespace(name: str, index: int) -> tuple[str, str]:
    """A namespace `name` linked to this host by a veth pair; returns (host address, namespace address)."""
    host_ip, ns_ip = f"10.231.{index}.1", f"10.231.{index}.2"
    _ip("netns", "add", name)
    _ip("link", "add", f"{name}h", "type", "veth", "peer", "name", f"{name}n")
    _ip("link", "set", f"{name}n", "netns", name)
    _ip("addr", "add", f"{host_ip}/30", "dev", f"{name}h")
    _ip("link", "set", f"{name}h", "up")
    _ip("netns", "exec", name, "ip", "addr", "add", f"{ns_ip}/30", "dev", f"{name}n")
    _ip("netns", "exec", name, "ip", "link", "set", f"{name}n", "up")
    _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
    return host_ip, ns_ip


def _start(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "PREFECT_API_URL", "ZEROFORGE_DATA_DIR") and not k.startswith("AWS_")}
    env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", PREFECT_HOME=str(tmp_path / "prefect"),
               PYTHONPATH=str(ROOT))
    return env


def _selfplay_seconds(output: str) -> float:
    found = re.findall(r"gen 1 self-play: \d+/\d+ jobs done, 0 running \((\d+) s\)", output)
    return float(found[-1]) if found else float("nan")


def _games_by_job(data: Path) -> dict[str, object]:
    """The generation-1 shards of a run, by job index (the job ids differ between data directories)."""
    return {path.path.stem.rsplit("-", 1)[-1]: read_shard(path.path)
            for path in list_shards(DataLayout(data, "tictactoe").shards_dir)}


def test_namespace_workers_play_the_same_games_as_local_workers(tmp_path: Path) -> None:
    base = _base_env(tmp_path)
    local = subprocess.run(ZEROFORGE + ["run", "--game", "tictactoe", "--generations", "1", "--data-dir",
                                        str(tmp_path / "local"), "--set", "pipeline.local_workers=2", *TINY],
                           env=base, cwd=tmp_path, capture_output=True, text=True, timeout=420)
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]

    names = [f"zf{secrets.token_hex(3)}{i}" for i in (1, 2)]
    procs: list[subprocess.Popen] = []
    redis = store = None
    try:
        links = [_make_namespace(name, 100 + i) for i, name in enumerate(names)]
        password = secrets.token_hex(16)
        port = 6390 + os.getpid() % 1000
        redis_conf = tmp_path / "redis.conf"
        redis_conf.write_text(f"requirepass {password}\n")
        redis_conf.chmod(0o600)
        redis = _start(["redis-server", str(redis_conf), "--port", str(port), "--bind", "127.0.0.1",
                        *[host for host, _ in links], "--save", "", "--appendonly", "no"], base, tmp_path)
        store = start_store_server(tmp_path / "store", host="0.0.0.0", bucket="zeroforge-netns")
        keys = store.environment()
        url = "s3://zeroforge-netns/run"
        for (host, _), name in zip(links, names):   # each namespace reaches Redis and the store at its link's host end
            (tmp_path / name).mkdir()
            env = {**base, **keys, "REDIS_URL": f"redis://:{password}@{host}:{port}/0",
                   "AWS_ENDPOINT_URL": f"http://{host}:{store.endpoint.rsplit(':', 1)[1]}"}
            procs.append(_start(["ip", "netns", "exec", name, *ZEROFORGE, "worker", "--store", url, "--data-dir",
                                 str(tmp_path / name / "work"), "--heartbeat", "1", "--name", name], env,
                                tmp_path / name))
        home = dict(base, **keys, REDIS_URL=f"redis://:{password}@127.0.0.1:{port}/0")
        data = tmp_path / "remote"
        DataLayout(data, "tictactoe").data_id()
        procs.append(_start(ZEROFORGE + ["worker", "--data-dir", str(data), "--queues", "train", "--heartbeat", "1"],
                            home, tmp_path))
        started = time.monotonic()
        remote = subprocess.run(ZEROFORGE + ["run", "--game", "tictactoe", "--generations", "1", "--data-dir",
                                             str(data), "--store", url, "--no-local-workers", *TINY],
                                env=home, cwd=tmp_path, capture_output=True, text=True, timeout=420)
        assert remote.returncode == 0, remote.stdout[-3000:] + remote.stderr[-3000:]
        remote_s = time.monotonic() - started
    finally:
        _stop(procs)
        if redis is not None:
            _stop([redis])
        if store is not None:
            store.stop()
        for name in names:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)   # takes its veth pair along

    played_here, played_there = _games_by_job(tmp_path / "local"), _games_by_job(data)
    assert sorted(played_here) == sorted(played_there) == ["sp0000", "sp0001", "sp0002", "sp0003"]
    for job, here in played_here.items():                      # the same games, position by position
        there = played_there[job]
        for field in ("states", "pi", "z", "game_results"):
            assert np.array_equal(np.asarray(getattr(here, field)), np.asarray(getattr(there, field))), (job, field)
    for name in names:
        assert not list((tmp_path / name).rglob("*.h5")), f"namespace worker {name} kept shards"
    share = re.search(r"self-play: store transfers (.*)", remote.stdout + remote.stderr)
    assert share, remote.stdout[-3000:]
    print(f"\nself-play of generation 1: local workers {_selfplay_seconds(local.stdout + local.stderr):.0f} s, "
          f"namespace workers {_selfplay_seconds(remote.stdout + remote.stderr):.0f} s; store transfers "
          f"{share.group(1)}; the namespace run took {remote_s:.0f} s in all")
