"""A `zeroforge models rollback` while the gate is running: the gate's decision must not override it. The candidate
is rejected with a reason that names the changed best, the rollback stands, and nothing crashes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")]


def test_a_rollback_during_the_gate_wins_over_the_gates_promotion(tmp_path: Path) -> None:
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "prefect"), OMP_NUM_THREADS="1")
    for name in ("PREFECT_API_URL", "REDIS_URL", "ZEROFORGE_REDIS_URL"):
        env.pop(name, None)
    run = subprocess.run([sys.executable, "-m", "tests.e2e.rollback_scenario", str(tmp_path / "data")], env=env,
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Traceback" not in run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    first, second, candidate = result["first"], result["second"], result["candidate"]
    assert result["rollback_rc"] == 0 and f"rollback: {first}" in result["rollback_out"]
    assert result["gate_promote"] is True                      # the gate alone would have promoted it
    assert result["decision"] == {"promoted": False, "best": first, "anchor": None}
    assert result["best"] == first                             # the rollback stands
    assert result["status"] == "rejected"
    assert result["second_status"] == "retired"                # the best the rollback abandoned
    assert f"best changed from {second} to {first} while {candidate} was evaluated against it" in result["reason"]
    assert result["history"][-2:] == [["rollback", first], ["reject", candidate]]
