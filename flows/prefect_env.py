"""Prefect settings for zeroforge: a project-local PREFECT_HOME, no telemetry, bounded API timeouts, and which
Prefect server (if any) a run reports to.

Each data directory is its own Prefect world: PREFECT_HOME is always <data>/prefect (its database, settings and
profiles), so runs of two data directories never mix, and `zeroforge ui --data-dir D` shows D's runs only.

Call `configure_prefect(data_dir)` before importing prefect (the CLI does). A run reports to a Prefect server
only when the user named one (PREFECT_API_URL) or when `zeroforge ui` serves this data directory (it records
its address in <data>/prefect/ui-server.json while it runs); otherwise flows run in Prefect's local mode, with a
temporary server on the local database under PREFECT_HOME. A server that answers on the default port but was
not started for this data directory is never used: another user's or another run's server is not ours to
report to.

In local mode `zeroforge run` starts that temporary server in the background (`start_local_server`) while Redis and
the workers start, and stops it itself after the last flow (`stop_local_server`), once Prefect's pending logs and
events have reached it.

Every Prefect API request is bounded (PREFECT_API_REQUEST_TIMEOUT, PREFECT_CLIENT_MAX_RETRIES), so a server
lost in the middle of a run makes the run fail with an error instead of hanging on it.
"""
from __future__ import annotations

import json
import os
import socket
import time
import urllib.parse
import urllib.request
from pathlib import Path

from shared.atomic import atomic_output
from shared.layout import prefect_home, ui_server_file

UI_HOST = "127.0.0.1"
UI_PORT = 4200
#: Prefect client settings that keep a lost server from hanging a run (user-exported values win).
API_REQUEST_TIMEOUT_S = "20"
CLIENT_MAX_RETRIES = "2"
#: Set by `zeroforge ui` for the deployments it serves: the data directory whose server runs them report to.
UI_DATA_DIR_ENV = "ZEROFORGE_UI_DATA_DIR"


def ui_url(host: str = UI_HOST, port: int = UI_PORT) -> str:
    """The UI's address, e.g. http://127.0.0.1:4200."""
    return f"http://{host}:{port}"


def server_is_up(api_url: str, timeout_s: float = 1.0) -> bool:
    """True when a Prefect server answers its health check at `api_url` (e.g. http://127.0.0.1:4200/api)."""
    try:
        with urllib.request.urlopen(f"{api_url.rstrip('/')}/health", timeout=timeout_s) as response:
            return response.status == 200
    except (OSError, ValueError):
        return False


def port_is_free(port: int, host: str = UI_HOST) -> bool:
    """True when a server could listen on `host`:`port` now (nothing else is bound to it)."""
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _write_record(data_dir: Path, record: dict) -> Path:
    path = ui_server_file(data_dir)
    with atomic_output(path) as handle:
        handle.write(json.dumps(record).encode("utf-8"))
    return path


def record_ui_server(data_dir: Path, api_url: str, pid: int) -> Path:
    """Record that the Prefect server at `api_url` (process `pid`) serves `data_dir` (written by `zeroforge ui`)."""
    return _write_record(data_dir, {"api_url": api_url, "pid": pid, "port": urllib.parse.urlsplit(api_url).port})


def forget_ui_server(data_dir: Path, pid: int) -> None:
    """Mark the server of `record_ui_server` gone if the record still names process `pid`; its port stays
    recorded, so the next `zeroforge ui` on `data_dir` gets the same address when the port is free."""
    recorded = _read_record(ui_server_file(data_dir))
    if recorded is not None and recorded.get("pid") == pid:
        _write_record(data_dir, {"port": recorded.get("port")})


def recorded_ui_port(data_dir: Path) -> int | None:
    """The port the last `zeroforge ui` on `data_dir` used (running or not), None when none is recorded."""
    recorded = _read_record(ui_server_file(data_dir)) or {}
    port = recorded.get("port")
    return port if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535 else None


def choose_ui_port(data_dir: Path, host: str = UI_HOST) -> int:
    """The port for `zeroforge ui` on `data_dir` when none is given: the one recorded for it if free, else
    UI_PORT (4200) if free, else any free port the system hands out."""
    for port in (recorded_ui_port(data_dir), UI_PORT):
        if port is not None and port_is_free(port, host):
            return port
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def check_served_data_dir(data_dir: str | Path) -> None:
    """In a run started from a `zeroforge ui` deployment, check that `data_dir` is the directory that UI serves
    (its runs report to that directory's server); ValueError in one line otherwise. No-op elsewhere."""
    served = os.environ.get(UI_DATA_DIR_ENV)
    if served and Path(data_dir).resolve() != Path(served).resolve():
        raise ValueError(f"data_dir {data_dir} is not the data directory this UI serves ({served}); start "
                         f"`zeroforge ui --data-dir {data_dir}` and run it from there")


