"""`zeroforge run` as a process: SIGTERM and Ctrl-C stop everything it started (Ctrl-C reaches the run only: the
pipeline stops first, then the workers, then Redis, with no traceback); the same command again finishes the
generations it asked for, and once they are done says so; `zeroforge status` then answers from the data
directory; a job that fails all its tries stops it with one line, and running the same command again resumes and
finishes, as it does after a kill -9 inside a job that has no retries; a kill -9 takes the run's servers and
workers with it; a Prefect server that stops answering makes it fail in bounded time, in one line."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flows.naming import name_prefix
from shared.layout import DataLayout, redis_url_file
from shared.phase import read_phase
from shared.registry import ModelRegistry
from tests.e2e.test_chaos import AofRedis
from tests.e2e.test_worker_death import _alive
from tests.e2e.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]

TINY = ["--set", "game.blocks=1", "--set", "game.channels=8", "--set", "search.simulations=8",
        "--set", "selfplay.games_per_job=32", "--set", "train.steps_per_generation=20", "--set", "train.batch_size=32",
        "--set", "train.replay_window_positions=500", "--set", "gate.games=8", "--set", "gate.jobs=2",
        "--set", "gate.simulations=4", "--set", "gate.anchor_games=0", "--set", "pipeline.worker_heartbeat_s=1"]


def _env(**more: str) -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", **more)
    for name in ("REDIS_URL", "ZEROFORGE_REDIS_URL", "PREFECT_API_URL", "PREFECT_HOME"):
        if name not in more:
            env.pop(name, None)
    return env


def _default_sigint() -> None:
    """In the child before exec: Ctrl-C at its default, as a terminal's foreground job has it (a suite launched from a
    background shell, `cmd &`, would otherwise hand its ignored SIGINT down, and the Ctrl-C tests would test nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str], env: dict[str, str], cwd: Path, session: bool = False) -> tuple[subprocess.Popen, list[str]]:
    """Start `zeroforge ARGS` (with `session`, in a process group of its own, as a terminal's foreground job is);
    returns the process and a list that fills with its output lines."""
    proc = subprocess.Popen([sys.executable, "-m", "cli", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=session, preexec_fn=_default_sigint)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    return proc, lines


def _children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(proc.name))
    return found


@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C")])
def test_a_signal_stops_the_run_and_everything_it_started(tmp_path: Path, sig, code, word) -> None:
    run, lines = _start(["run", "--game", "tictactoe", "--generations", "3", "--data-dir", str(tmp_path / "data"),
                         *TINY], _env(), tmp_path, session=True)
    try:
        wait_until(lambda: any("self-play" in line for line in lines), 120, "the first self-play jobs", 0.2)
        children = _children(run.pid)
        assert len(children) >= 3, children          # the private redis-server and two workers
        if sig == signal.SIGINT:   # Ctrl-C in a terminal: the whole foreground process group gets it
            os.killpg(run.pid, sig)
        else:
            run.send_signal(sig)
        signalled = time.monotonic()
        assert run.wait(timeout=60) == code, "".join(lines[-30:])
        print(f"\n{word} during self-play: the run exited {time.monotonic() - signalled:.1f} s later")
    finally:
        if run.poll() is None:
            run.kill()
    wait_until(lambda: not any(_alive(pid) for pid in children), 15, "the run's redis-server and workers to stop")
    text = "".join(lines)
    assert "Traceback" not in text
    data = tmp_path / "data"
    assert not redis_url_file(data).exists()          # the private Redis's record goes with it
    if sig == signal.SIGTERM:
        assert "stopped (SIGTERM); rerun the same command to resume" in text
        return
    # Ctrl-C: one line naming what was interrupted; the flow runs end Cancelled, not Crashed; a rerun says where
    stopped = [line for line in text.splitlines() if line.startswith("stopped (Ctrl-C)")]
    assert len(stopped) == 1 and re.fullmatch(r"stopped \(Ctrl-C\) during gen 1 (self-play|training|gate)( .*)?; "
                                              r"rerun the same command to resume", stopped[0]), text[-3000:]
    states = _flow_run_states(data)
    prefix = name_prefix("tictactoe", data)
    assert states[f"{prefix}-pipeline"] == "CANCELLED" and states[f"{prefix}-gen1"] == "CANCELLED", states
    assert "CRASHED" not in states.values(), states
    assert read_phase(DataLayout(data, "tictactoe").phase_file)["state"] == "interrupted"
    rerun, lines = _start(["run", "--game", "tictactoe", "--generations", "3", "--data-dir", str(data), *TINY],
                          _env(), tmp_path)
    try:
        wait_until(lambda: any("generation" in line and "to run" in line for line in lines), 120, "the resume line")
        assert "resuming tictactoe: 0 of 3 generations done; 3 to run" in "".join(lines)
        assert redis_url_file(data).exists()          # the rerun's private Redis, for `zeroforge status`
    finally:
        rerun.terminate()
        rerun.wait(timeout=60)


