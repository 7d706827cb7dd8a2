"""`zeroforge ui` serves one data directory: its runs, artifacts and deployments, and none of another's.

Real parts throughout: two `zeroforge ui` processes (real Prefect servers on their own databases, each serving
its deployments from a child process), two tiny tic-tac-toe generations (private redis-server, a local
worker): the first by `zeroforge run`, which finds its directory's server by itself, the second by a run of
the served `run` deployment; then a rollback through the served deployment. Deployment runs are started
through Prefect's REST API, as the browser's Run button does.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flows.naming import run_identity
from flows.prefect_env import recorded_ui_port, recorded_ui_server
from shared.layout import DataLayout
from shared.registry import ModelRegistry

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

GAME = "tictactoe"
#: Two tiny generations; score_above 0.01 promotes every candidate that is not all but crushed, so the
#: registry has promotions to roll back through.
TINY = ["--set", "game.blocks=1", "--set", "game.channels=8", "--set", "selfplay.games_per_job=16",
        "--set", "selfplay.jobs_per_generation=1", "--set", "search.simulations=8",
        "--set", "train.steps_per_generation=20", "--set", "gate.games=20", "--set", "gate.jobs=1",
        "--set", "gate.simulations=4", "--set", "gate.anchor_games=0", "--set", "gate.promote_rule=score_above",
        "--set", "gate.threshold=0.01", "--set", "pipeline.local_workers=1"]


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    for name in ("PREFECT_API_URL", "PREFECT_HOME", "REDIS_URL", "ZEROFORGE_REDIS_URL"):
        env.pop(name, None)
    return env


def _post(api: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(f"{api}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


def _get(api: str, path: str) -> Any:
    with urllib.request.urlopen(f"{api}{path}", timeout=20) as response:
        return json.loads(response.read())


def _start_ui(data: Path, *options: str) -> tuple[subprocess.Popen, str]:
    """`zeroforge ui` on `data` without --port; returns the process and the API URL it recorded for `data`."""
    ui = subprocess.Popen([sys.executable, "-m", "cli", "ui", "--data-dir", str(data), "--game", GAME, *options],
                          env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while (api := recorded_ui_server(data)) is None:
        assert ui.poll() is None, f"`zeroforge ui` exited with {ui.returncode}"
        assert time.monotonic() < deadline, "`zeroforge ui` did not record a live server for its data directory"
        time.sleep(1)
    return ui, api


def _stop(ui: subprocess.Popen) -> None:
    os.killpg(ui.pid, signal.SIGTERM)
    try:
        ui.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(ui.pid, signal.SIGKILL)
        ui.wait()


def _deployments(api: str, wanted: int) -> dict[str, dict[str, Any]]:
    """{flow name: deployment} once the ui's serving child has registered `wanted` deployments."""
    deadline = time.monotonic() + 120
    while len(deployments := _post(api, "/deployments/filter", {})) < wanted:
        assert time.monotonic() < deadline, f"only {len(deployments)} deployments registered"
        time.sleep(1)
    flows = {f["id"]: f["name"] for f in _post(api, "/flows/filter", {})}
    return {flows[d["flow_id"]]: d for d in deployments}


def _logs(api: str, run_id: str) -> str:
    """The last log lines of flow run `run_id` (for assertion messages)."""
    logs = _post(api, "/logs/filter", {"logs": {"flow_run_id": {"any_": [run_id]}}, "limit": 200})
    return "\n".join(entry["message"] for entry in logs)[-3000:]


