"""The house rules that grep can check: imports point down the layers, and each fact has one home.

Layers, bottom to top: shared < services < flows < cli. A module may import its own layer and the ones below.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["shared", "services", "flows", "cli"]


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imported_top_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_down_the_layers(layer: str) -> None:
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    offenders = [f"{path.relative_to(ROOT)} imports {sorted(_imported_top_packages(path) & above)}"
                 for path in _python_files(layer) if _imported_top_packages(path) & above]
    assert not offenders, offenders


#: (what, pattern, the one file allowed to spell it)
ONE_HOME = [
    ("shard file names", re.compile(r'f"\{[^}]*\}\.h5"|\+ "\.h5"'), {"shared/shards/schema.py"}),
    ("checkpoint names", re.compile(r"\.ckpt\b"), {"shared/layout.py"}),
    ("registry file names", re.compile(r'"(best\.json|history\.jsonl|registry\.lock|meta\.json|model\.pt)"'),
     {"shared/layout.py"}),
    ("generation folder names", re.compile(r'f"gen-\{'), {"shared/layout.py"}),
    ("job id prefixes", re.compile(r'f"zf-\{[^}]*(data_id|namespace)'), {"shared/layout.py"}),
    ("the stop file", re.compile(r'"STOP"'), {"shared/layout.py"}),
    ("promotions", re.compile(r"\._move_best\(|\bbest_path\b.*write"), {"shared/registry/registry.py"}),
    ("pair scores", re.compile(r"\.mean\(axis=1\)|sum\(pair\[\"scores\"\]\)"), {"shared/stats.py"}),
]


@pytest.mark.parametrize("what, pattern, homes", ONE_HOME, ids=[item[0] for item in ONE_HOME])
def test_each_fact_is_spelled_in_one_place(what: str, pattern: re.Pattern, homes: set[str]) -> None:
    found = {str(path.relative_to(ROOT)) for layer in LAYERS for path in _python_files(layer)
             if pattern.search(path.read_text(encoding="utf-8"))}
    assert found <= homes, f"{what} built outside {sorted(homes)}: {sorted(found - homes)}"