def _read_record(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def recorded_ui_server(data_dir: Path) -> str | None:
    """The API URL of the `zeroforge ui` server recorded for `data_dir` when its process lives and it answers."""
    recorded = _read_record(ui_server_file(data_dir))
    if recorded is None or not isinstance(recorded.get("api_url"), str) or not isinstance(recorded.get("pid"), int):
        return None
    if not recorded["api_url"].startswith(("http://", "https://")) or recorded["pid"] <= 0:
        return None
    try:
        os.kill(recorded["pid"], 0)      # PermissionError too: another user's process is not ours
    except (OSError, OverflowError):
        return None
    return recorded["api_url"] if server_is_up(recorded["api_url"]) else None


def configure_prefect(data_dir: Path, use_recorded_ui: bool = True) -> dict[str, str]:
    """Set the Prefect environment variables for this process and its children; return what was set.

    PREFECT_HOME is always this data directory's (a PREFECT_HOME exported for another purpose would mix data
    directories in one database). Respects the other values the user exported (PREFECT_API_URL, timeouts).
    Without PREFECT_API_URL and with `use_recorded_ui`, points PREFECT_API_URL at the `zeroforge ui` server
    recorded for this data directory, if one runs; otherwise Prefect runs in local mode.
    """
    home = str(prefect_home(data_dir))
    applied = {} if os.environ.get("PREFECT_HOME") == home else {"PREFECT_HOME": home}
    os.environ["PREFECT_HOME"] = home
    settings = {
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": os.environ.get("PREFECT_LOGGING_LEVEL", "INFO"),
        "PREFECT_API_REQUEST_TIMEOUT": API_REQUEST_TIMEOUT_S,
        "PREFECT_CLIENT_MAX_RETRIES": CLIENT_MAX_RETRIES,
    }
    for key, value in settings.items():
        if key not in os.environ:
            os.environ[key] = value
            applied[key] = value
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
    if use_recorded_ui and "PREFECT_API_URL" not in os.environ:
        api = recorded_ui_server(data_dir)
        if api is not None:
            os.environ["PREFECT_API_URL"] = api
            applied["PREFECT_API_URL"] = api
    return applied


class _DetachedSubprocess:
    """The `subprocess` module as Prefect's server module sees it after detach_local_server(): the same, except that
    Popen starts the child in a session of its own, tied to this process (it gets SIGKILL when this process dies
    without stopping it, kill -9 included: shared.child_processes)."""

    def __getattr__(self, name: str):
        import subprocess

        return getattr(subprocess, name)

    @staticmethod
    def Popen(*args, **kwargs):  # noqa: N802 (the name Prefect calls)
        from shared.child_processes import start_tied

        return start_tied(*args, **{**kwargs, "start_new_session": True})


def detach_local_server() -> bool:
    """Start Prefect's temporary local-mode server (Prefect 3's SubprocessASGIServer) in a session of its own, so
    that Ctrl-C in the terminal, which signals the whole foreground process group, does not kill it before the
    interrupted flow runs are recorded as Cancelled (Prefect still stops it when this process exits, and it gets
    SIGKILL when this process is killed without a chance to stop it). Call after
    configure_prefect, in local mode only. Returns False, changing nothing, when this Prefect has no such server
    module (the runs are then recorded only if the server survives the Ctrl-C)."""
    try:
        from prefect.server.api import server as prefect_server
    except ImportError:
        return False
    if not hasattr(prefect_server, "SubprocessASGIServer") or not hasattr(prefect_server, "subprocess"):
        return False
    prefect_server.subprocess = _DetachedSubprocess()
    return True


class LocalServerStart:
    """Prefect's temporary local-mode server, started in a background thread so that its start (a minute on a busy
    machine the first time a data directory is used: it creates its database) overlaps with starting Redis, the
    workers and loading the flows. Call `wait()` before the first flow runs: a flow that came first would find
    the server marked running but not yet answering."""

    def __init__(self, database: Path | None = None) -> None:
        """database: the server's SQLite file when it is Prefect's default (PREFECT_HOME/prefect.db), so that a new
        one starts from the empty database kept for this Prefect version (flows.prefect_template); None: leave the
        database to Prefect."""
        import threading

        import prefect

        from flows.prefect_template import seed_database, template_path

        self.database = database
        self.started = time.monotonic()
        self.seconds: float | None = None
        #: whether the server creates its database (fresh), and whether that starts from the kept empty one (seeded)
        self.fresh = database is not None and not database.exists()
        self._template = template_path(prefect.__version__)
        self.seeded = self.fresh and seed_database(database, self._template)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="zeroforge-prefect-server", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        from prefect.server.api.server import SubprocessASGIServer

        from flows.prefect_template import save_template

        try:
            SubprocessASGIServer().start()
            if self.fresh and not self.seeded:   # before any flow runs: the new database holds no runs yet
                save_template(self.database, self._template)
        except BaseException as exc:   # handed to the caller of wait()
            self._error = exc
        self.seconds = time.monotonic() - self.started

    def ready(self) -> bool:
        """True once the server answers (or its start failed)."""
        return not self._thread.is_alive()

    def wait(self) -> float:
        """Block until the server answers; returns the seconds its start took, or raises what stopped it."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self.seconds or 0.0


def start_local_server(data_dir: Path) -> LocalServerStart | None:
    """Start Prefect's temporary local-mode server for `data_dir` in the background (see LocalServerStart) when this
    process runs in local mode (no PREFECT_API_URL); None otherwise, and then nothing is started. Call after
    configure_prefect and detach_local_server."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    default_database = "PREFECT_API_DATABASE_CONNECTION_URL" not in os.environ
    return LocalServerStart(prefect_home(data_dir) / "prefect.db" if default_database else None)


def stop_local_server(drain_s: float = 3.0, grace_s: float = 1.0) -> float:
    """After the last flow of a local-mode run: hand Prefect's pending logs and events to its temporary server (at
    most `drain_s` seconds), then stop the server: SIGTERM, SIGKILL `grace_s` seconds later (uvicorn's graceful
    shutdown waits for idle keep-alive connections; Prefect's own stop at exit waits 5 s for it). Returns the
    seconds it took; 0.0 when no temporary server runs."""
    from prefect._internal.concurrency.services import QueueService
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer._instances.get(None)
    process = getattr(server, "server_process", None)
    if process is None:
        return 0.0
    import subprocess

    started = time.monotonic()
    QueueService.drain_all(timeout=drain_s)
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    server.stop()   # forgets the process (already gone) and the instance, so that nothing waits for it at exit
    return time.monotonic() - started