def _wait_for_run(api: str, run_id: str, timeout_s: float = 180) -> dict[str, Any]:
    """The flow run `run_id` once it has finished (completed, failed or crashed)."""
    deadline = time.monotonic() + timeout_s
    while (run := _get(api, f"/flow_runs/{run_id}"))["state"]["type"] not in ("COMPLETED", "FAILED", "CRASHED"):
        assert time.monotonic() < deadline, f"flow run {run['name']} still {run['state']['type']}"
        time.sleep(1)
    return run


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed (CI installs it)")
def test_ui_per_data_directory_with_runs_artifacts_and_rollback(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    ui1, api1 = _start_ui(first, *TINY)
    ui2 = None
    try:
        assert recorded_ui_port(first) == int(api1.rsplit(":", 1)[1].split("/")[0])
        ident = run_identity(first, create=False)
        prefix = f"{GAME}-{ident}"
        deployments = _deployments(api1, 3)
        assert sorted(deployments) == ["promote", "rollback", "run"]
        for deployment in deployments.values():
            assert deployment["name"] == prefix
            assert deployment["parameters"]["data_dir"] == str(first) and deployment["parameters"]["game"] == GAME

        assert deployments["run"]["parameters"]["settings"] == TINY[1::2]   # the ui's --set values

        # generation 1 from the command line, generation 2 from the browser's Run button on the run deployment
        # (generations: the number done in the data directory that the run is to reach)
        run = subprocess.run([sys.executable, "-m", "cli", "run", "--game", GAME, "--generations", "1",
                              "--data-dir", str(first), *TINY], env=_env(), capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert f"prefect: reporting to {api1}" in run.stdout   # found its directory's server by itself
        from_ui = _post(api1, f"/deployments/{deployments['run']['id']}/create_flow_run",
                        {"parameters": {"generations": 2}})
        done = _wait_for_run(api1, from_ui["id"], timeout_s=600)
        assert done["state"]["type"] == "COMPLETED", _logs(api1, done["id"])
        assert done["name"] == f"{prefix}-run"
        assert [v.generation for v in ModelRegistry(DataLayout(first, GAME).registry_dir).list()] == [0, 1, 2]

        names = {r["name"] for r in _post(api1, "/flow_runs/filter", {"limit": 200})}
        for name in ("pipeline", "run", "gen1", "gen1-gate", "gen1-decide", "gen2", "gen2-gate", "gen2-decide"):
            assert f"{prefix}-{name}" in names, sorted(names)
        keys = {a["key"] for a in _post(api1, "/artifacts/filter", {"limit": 200}) if a.get("key")}
        for key in ("gen1-selfplay", "gen1-gate", "gen1-gate-report", "gen2-gate", "gen2-strength"):
            assert f"{prefix}-{key}" in keys, sorted(keys)
        assert all(key.startswith(prefix) for key in keys), sorted(keys)

        # a second ui on another directory, side by side: another port, its own (empty) world
        ui2, api2 = _start_ui(second)
        assert api2 != api1
        assert _post(api2, "/flow_runs/filter", {"limit": 200}) == []
        assert _post(api2, "/artifacts/filter", {"limit": 200}) == []
        other = _deployments(api2, 3)
        assert {d["name"] for d in other.values()} == {f"{GAME}-{run_identity(second, create=False)}"}
        assert all(d["parameters"]["data_dir"] == str(second) for d in other.values())

        # roll back from the "browser": a run of the rollback deployment, as its Run button makes one
        registry = ModelRegistry(DataLayout(first, GAME).registry_dir)
        before = registry.best_version()
        promoted = [v.version for v in registry.list() if v.status == "promoted"]
        assert before == promoted[-1] and len(promoted) >= 2, [(v.version, v.status) for v in registry.list()]
        flow_run = _post(api1, f"/deployments/{deployments['rollback']['id']}/create_flow_run", {})
        done = _wait_for_run(api1, flow_run["id"])
        assert done["state"]["type"] == "COMPLETED", _logs(api1, done["id"])
        assert done["name"] == f"{prefix}-rollback"
        assert registry.best_version() == promoted[-2]
        assert registry.history()[-1]["event"] == "rollback"
        assert registry.history()[-1]["reason"] == "rolled back from the UI"

        # a run of another directory's deployment parameters is refused, not reported to the wrong server
        wrong = _post(api1, f"/deployments/{deployments['rollback']['id']}/create_flow_run",
                      {"parameters": {"data_dir": str(second), "game": GAME}})
        assert _wait_for_run(api1, wrong["id"])["state"]["type"] == "FAILED"
        assert registry.best_version() == promoted[-2]
    finally:
        _stop(ui1)
        if ui2 is not None:
            _stop(ui2)
    assert recorded_ui_server(first) is None and recorded_ui_port(first) == int(api1.rsplit(":", 1)[1].split("/")[0])


def test_flow_run_page_screenshot(tmp_path: Path) -> None:
    """A flow run's page renders in a headless browser with the run's name (needs playwright and its Chromium)."""
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is not installed here, so no headless browser can load the UI")
    from playwright.sync_api import Error, sync_playwright

    ui, api = _start_ui(tmp_path / "data")
    try:
        promote = _deployments(api, 3)["promote"]   # a promotion of a version that does not exist: a quick run
        flow_run = _wait_for_run(api, _post(api, f"/deployments/{promote['id']}/create_flow_run",
                                            {"parameters": {"version": "999999"}})["id"])
        with sync_playwright() as p:
            try:
                browser = p.chromium.launch()
            except Error as exc:
                pytest.skip(f"playwright cannot start Chromium here ({str(exc).splitlines()[0]})")
            page = browser.new_page()
            page.goto(f"{api.removesuffix('/api')}/runs/flow-run/{flow_run['id']}", wait_until="networkidle")
            shot = tmp_path / "flow-run.png"
            page.screenshot(path=str(shot))
            text = page.inner_text("body")
            browser.close()
        assert flow_run["name"] in text and shot.stat().st_size > 10_000
    finally:
        _stop(ui)