def test_kill_9_of_the_run_takes_its_redis_prefect_server_and_workers_with_it(tmp_path: Path) -> None:
    """A run killed with SIGKILL (or by the OOM killer) runs no cleanup: its private redis-server, Prefect's
    temporary server and its local workers, each in a session of its own, still end with it (shared.child_processes),
    so that nothing is left holding ports and memory."""
    run, lines = _start(["run", "--game", "tictactoe", "--generations", "3", "--data-dir", str(tmp_path / "data"),
                         *TINY], _env(), tmp_path, session=True)
    children: dict[int, str] = {}
    try:
        wait_until(lambda: any("self-play" in line for line in lines), 120, "the first self-play jobs", 0.2)
        children = {pid: _cmdline(pid) for pid in _children(run.pid)}
        started = sorted("redis" if "redis-server" in cmd else "prefect" if "uvicorn" in cmd else
                         "worker" if " cli worker " in cmd else cmd for cmd in children.values())
        assert started == ["prefect", "redis", "worker", "worker"], children
        run.send_signal(signal.SIGKILL)            # the run alone: everything it started is in other sessions
        killed_at = time.monotonic()
        assert run.wait(timeout=30) == -signal.SIGKILL
        wait_until(lambda: not any(_alive(pid) for pid in children), 15,
                   "the killed run's redis-server, Prefect server and workers to end with it", 0.01)
        print(f"\nkill -9 of the run: its Redis, Prefect server and 2 workers gone {time.monotonic() - killed_at:.2f} s "
              "later")
    finally:
        if run.poll() is None:
            run.kill()
        for pid in children:                       # ours: never leave them running when the test fails
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    # its record of the Redis stays (nothing cleaned up); `zeroforge status` finds it dead, drops it, answers offline
    data = tmp_path / "data"
    assert redis_url_file(data).exists()
    status = subprocess.run([sys.executable, "-m", "cli", "status", "--data-dir", str(data)], env=_env(), cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    assert "has ended without removing that record" in status.stderr and not redis_url_file(data).exists()
    assert f"nothing runs on {data}" in status.stdout and "tictactoe: 0 generation(s) done" in status.stdout, status.stdout


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _worker_logs(data: Path) -> str:
    return "".join(path.read_text(errors="replace") for path in sorted((data / "logs").glob("worker-*.log")))


def test_ctrl_c_in_the_last_generation_then_the_same_command_runs_only_that_one_and_status_answers_after(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    # self-play jobs of a few seconds, so that the Ctrl-C lands inside generation 2
    args = ["run", "--game", "tictactoe", "--generations", "2", "--data-dir", str(data), *TINY,
            "--set", "selfplay.games_per_job=256"]
    run, lines = _start(args, _env(), tmp_path, session=True)
    try:
        wait_until(lambda: any("gen 2 self-play: 0/2 jobs done" in line for line in lines), 360,
                    "generation 2's self-play", 0.1)
        children = _children(run.pid)
        redis_pids = [pid for pid in children if "redis-server" in _cmdline(pid)]
        worker_pids = [pid for pid in children if " cli worker " in _cmdline(pid)]
        assert len(redis_pids) == 1 and len(worker_pids) == 2, [_cmdline(pid) for pid in children]
        # nothing the run started shares the terminal's process group: Ctrl-C reaches the run alone
        assert all(os.getpgid(pid) != os.getpgid(run.pid) for pid in children), children
        os.killpg(run.pid, signal.SIGINT)
        signalled = time.monotonic()
        assert run.wait(timeout=60) == 130, "".join(lines[-30:])
        stop_s = time.monotonic() - signalled
    finally:
        if run.poll() is None:
            run.kill()
    wait_until(lambda: not any(_alive(pid) for pid in redis_pids + worker_pids), 5, "Redis and the workers to stop")
    text = "".join(lines)
    print(f"\nCtrl-C in generation 2's self-play: the run, its workers and its Redis stopped {stop_s:.1f} s later")
    for bad in ("Traceback", "Crash detected", "did not stop within", "RedisLostError"):
        assert bad not in text, text[-3000:]
    assert "Traceback" not in _worker_logs(data) and "RedisLostError" not in _worker_logs(data)
    assert re.search(r"^stopped \(Ctrl-C\) during gen 2 ", text, re.MULTILINE), text[-3000:]
    assert stop_s <= 10.0
    # the same command: generation 2 only, with the run's overall line
    started = time.monotonic()
    rerun = subprocess.run([sys.executable, "-m", "cli", *args], env=_env(), cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    resume_s = time.monotonic() - started
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    out = rerun.stdout + rerun.stderr
    assert "resuming tictactoe: 1 of 2 generations done; 1 to run" in out
    assert re.search(r"^tictactoe generation 2 of 2: 1 done, 1 to go at [0-9.]+ min a generation; run ETA "
                     r"\d\d:\d\d \([^)]+\)$", out, re.MULTILINE), out[-3000:]
    assert "generation 3" not in out and "Task run '" not in out and "Flow run '" not in out
    versions = ModelRegistry(DataLayout(data, "tictactoe").registry_dir).list()
    assert [v.generation for v in versions] == [0, 1, 2]
    # once more: nothing left to run, said in one line, exit 0, nothing started
    again = subprocess.run([sys.executable, "-m", "cli", *args], env=_env(), cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.startswith("tictactoe: 2 of 2 generations done; nothing to run")
    assert "pass --generations 3 or more" in again.stdout and "redis" not in again.stdout
    # status with nothing running answers from the data directory
    status = subprocess.run([sys.executable, "-m", "cli", "status", "--data-dir", str(data)], env=_env(),
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stdout + status.stderr
    best = ModelRegistry(DataLayout(data, "tictactoe").registry_dir).best_version()
    assert "tictactoe: 2 generation(s) done, 3 model(s); last phase: gen 2 done" in status.stdout, status.stdout
    assert f"best:      {best} " in status.stdout and "last gate: generation 2, 000003 vs " in status.stdout
    print(f"resume of generation 2 of 2: {resume_s:.0f} s")


def test_a_run_without_workers_warns_within_30_s_naming_the_queue_and_the_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run, lines = _start(["run", "--game", "tictactoe", "--generations", "1", "--data-dir", str(data), *TINY,
                         "--no-local-workers"], _env(), tmp_path)
    try:
        wait_until(lambda: any("self-play: 0/2 jobs done" in line for line in lines), 180, "the self-play jobs", 0.2)
        waiting = time.monotonic()
        warning = wait_until(lambda: [line for line in lines if line.startswith("warning: no worker")], 60,
                              "the no-worker warning", 0.2)
        warned_s = time.monotonic() - waiting
        assert warning[0].strip() == (f"warning: no worker listens on queue selfplay; start one with: zeroforge worker "
                                      f"--data-dir {data} --queues selfplay (with REDIS_URL set to this run's Redis)")
        assert warned_s <= 30
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130
    finally:
        if run.poll() is None:
            run.kill()
    assert len([line for line in lines if line.startswith("warning: no worker")]) == 1   # not repeated at once
    print(f"\nno worker: the warning came {warned_s:.1f} s after the self-play jobs were enqueued")


def _flow_run_states(data: Path) -> dict[str, str]:
    """{flow run name: state type} from the Prefect database of the runs on `data` (the newest run of each name)."""
    with sqlite3.connect(data / "prefect" / "prefect.db") as db:
        rows = db.execute("SELECT name, state_type FROM flow_run ORDER BY created").fetchall()
    return {name: state for name, state in rows}


def _long_selfplay_args(data: Path) -> list[str]:
    """One generation of tic-tac-toe whose one self-play job lasts about 5 s (so that a kill lands inside it; with
    512 games at 8 simulations, 0.5 s a job, a loaded CI machine once stalled a test that long), one local worker,
    no retries. One job a generation: with a second one, a restarted worker could take it and be stopped with a
    failing run, which the rerun redoes after that worker's heartbeat expires (the next test), a slower path."""
    return ["run", "--game", "tictactoe", "--generations", "1", "--data-dir", str(data), *TINY,
            "--set", "pipeline.job_retries=0", "--set", "pipeline.local_workers=1",
            "--set", "selfplay.games_per_job=4096", "--set", "search.simulations=64",
            "--set", "selfplay.jobs_per_generation=1"]


def _running_selfplay_job(client) -> tuple[str, int]:
    """Wait for a self-play job to start; returns its id and the pid of the worker running it."""
    entry = wait_until(lambda: client.zrange("rq:wip:selfplay", 0, -1), 120, "a self-play job to start")
    job_id, execution = entry[0].decode().rsplit(":", 1)
    name = client.hget(f"rq:execution:{job_id}:{execution}", "worker_name").decode()
    return job_id, int(client.hget(f"rq:worker:{name}", "pid"))


def _finishes(args: list[str], env: dict[str, str], cwd: Path, data: Path) -> str:
    """Run `zeroforge ARGS` to its end; assert it finished generation 1; returns its output."""
    rerun, lines = _start(args, env, cwd)
    try:
        code = rerun.wait(timeout=240)
    except subprocess.TimeoutExpired:
        rerun.kill()
        rerun.wait()
        raise AssertionError("the rerun did not finish in 240 s; its output:\n" + "".join(lines[-40:])) from None
    assert code == 0, "".join(lines[-40:])
    assert "=== zeroforge run finished ===" in "".join(lines)
    versions = ModelRegistry(DataLayout(data, "tictactoe").registry_dir).list()
    assert [v.generation for v in versions] == [0, 1] and versions[1].status in ("promoted", "rejected")
    return "".join(lines)


def test_a_job_that_fails_all_its_tries_stops_the_run_in_one_line_and_a_rerun_finishes(tmp_path: Path) -> None:
    server = AofRedis(tmp_path / "redis")
    server.start()
    args = _long_selfplay_args(tmp_path / "data")
    env = _env(REDIS_URL=server.url)
    try:
        run, lines = _start(args, env, tmp_path)
        job_id, worker_pid = _running_selfplay_job(server.client())
        os.kill(worker_pid, signal.SIGKILL)            # the run's worker: ours to kill
        assert run.wait(timeout=120) == 1
        text = "".join(lines)
        errors = [line for line in text.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and f"job {job_id} failed: its worker stopped heartbeating" in errors[0], text[-3000:]
        assert "rerun the same command to resume" in errors[0] and "Traceback" not in text
        _finishes(args, env, tmp_path, tmp_path / "data")     # at once: the failed job's records are still in Redis
    finally:
        server.kill()


def test_a_run_killed_inside_a_job_without_retries_is_resumed_by_the_same_command(tmp_path: Path) -> None:
    """kill -9 of the run (its workers die with it) leaves its job running in a Redis that keeps it; the rerun
    finds it abandoned once the dead worker's heartbeat expires and runs it again instead of failing."""
    server = AofRedis(tmp_path / "redis")
    server.start()
    args = _long_selfplay_args(tmp_path / "data")
    env = _env(REDIS_URL=server.url)
    try:
        run, lines = _start(args, env, tmp_path, session=True)
        job_id, worker_pid = _running_selfplay_job(server.client())
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=60)
        wait_until(lambda: not _alive(worker_pid), 15, "the killed run's worker to die with it")
        out = _finishes(args, env, tmp_path, tmp_path / "data")
        assert f"job {job_id} was left running by a worker of an earlier run" in out, out[-3000:]
    finally:
        server.kill()


def test_a_prefect_server_that_stops_answering_does_not_hang_the_run(tmp_path: Path) -> None:
    """A server that accepts connections and never answers (the worst case of a lost server): the run fails within
    the bounded API timeouts (shortened here to 3 s a request) with one line, and stops what it started."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    api = f"http://127.0.0.1:{listener.getsockname()[1]}/api"
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: [accepted.append(listener.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
    try:
        start = time.monotonic()
        run, lines = _start(["run", "--game", "tictactoe", "--generations", "1", "--data-dir", str(tmp_path / "data"),
                             *TINY], _env(PREFECT_API_URL=api, PREFECT_API_REQUEST_TIMEOUT="3"), tmp_path)
        wait_until(lambda: _children(run.pid), 60, "the run's children")
        children = _children(run.pid)
        assert run.wait(timeout=180) == 1
        seconds = time.monotonic() - start
    finally:
        listener.close()
    text = "".join(lines)
    assert f"prefect: reporting to {api}" in text
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "rerun the same command to resume" in errors[0] and "Traceback" not in text, text
    wait_until(lambda: not any(_alive(pid) for pid in children), 15, "the run's redis-server and workers to stop")
    print(f"\nPrefect server that never answers: the run stopped after {seconds:.0f} s")


def test_redis_gone_for_longer_than_the_outage_budget_stops_the_run_in_one_line_and_a_rerun_finishes(
        tmp_path: Path) -> None:
    server = AofRedis(tmp_path / "redis")
    server.start()
    args = ["run", "--game", "tictactoe", "--generations", "1", "--data-dir", str(tmp_path / "data"), *TINY,
            "--set", "pipeline.redis_outage_s=5"]
    env = _env(REDIS_URL=server.url)
    try:
        run, lines = _start(args, env, tmp_path)
        client = server.client()
        wait_until(lambda: client.zrange("rq:wip:selfplay", 0, -1) or client.zcard("rq:finished:selfplay"), 120,
                    "self-play to begin")
        children = [pid for pid in _children(run.pid)]
        server.kill()
        lost_at = time.monotonic()
        assert run.wait(timeout=120) == 1
        stopped_s = time.monotonic() - lost_at
        text = "".join(lines)
        errors = [line for line in text.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "unreachable for" in errors[0] and "rerun the same command" in errors[0], text
        assert "Traceback" not in text and server.password not in text
        wait_until(lambda: not any(_alive(pid) for pid in children), 15, "the run's workers to stop")
        server.start()
        rerun, lines = _start(args, env, tmp_path)
        assert rerun.wait(timeout=240) == 0, "".join(lines[-40:])
        versions = ModelRegistry(DataLayout(tmp_path / "data", "tictactoe").registry_dir).list()
        assert [v.generation for v in versions] == [0, 1] and versions[1].status in ("promoted", "rejected")
    finally:
        server.kill()
    print(f"\nRedis gone for good (outage budget 5 s): the run stopped {stopped_s:.1f} s later, in one line")


def test_a_time_budget_stops_the_run_before_a_generation_that_would_overrun_it(tmp_path: Path) -> None:
    """--max-hours 0.001 (3.6 s) is shorter than any generation: the first one runs (there is nothing yet to judge
    by), then the run stops cleanly instead of starting the second of its 3."""
    data = tmp_path / "data"
    run, lines = _start(["run", "--game", "tictactoe", "--generations", "3", "--max-hours", "0.001",
                         "--data-dir", str(data), *TINY, "--set", "pipeline.local_workers=1"], _env(), tmp_path)
    assert run.wait(timeout=300) == 0, "".join(lines[-40:])
    text = "".join(lines)
    assert "=== zeroforge run finished ===" in text and "pipeline.max_hours=0.001 used" in text, text[-3000:]
    assert "starting tictactoe: 0 of 3 generations done; 3 to run, for at most 0.001 h" in text, text[:3000]
    assert re.search(r"tictactoe generation 1 of 3: 0 done; run ETA after this generation; time budget ends "
                     r"[0-9]{2}:[0-9]{2} ", text), text[:3000]
    versions = ModelRegistry(DataLayout(data, "tictactoe").registry_dir).list()
    assert [v.generation for v in versions] == [0, 1]
