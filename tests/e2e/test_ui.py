"""`zeroforge ui` serves one data directory: its runs, artifacts and deployments, and none of another's.

Real parts throughout: two `zeroforge ui` processes (real Prefect servers on their own databases, each serving
its deployments from a child process), two tiny tic-tac-toe generations (private redis-server, a local
worker): the first by `zeroforge run`, which finds its directory's server by itself, the second by a run of
the served `run` deployment; then a rollback through the served deployment, and one to a version that does not
exist, which must leave one clear line in its log. Deployment runs are started through Prefect's REST API, as
the browser's Run button does. A headless Chromium (Debian's, driven by Playwright) then loads the pages a user
reads: the gate run's page with its log, the gate and curves artifacts (rounded figures, tables that fit) and the
deployments list (titles that say what each deployment does).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from flows.naming import run_identity
from flows.prefect_env import recorded_ui_port, recorded_ui_server
from shared.layout import DataLayout
from shared.registry import ModelRegistry

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900),
              pytest.mark.skipif(shutil.which("redis-server") is None,
                                 reason="redis-server is not installed (CI installs it)")]
#: Set (as .ci/run does) to fail instead of skip when no headless Chromium can start.
REQUIRE_BROWSER_ENV = "ZEROFORGE_REQUIRE_BROWSER"

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


#: HTTP answers a Prefect server gives while it is briefly busy (its SQLite database locked by a background
#: service answers 503); Prefect's own client retries these, and so do the calls below.
_RETRIED_STATUS = (429, 502, 503)


def _request(request: urllib.request.Request | str) -> Any:
    """The JSON answer to `request`, retried with a growing pause (about 30 s in all) on a busy server's answers."""
    for attempt in range(8):
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code not in _RETRIED_STATUS or attempt == 7:
                raise
            time.sleep(0.25 * 2 ** attempt)


def _post(api: str, path: str, body: dict[str, Any]) -> Any:
    return _request(urllib.request.Request(f"{api}{path}", data=json.dumps(body).encode(),
                                           headers={"Content-Type": "application/json"}, method="POST"))


def _get(api: str, path: str) -> Any:
    return _request(f"{api}{path}")


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
    if ui.poll() is not None:
        return
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


def _finished_log(api: str, run_id: str, timeout_s: float = 60) -> str:
    """The log of finished flow run `run_id` once its last line ("Finished in state ...") has reached the server
    (a run's log lines are sent in batches, after its state)."""
    deadline = time.monotonic() + timeout_s
    while "Finished in state" not in (log := _logs(api, run_id)):
        assert time.monotonic() < deadline, f"the log of flow run {run_id} has no 'Finished in state' line: {log}"
        time.sleep(1)
    return log


def _wait_for_run(api: str, run_id: str, timeout_s: float = 180) -> dict[str, Any]:
    """The flow run `run_id` once it has finished (completed, failed or crashed)."""
    deadline = time.monotonic() + timeout_s
    while (run := _get(api, f"/flow_runs/{run_id}"))["state"]["type"] not in ("COMPLETED", "FAILED", "CRASHED"):
        assert time.monotonic() < deadline, f"flow run {run['name']} still {run['state']['type']}"
        time.sleep(1)
    return run


@dataclass
class ServedRun:
    """A `zeroforge ui` on `data` with two generations trained: the first by `zeroforge run` (its terminal output,
    stdout then stderr, in `run_output`), the second by a run of the served `run` deployment (`from_ui`, the finished flow run)."""
    ui: subprocess.Popen
    api: str
    data: Path
    prefix: str
    deployments: dict[str, dict[str, Any]]
    run_output: str
    from_ui: dict[str, Any]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedRun]:
    root = tmp_path_factory.mktemp("ui")
    data = root / "first"
    ui, api = _start_ui(data, *TINY)
    try:
        deployments = _deployments(api, 3)
        # generation 1 from the command line, generation 2 from the browser's Run button on the run deployment
        # (generations: the number done in the data directory that the run is to reach)
        run = subprocess.run([sys.executable, "-m", "cli", "run", "--game", GAME, "--generations", "1",
                              "--data-dir", str(data), *TINY], env=_env(), capture_output=True, text=True,
                             timeout=600, cwd=root)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        from_ui = _post(api, f"/deployments/{deployments['run']['id']}/create_flow_run",
                        {"parameters": {"generations": 2}})
        done = _wait_for_run(api, from_ui["id"], timeout_s=600)
        assert done["state"]["type"] == "COMPLETED", _logs(api, done["id"])
        yield ServedRun(ui, api, data, f"{GAME}-{run_identity(data, create=False)}", deployments,
                        run.stdout + run.stderr, done)
    finally:
        _stop(ui)


