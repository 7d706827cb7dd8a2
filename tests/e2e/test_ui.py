"""`zeroforge ui` starts a real Prefect server, and flows started afterwards report their runs to it."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from flows.prefect_env import server_is_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _flow_run_names(api: str) -> list[str]:
    request = urllib.request.Request(f"{api}/flow_runs/filter", data=json.dumps({"limit": 50}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return [run["name"] for run in json.loads(response.read())]


def test_ui_serves_flow_runs(tmp_path: Path) -> None:
    port = _free_port()
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "prefect"))
    env.pop("PREFECT_API_URL", None)
    ui = subprocess.Popen([sys.executable, "-m", "cli", "ui", "--data-dir", str(tmp_path), "--port", str(port)],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    api = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 150
        while not server_is_up(api):
            assert ui.poll() is None, ui.stdout.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the Prefect server did not come up"
            time.sleep(1)
        from flows.prefect_env import recorded_ui_server

        deadline = time.monotonic() + 30
        while recorded_ui_server(tmp_path) != api:  # runs on this data directory find it, and only they do
            assert time.monotonic() < deadline, "`zeroforge ui` did not record its server for its data directory"
            time.sleep(0.5)
        assert recorded_ui_server(tmp_path / "elsewhere") is None
        data = str(tmp_path / "data")
        script = (
            "from pathlib import Path\n"
            "from flows.promote import decide_flow\n"
            "from services.initial_model import ensure_initial_model\n"
            "from shared.config import PipelineConfig, load_config\n"
            "from shared.layout import DataLayout\n"
            "from shared.registry import ModelRegistry\n"
            "cfg = load_config(PipelineConfig, 'tictactoe', env=None, overrides={'game.blocks': 1, 'game.channels': 8})\n"
            f"layout = DataLayout(Path({data!r}), 'tictactoe')\n"
            "best = ensure_initial_model(layout, cfg.game, 0)\n"
            "registry = ModelRegistry(layout.registry_dir)\n"
            "candidate = registry.register(registry.get(best).path, parent=best, generation=1).version\n"
            f"decide_flow(config=cfg, generation=1, data_dir={data!r}, candidate=candidate, "
            "best=best, gate={'promote': False, 'reason': 'ui test'})\n"
        )
        run = subprocess.run([sys.executable, "-c", script], env=dict(env, PREFECT_API_URL=api), capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "tictactoe-gen1-decide" in _flow_run_names(api)
    finally:
        os.killpg(ui.pid, signal.SIGTERM)
        try:
            ui.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(ui.pid, signal.SIGKILL)
            ui.wait()
