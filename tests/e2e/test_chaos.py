"""Chaos: a real `zeroforge run` (real redis-server with a password and an append-only file, real worker processes,
real Prefect flows) loses a worker to SIGKILL in the middle of a self-play, a training and a gate job, and its
Redis to SIGKILL + restart in the middle of a self-play job. Nothing may be lost or duplicated (shards, registry),
recovery must take seconds, and the password must appear in no output, log, command line or Prefect database.

The recovery times are printed (run with -s to see them); README.md's RELIABILITY section quotes them.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from services.redis_server import free_port
from services.worker import live_workers
from shared.games import make_game
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.shards import list_shards, read_shard

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]

GENERATIONS, JOBS, GAMES = 2, 2, 256
SETTINGS = {
    "game.blocks": 1, "game.channels": 16, "search.simulations": 64,
    "selfplay.games_per_job": GAMES, "selfplay.jobs_per_generation": JOBS,
    "train.steps_per_generation": 400, "train.batch_size": 64, "train.checkpoint_every": 50,
    "train.replay_window_positions": 5000,
    "gate.games": 40, "gate.jobs": 2, "gate.simulations": 48, "gate.early_stop": "false",
    "gate.anchor": "random", "gate.anchor_games": 8,
    "pipeline.local_workers": 2, "pipeline.worker_heartbeat_s": 1, "pipeline.job_retries": 2,
}


class AofRedis:
    """A redis-server on a fixed port with a password and appendfsync always, killed and restarted at will."""

    def __init__(self, workdir: Path):
        self.workdir, self.port, self.password = workdir, free_port(), secrets.token_hex(16)
        workdir.mkdir()
        self.config = workdir / "redis.conf"
        fd = os.open(self.config, os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(f"port {self.port}\nbind 127.0.0.1\ndir {workdir}\nappendonly yes\nappendfsync always\n"
                         f"save \"\"\nrequirepass {self.password}\nlogfile {workdir / 'server.log'}\n")
        self.url = f"redis://:{self.password}@127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([shutil.which("redis-server"), str(self.config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT)
        client = self.client()
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                return
            except redis.RedisError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5, retry=None)


@dataclass
class Kill:
    kind: str
    job_id: str
    execution: str
    at: float
    requeued_after_s: float | None = None
    running_again_after_s: float | None = None
    finished_after_s: float | None = None


@dataclass
class Chaos:
    """Watches Redis while the run goes; kills one worker per job kind mid-job, then restarts Redis mid-job."""

    redis: AofRedis
    kills: list[Kill] = field(default_factory=list)
    to_kill: list[str] = field(default_factory=lambda: ["selfplay", "train", "eval"])
    redis_restart: dict = field(default_factory=dict)
    redis_down_s: float = 3.0

    def running(self, client: redis.Redis, queue: str) -> list[tuple[str, str]]:
        """(job id, execution id) of the jobs running on `queue`, oldest first."""
        entries = client.zrange(f"rq:wip:{queue}", 0, -1)
        return [tuple(e.decode().rsplit(":", 1)) for e in entries]

    def worker_pid(self, client: redis.Redis, job_id: str, execution_id: str) -> int | None:
        name = client.hget(f"rq:execution:{job_id}:{execution_id}", "worker_name")
        pid = client.hget(f"rq:worker:{name.decode()}", "pid") if name else None
        return int(pid) if pid else None

    def step(self, client: redis.Redis, started_seen: dict[str, float]) -> None:
        now = time.monotonic()
        for kill in self.kills:
            if kill.finished_after_s is not None:
                continue
            job = Job.fetch_many([kill.job_id], connection=client, serializer=JSONSerializer)[0]
            if job is None:
                continue
            status = job.get_status(refresh=False)
            executions = {e for j, e in self.running(client, job.origin) if j == kill.job_id}
            if kill.requeued_after_s is None and (status != JobStatus.STARTED or executions - {kill.execution}):
                kill.requeued_after_s = now - kill.at
            if kill.running_again_after_s is None and executions - {kill.execution}:
                kill.running_again_after_s = now - kill.at
            if status == JobStatus.FINISHED:
                kill.finished_after_s = now - kill.at
                kill.requeued_after_s = kill.requeued_after_s or kill.finished_after_s
                kill.running_again_after_s = kill.running_again_after_s or kill.finished_after_s
        for queue in ("selfplay", "train", "eval"):
            for job_id, execution in self.running(client, queue):
                started_seen.setdefault(f"{job_id}:{execution}", now)
        if self.to_kill and not any(k.finished_after_s is None for k in self.kills):
            kind = self.to_kill[0]
            for job_id, execution in self.running(client, kind):
                if now - started_seen.get(f"{job_id}:{execution}", now) < 0.3:
                    continue   # let it get going
                pid = self.worker_pid(client, job_id, execution)
                if pid is None:
                    continue
                os.kill(pid, signal.SIGKILL)   # a worker process of the run this test started
                self.kills.append(Kill(kind, job_id, execution, time.monotonic()))
                self.to_kill.pop(0)
                return
        if not self.to_kill and not self.redis_restart and all(k.finished_after_s is not None for k in self.kills):
            running = self.running(client, "selfplay")
            if running and now - started_seen.get(f"{running[0][0]}:{running[0][1]}", now) >= 0.3:
                self.restart_redis(running[0][0])
        if self.redis_restart and "finished_after_s" not in self.redis_restart:
            job = Job.fetch_many([self.redis_restart["job_id"]], connection=client, serializer=JSONSerializer)[0]
            if job is not None and job.get_status(refresh=False) == JobStatus.FINISHED:
                self.redis_restart["finished_after_s"] = now - self.redis_restart["up_at"]

    def restart_redis(self, running_job_id: str) -> None:
        """SIGKILL Redis while `running_job_id` runs, restart it `redis_down_s` later from its append-only file."""
        down = time.monotonic()
        self.redis.kill()
        time.sleep(self.redis_down_s)
        self.redis.start()
        up = time.monotonic()
        self.redis_restart = {"down_s": up - down, "up_at": up, "job_id": running_job_id}


def _run_env(tmp_path: Path, url: str) -> dict[str, str]:
    env = dict(os.environ, REDIS_URL=url, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    for name in ("PREFECT_API_URL", "PREFECT_HOME", "ZEROFORGE_REDIS_URL"):
        env.pop(name, None)
    return env


def test_kills_and_a_redis_restart_lose_and_duplicate_nothing(tmp_path: Path, redis_down_s: float = 3.0) -> None:
    server = AofRedis(tmp_path / "redis")
    server.start()
    data = tmp_path / "data"
    args = [sys.executable, "-m", "cli", "run", "--game", "tictactoe", "--generations", str(GENERATIONS),
            "--data-dir", str(data)]
    for key, value in SETTINGS.items():
        args += ["--set", f"{key}={value}"]
    out = open(tmp_path / "run.out", "w+")
    run = subprocess.Popen(args, env=_run_env(tmp_path, server.url), stdout=out, stderr=subprocess.STDOUT,
                           cwd=tmp_path)
    chaos = Chaos(server, redis_down_s=redis_down_s)
    client = server.client()
    started_seen: dict[str, float] = {}
    cmdlines: set[str] = set()   # every command line of the run's children seen until a worker's was
    try:
        deadline = time.monotonic() + 500
        while run.poll() is None:
            assert time.monotonic() < deadline, "the chaos run did not finish"
            try:
                chaos.step(client, started_seen)
                if not any(" worker " in c for c in cmdlines):
                    cmdlines.update(_cmdlines_of_children(run.pid))
            except redis.RedisError:
                pass
            time.sleep(0.05)
    finally:
        if run.poll() is None:
            run.kill()
        out.seek(0)
        output = out.read()
    try:
        assert run.returncode == 0, output[-5000:]
        assert "=== zeroforge run finished ===" in output
        _assert_nothing_lost_or_duplicated(data)
        assert [k.kind for k in chaos.kills] == ["selfplay", "train", "eval"], (chaos.kills, output[-3000:])
        assert chaos.redis_restart, "Redis was never restarted (no self-play job ran long enough)"
        for kill in chaos.kills:
            assert kill.finished_after_s is not None and kill.running_again_after_s < 30, kill
        recovery_after_restart = chaos.redis_restart.get("finished_after_s")
        assert recovery_after_restart is not None and recovery_after_restart < 60, chaos.redis_restart
        assert live_workers(client, "selfplay") == []     # every worker stopped with the run; ghosts do not count
        _assert_password_nowhere(server.password, output, data, cmdlines)
        assert f"redis://:***@127.0.0.1:{server.port}/0" in output
    finally:
        server.kill()
    print("\nchaos run: kills and recovery (seconds after the SIGKILL)")
    for kill in chaos.kills:
        print(f"  {kill.kind:8s} job {kill.job_id[-40:]}: requeued {kill.requeued_after_s:.1f}, running again "
              f"{kill.running_again_after_s:.1f}, finished {kill.finished_after_s:.1f}")
    print(f"  redis    SIGKILL + restart from its append-only file: down {chaos.redis_restart['down_s']:.1f} s; "
          f"the self-play job that was running finished {recovery_after_restart:.1f} s after Redis was back")
    (tmp_path / "chaos.json").write_text(json.dumps({"kills": [vars(k) for k in chaos.kills],
                                                     "redis": chaos.redis_restart,
                                                     "after_restart_s": recovery_after_restart}))


def _cmdlines_of_children(pid: int) -> list[str]:
    """Command lines of the run and of its children (its workers), as `ps` shows them.

    A child caught between fork and exec (or already a zombie) has an empty command line; it is left out.
    """
    lines = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if (int(proc.name) == pid or ppid == pid) and cmdline.strip():
            lines.append(cmdline)
    return lines


def _assert_password_nowhere(password: str, output: str, data: Path, cmdlines: set[str]) -> None:
    assert password not in output
    assert any(" worker " in c for c in cmdlines), cmdlines
    assert not any(password in c for c in cmdlines), "a password on a command line"
    for path in data.rglob("*"):
        if path.is_file():
            assert password.encode() not in path.read_bytes(), f"the password is in {path}"


def _assert_nothing_lost_or_duplicated(data: Path) -> None:
    game = make_game("tictactoe")
    layout = DataLayout(data, "tictactoe")
    registry = ModelRegistry(layout.registry_dir)
    versions = registry.list()
    assert [v.generation for v in versions] == list(range(GENERATIONS + 1)), "a candidate was lost or duplicated"
    assert all(v.status in ("promoted", "rejected") for v in versions)
    for v in versions[1:]:
        assert v.gate["games"] == 40, v.gate
    decisions = [h for h in registry.history() if h["event"] in ("promote", "reject")]
    assert sorted(h["version"] for h in decisions) == sorted(v.version for v in versions)
    shards = list_shards(layout.shards_dir)
    assert sorted(s.generation for s in shards) == sorted(list(range(1, GENERATIONS + 1)) * JOBS)
    assert len({s.job_id for s in shards}) == len(shards)
    for shard in shards:
        assert read_shard(shard.path, game=game).num_games == GAMES
    leftovers = [p for p in layout.shards_dir.rglob("*") if p.is_file() and p.suffix != ".h5"]
    assert not leftovers and not any(layout.quarantine_dir.glob("*")), leftovers
