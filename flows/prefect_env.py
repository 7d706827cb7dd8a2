"""Prefect settings for zeroforge: a project-local PREFECT_HOME, no telemetry, a patient ephemeral server.

Call `configure_prefect(data_dir)` before importing prefect (the CLI does).  Flows run in Prefect's
default local mode: with no PREFECT_API_URL they start a temporary server on the local database under
PREFECT_HOME; when `zeroforge ui` is running, `configure_prefect` points PREFECT_API_URL at it, so the
flows started after it show in the UI (both use the same database either way).
"""
from __future__ import annotations

import os
import urllib.request
from pathlib import Path

from shared.layout import prefect_home

UI_HOST = "127.0.0.1"
UI_PORT = 4200


def ui_url(host: str = UI_HOST, port: int = UI_PORT) -> str:
    return f"http://{host}:{port}"


def server_is_up(api_url: str, timeout_s: float = 1.0) -> bool:
    """True when a Prefect server answers its health check at `api_url` (e.g. http://127.0.0.1:4200/api)."""
    try:
        with urllib.request.urlopen(f"{api_url.rstrip('/')}/health", timeout=timeout_s) as response:
            return response.status == 200
    except OSError:
        return False


def configure_prefect(data_dir: Path, use_running_ui: bool = True) -> dict[str, str]:
    """Set the Prefect environment variables for this process and its children; return what was set.

    Respects values the user already exported (PREFECT_HOME, PREFECT_API_URL).
    """
    settings = {
        "PREFECT_HOME": str(prefect_home(data_dir)),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": os.environ.get("PREFECT_LOGGING_LEVEL", "INFO"),
    }
    applied = {}
    for key, value in settings.items():
        if key not in os.environ:
            os.environ[key] = value
            applied[key] = value
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
    if use_running_ui and "PREFECT_API_URL" not in os.environ:
        api = f"{ui_url()}/api"
        if server_is_up(api):
            os.environ["PREFECT_API_URL"] = api
            applied["PREFECT_API_URL"] = api
    return applied