def _chromium(playwright):
    """A headless Chromium: Debian's /usr/bin/chromium when installed (Playwright's own download may be
    unreachable), else Playwright's. Skips when none starts, unless ZEROFORGE_REQUIRE_BROWSER is set (CI)."""
    from playwright.sync_api import Error

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        return playwright.chromium.launch(executable_path=executable)
    except Error as exc:
        if os.environ.get(REQUIRE_BROWSER_ENV):
            raise
        pytest.skip(f"no headless Chromium starts here ({str(exc).splitlines()[0]})")


def _page_text(page, url: str, *expected: str) -> str:
    """The visible text of `url` once every string of `expected` shows (the UI loads its data after the page)."""
    page.goto(url, wait_until="domcontentloaded")
    for text in expected:
        page.get_by_text(text, exact=False).first.wait_for(timeout=60_000)
    return page.inner_text("body")


#: A figure with more decimals than any table of zeroforge shows (a raw float such as 0.5484514405974973).
RAW_FLOAT = re.compile(r"\d\.\d{5,}")


def test_the_ui_pages_read_well_in_a_headless_browser(served: ServedRun, tmp_path: Path) -> None:
    """The gate run's page with its log line (the decision and why), the gate and curves artifacts (rounded, every
    table inside the page) and the deployments list (named for what they do), as a headless Chromium shows them."""
    if importlib.util.find_spec("playwright") is None:
        if os.environ.get(REQUIRE_BROWSER_ENV):
            pytest.fail("playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed here, so no headless browser can load the UI")
    from playwright.sync_api import sync_playwright

    base, prefix = served.api.removesuffix("/api"), served.prefix
    gate_run = next(r for r in _post(served.api, "/flow_runs/filter", {"limit": 200})
                    if r["name"] == f"{prefix}-gen1-gate")
    with sync_playwright() as p:
        browser = _chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            text = _page_text(page, f"{base}/runs/flow-run/{gate_run['id']}", gate_run["name"], "gen 1 gate")
            page.screenshot(path=str(tmp_path / "gate-run.png"))
            assert re.search(r"-> (PROMOTE|reject) \((score|interval|all \d+ games drawn)", text), text[-2000:]

            assert json.loads(urllib.request.urlopen(f"{base}/ui-settings", timeout=20).read())["api_url"] \
                == served.api   # the pages read this data directory's server, whatever its port

            text = _page_text(page, _artifact_url(served, f"{prefix}-gen1-gate"), "W/D/L", "Elo 95% CI")
            page.screenshot(path=str(tmp_path / "gate-table.png"))
            assert not RAW_FLOAT.search(text), text
            assert not _clipped_tables(page), _clipped_tables(page)

            text = _page_text(page, _artifact_url(served, f"{prefix}-curves"), "gate [95% CI]", "anchor Elo")
            page.screenshot(path=str(tmp_path / "curves.png"))
            assert not RAW_FLOAT.search(text), text
            assert not _clipped_tables(page), _clipped_tables(page)

            text = _page_text(page, f"{base}/deployments", f"rollback {prefix}", f"promote {prefix}", f"run {prefix}")
            page.screenshot(path=str(tmp_path / "deployments.png"))
        finally:
            browser.close()


def _artifact_url(served: ServedRun, key: str) -> str:
    """The UI page of the newest artifact with key `key`."""
    newest = _post(served.api, "/artifacts/filter", {"artifacts": {"key": {"any_": [key]}}, "sort": "CREATED_DESC",
                                                      "limit": 1})
    assert newest, f"no artifact {key}"
    return f"{served.api.removesuffix('/api')}/artifacts/artifact/{newest[0]['id']}"


def _clipped_tables(page) -> list[str]:
    """The tables of the page whose right edge lies beyond the element that holds them (clipped or scrolled
    out of sight), each as its header row's text."""
    return page.evaluate("""() => [...document.querySelectorAll('table')].filter(t => {
        const box = t.parentElement.getBoundingClientRect();
        return t.getBoundingClientRect().right > box.right + 1 || t.scrollWidth > t.clientWidth + 1
            || t.parentElement.scrollWidth > t.parentElement.clientWidth + 1;
    }).map(t => (t.rows[0] || t).innerText)""")


