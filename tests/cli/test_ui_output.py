"""`zeroforge ui` passes the Prefect server's output on without Prefect's banner (its `prefect config set` advice
is wrong for zeroforge), and names the served deployments for what they do."""
from __future__ import annotations

import io
from pathlib import Path

from prefect.cli._server_utils import generate_welcome_blurb

from cli.server_output import forward_without_banner, is_banner_line
from flows.naming import deployment_name, run_identity

SERVER_LINES = ["INFO:     Started server process [4242]\n", "INFO:     Waiting for application startup.\n",
                "INFO:     Uvicorn running on http://127.0.0.1:4200 (Press CTRL+C to quit)\n",
                "02:41:07.123 | WARNING | prefect.server.services - a service fell behind\n", "Server stopped!\n"]


def test_prefects_banner_is_dropped_and_the_servers_own_lines_pass() -> None:
    banner = generate_welcome_blurb("http://127.0.0.1:4200", ui_enabled=True)   # what `prefect server start` prints
    assert "prefect config set PREFECT_API_URL" in banner
    assert all(is_banner_line(line) for line in banner.splitlines())
    assert not any(is_banner_line(line) for line in SERVER_LINES)
    sink = io.StringIO()
    forward_without_banner(io.StringIO(banner + "\n" + "".join(SERVER_LINES)), sink).join(timeout=10)
    assert sink.getvalue() == "".join(SERVER_LINES)


def test_deployments_are_named_for_what_they_do(tmp_path: Path) -> None:
    ident = run_identity(tmp_path)
    assert deployment_name("rollback", "tictactoe", tmp_path) == f"rollback tictactoe-{ident}"
    assert deployment_name("run", "gomoku-15", tmp_path) == f"run gomoku-15-{ident}"
