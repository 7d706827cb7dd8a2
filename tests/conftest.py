"""Test tiers.

The fast tier (`pytest -m "not integration"`) holds the unit and in-process tests: rules, search, statistics,
storage, config, services run in-process. The integration tier (`pytest -m integration`) holds what starts real
parts or runs for long: real redis-server, rq worker processes and Prefect flows (tests/e2e), GNU Go and the
engines over their protocols, ONNX export, the CLI's heavy commands, property fuzzing, and the docs' examples.
`pytest` with no marker runs both.

A test belongs to the integration tier when its file is listed in INTEGRATION_FILES (with the reason), when it
carries the e2e or slow marker, or when it is marked `@pytest.mark.integration` itself.

The longest files are collected first (LONGEST_FIRST), so that with pytest-xdist (`-n 2 --dist loadfile`) they
start at once instead of leaving one worker running alone at the end; the order inside each file is kept.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Tests that run flows in-process (and the processes they start) see Prefect configured as `zeroforge run`
# configures it (flows.prefect_env.configure_prefect): no telemetry service in the temporary server, whose database
# writes can fail on a loaded machine and print tracebacks that are not the project's.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

#: Whole files in the integration tier, each with the reason.
INTEGRATION_FILES = {
    "cli/test_readme.py": "runs every example of README.md and docs/ as a subprocess",
    "cli/test_fuzz.py": "hypothesis fuzzing of every command's options",
    "cli/test_gtp.py": "GNU Go and the GTP engine over pipes, a whole game",
    "cli/test_pbrain.py": "the Gomocup engine driven by a protocol client in a subprocess",
    "cli/test_export.py": "ONNX export and onnxruntime against torch",
    "cli/test_shipped_models.py": "the shipped models' strength in matches",
    "cli/test_analyze.py": "analysis at full simulation counts with the shipped models",
    "cli/test_eval.py": "matches over several processes, and the gate against eval",
    "cli/test_bench_tactics.py": "the tactics benchmark on solver-labelled positions",
    "cli/test_bench_vcf.py": "the VCF tactics benchmark end to end with the shipped model",
}

#: The files that take longest (minutes each on 2 cores), longest first.
LONGEST_FIRST = ("e2e/test_tictactoe_strength.py", "cli/test_readme.py", "e2e/test_run_lifecycle.py",
                 "e2e/test_ui.py", "e2e/test_pipeline_e2e.py", "cli/test_analyze.py", "cli/test_fuzz.py",
                 "e2e/test_chaos.py", "e2e/test_overlap_selfplay.py")


def _relative(item: pytest.Item) -> str:
    return Path(item.fspath).resolve().relative_to(TESTS).as_posix()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test of the integration tier with `integration`, and put the longest files first (module
    docstring)."""
    for item in items:
        relative = _relative(item)
        if (relative in INTEGRATION_FILES or item.get_closest_marker("e2e") is not None
                or item.get_closest_marker("slow") is not None):
            item.add_marker(pytest.mark.integration)
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_relative(item), len(rank)))   # stable: files and their tests keep order