def test_ui_per_data_directory_with_runs_artifacts_and_rollback(served: ServedRun, tmp_path: Path) -> None:
    first, api1, prefix, deployments = served.data, served.api, served.prefix, served.deployments
    assert recorded_ui_port(first) == int(api1.rsplit(":", 1)[1].split("/")[0])
    assert sorted(deployments) == ["promote", "rollback", "run"]
    for flow_name, deployment in deployments.items():
        assert deployment["name"] == f"{flow_name} {prefix}"          # named for what it does
        assert deployment["parameters"]["data_dir"] == str(first) and deployment["parameters"]["game"] == GAME
    assert deployments["run"]["parameters"]["settings"] == TINY[1::2]   # the ui's --set values

    assert f"prefect: reporting to {api1}" in served.run_output   # found its directory's server by itself
    # the terminal's gate line says why: "gen 1 gate 000002 vs 000001: W/D/L ... -> PROMOTE (score 0.450 above 0.01)"
    assert re.search(r"gen 1 gate \d+ vs \d+: W/D/L .* -> (PROMOTE|reject) \((score|interval|all \d+ games drawn)",
                     served.run_output), served.run_output[-3000:]
    assert served.from_ui["name"] == f"{prefix}-run"
    assert [v.generation for v in ModelRegistry(DataLayout(first, GAME).registry_dir).list()] == [0, 1, 2]

    names = {r["name"] for r in _post(api1, "/flow_runs/filter", {"limit": 200})}
    for name in ("pipeline", "run", "gen1", "gen1-gate", "gen1-decide", "gen2", "gen2-gate", "gen2-decide"):
        assert f"{prefix}-{name}" in names, sorted(names)
    keys = {a["key"] for a in _post(api1, "/artifacts/filter", {"limit": 200}) if a.get("key")}
    for key in ("gen1-selfplay", "gen1-gate", "gen1-gate-report", "gen2-gate", "gen2-strength"):
        assert f"{prefix}-{key}" in keys, sorted(keys)
    assert all(key.startswith(prefix) for key in keys), sorted(keys)

    # a second ui on another directory, side by side: another port, its own (empty) world
    second = tmp_path / "second"
    ui2, api2 = _start_ui(second)
    try:
        assert api2 != api1
        assert _post(api2, "/flow_runs/filter", {"limit": 200}) == []
        assert _post(api2, "/artifacts/filter", {"limit": 200}) == []
        other = _deployments(api2, 3)
        assert {d["name"] for d in other.values()} == {f"{action} {GAME}-{run_identity(second, create=False)}"
                                                       for action in ("rollback", "promote", "run")}
        assert all(d["parameters"]["data_dir"] == str(second) for d in other.values())
    finally:
        _stop(ui2)

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
    history = registry.history()

    # a rollback to a version that does not exist, and a promotion of the version that was best before: each
    # fails with one clear line in its log (the registry's reason), no traceback, and changes nothing
    refused = {"rollback": ({"version": "000042"}, "rollback refused: unknown model version 000042"),
               "promote": ({"version": promoted[-1]}, f"promotion refused: version {promoted[-1]} was best before")}
    for action, (parameters, reason) in refused.items():
        flow_run = _post(api1, f"/deployments/{deployments[action]['id']}/create_flow_run",
                         {"parameters": parameters})
        done = _wait_for_run(api1, flow_run["id"])
        assert done["state"]["type"] == "FAILED" and done["state"]["message"].startswith(reason), done["state"]
        log = _finished_log(api1, done["id"])
        assert "Traceback" not in log and log.count(reason) == 1, log
        assert [line for line in log.splitlines() if reason in line][0].startswith("Finished in state Failed("), log
    assert registry.history() == history and registry.best_version() == promoted[-2]

    # a run of another directory's deployment parameters is refused, not reported to the wrong server
    wrong = _post(api1, f"/deployments/{deployments['rollback']['id']}/create_flow_run",
                  {"parameters": {"data_dir": str(second), "game": GAME}})
    assert _wait_for_run(api1, wrong["id"])["state"]["type"] == "FAILED"
    assert registry.best_version() == promoted[-2]

    _stop(served.ui)
    assert recorded_ui_server(first) is None and recorded_ui_port(first) == int(api1.rsplit(":", 1)[1].split("/")[0])
