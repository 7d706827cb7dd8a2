"""`zeroforge status` against a real redis-server and a real worker process: the worker is listed with its device
and host, a failed job with the last line of its error, the pipeline's phase; a SIGKILLed worker is gone within a
minute (1 s heartbeat here); no Redis gives one line; a run's private Redis is found through its 0600 record."""
from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rq import Queue
from rq.serializers import JSONSerializer

from cli.local_workers import spawn_local_workers, stop_processes
from services.jobqueue import ALL_QUEUES
from services.redis_server import free_port, record_url
from shared.layout import DataLayout, redis_url_file
from shared.phase import write_phase
from tests.e2e.test_chaos import AofRedis
from tests.e2e.test_run_lifecycle import _env
from tests.e2e.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def _status(data_dir: Path, env: dict[str, str], *more: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", "status", "--data-dir", str(data_dir), *more], env=env,
                          capture_output=True, text=True, timeout=120)


def _json(data_dir: Path, env: dict[str, str]) -> dict:
    done = _status(data_dir, env, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_status_lists_workers_jobs_and_the_phase_and_forgets_a_killed_worker(tmp_path: Path) -> None:
    server = AofRedis(tmp_path / "redis")
    server.start()
    data = tmp_path / "data"
    layout = DataLayout(data, "tictactoe")
    layout.data_id()
    write_phase(layout.phase_file, 3, "self-play", "1/2 jobs")
    env = _env(REDIS_URL=server.url)
    procs = spawn_local_workers(1, server.url, list(ALL_QUEUES), data, tmp_path / "logs", heartbeat_s=1)
    try:
        first = wait_until(lambda: _json(data, env)["workers"], 90, "the worker to show", 0.5)
        worker = first[0]
        assert worker["device"] == "cpu" and worker["host"] == socket.gethostname() and worker["pid"] == procs[0].pid
        assert worker["queues"] == list(ALL_QUEUES) and worker["heartbeat_age_s"] <= 4
        Queue("eval", connection=server.client(), serializer=JSONSerializer).enqueue_call(
            func="os.getcwd", kwargs={"payload": {}}, job_id="zf-test-refused")
        failed = wait_until(lambda: _json(data, env)["failed"], 60, "the refused job to fail", 0.5)
        assert failed[0]["id"] == "zf-test-refused" and failed[0]["queue"] == "eval"
        assert "RefusedJobError: job zf-test-refused refused: 'os.getcwd'" in failed[0]["error"]
        shown = _json(data, env)
        assert shown["queues"]["eval"] == {"queued": 0, "running": 0, "failed": 1}
        assert shown["pipeline"]["tictactoe"]["phase"] == "self-play" and server.password not in json.dumps(shown)
        table = _status(data, env)
        assert table.returncode == 0, table.stderr
        assert worker["name"] in table.stdout and "gen 3 self-play 1/2 jobs (running)" in table.stdout
        assert "RefusedJobError" in table.stdout and server.password not in table.stdout
        os.kill(procs[0].pid, signal.SIGKILL)          # our worker, started above
        killed_at = time.monotonic()
        wait_until(lambda: not _json(data, env)["workers"], 60, "the killed worker to disappear", 0.5)
        gone_s = time.monotonic() - killed_at
    finally:
        stop_processes(procs)
        server.kill()
    print(f"\nzeroforge status: a SIGKILLed worker (1 s heartbeat) disappeared {gone_s:.1f} s after the kill")


def test_status_says_in_one_line_when_a_named_redis_is_down_and_forgets_the_record_of_a_dead_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = _env()
    missing = _status(data, env)
    assert missing.returncode == 2 and "no Redis to ask" in missing.stderr and "Traceback" not in missing.stderr
    url = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"   # nothing listens there
    path = record_url(redis_url_file(data), url)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    named = _status(data, dict(env, REDIS_URL=url))   # a Redis the user named: its absence is the answer
    lines = [line for line in named.stderr.splitlines() if line.strip()]
    assert named.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: no Redis reachable at redis://")
    assert "s3cret-pw" not in named.stderr + named.stdout
    assert path.exists()
    stale = _status(data, env)   # only the record of a run that died without removing it: removed, then offline
    assert "has ended without removing that record" in stale.stderr and not path.exists()
    assert stale.returncode == 2 and "no Redis to ask" in stale.stderr and "Traceback" not in stale.stderr
    assert "s3cret-pw" not in stale.stderr + stale.stdout
