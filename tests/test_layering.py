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


# ----- inside shared: packages that build on others ----------------------------------------------------------------

#: (package, packages it must not import): shared.players builds on shared.search, never the other way round.
SHARED_ORDER = [("shared.search", {"shared.players"})]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path) -> set[str]:
    """Every module one file imports (at the top, in functions, under TYPE_CHECKING): `import a.b` -> a.b,
    `from a import b` -> a.b when a/b is a module or package of this repository, else a; relative imports
    resolved."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                is_module = (ROOT / submodule.replace(".", "/")).with_suffix(".py").is_file() or \
                    (ROOT / submodule.replace(".", "/") / "__init__.py").is_file()
                names.add(submodule if is_module else module)
    return names


@pytest.mark.parametrize("package, below", SHARED_ORDER, ids=[item[0] for item in SHARED_ORDER])
def test_packages_inside_shared_import_one_way(package: str, below: set[str]) -> None:
    offenders = [f"{path.relative_to(ROOT)} imports {sorted(found)}"
                 for path in _python_files(package.replace(".", "/"))
                 if (found := {name for name in _imported_modules(path)
                               if any(name == other or name.startswith(other + ".") for other in below)})]
    assert not offenders, offenders


def _import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph {module: modules it imports}: one cycle (a list of modules, first = last)
    per strongly connected group of more than one module, or of one module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1 or module in graph.get(module, ()):
                cycles.append(sorted(group) + [sorted(group)[0]])

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


@pytest.mark.parametrize("package", ["shared/search", "shared/players"])
def test_no_import_cycles_inside_the_package(package: str) -> None:
    """No module of the package imports (directly or through others of the package) one that imports it back,
    counting the package's __init__ as a module and imports under TYPE_CHECKING or inside functions."""
    modules = {_module_name(path): path for path in _python_files(package)}
    graph = {name: {target for target in _imported_modules(path) if target in modules}
             for name, path in modules.items()}
    assert not _import_cycles(graph), _import_cycles(graph)


def test_the_cycle_check_sees_cycles() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a", "p.d"}, "p.e": set()}
    assert _import_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"], ["p.d", "p.d"]]


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


# ----- game knowledge lives in the game's package ------------------------------------------------------------------

#: The built-in game families: each is a package shared/games/<family>/ holding all that is specific to it.
FAMILIES = ("tictactoe", "connect4", "gomoku", "othello", "go")
GAME_NAME = re.compile(rf"^({'|'.join(FAMILIES)})(-.*)?$", re.IGNORECASE)
FAMILY_MODULE = re.compile(rf"^shared\.games\.({'|'.join(FAMILIES)})(\.|$)")
#: (file, literal): game names that may appear outside shared/games, with the reason.
GAME_NAME_ALLOWED = {
    # a developer's benchmark script (`python -m cli.bench.compression`): the two games it measures are its subject
    ("cli/bench/compression.py", "connect4"),
    ("cli/bench/compression.py", "gomoku-15"),
}


def _game_knowledge(source: str) -> list[str]:
    """String literals that are a game name ("go", "gomoku-15", "othello-6x6"; f-string parts included) and
    imports of a family's package, in one file's source -> "line: what" entries."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and GAME_NAME.match(node.value.strip()):
            found.append((node.lineno, node.value.strip()))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if FAMILY_MODULE.match(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if FAMILY_MODULE.match(node.module):
                found.append((node.lineno, node.module))
            elif node.module == "shared.games":
                found += [(node.lineno, f"shared.games.{alias.name}") for alias in node.names if alias.name in FAMILIES]
    return [f"{line}: {what}" for line, what in found]


def test_the_families_are_registered() -> None:
    from shared.games import families

    assert tuple(families()) == FAMILIES
    assert all((ROOT / "shared" / "games" / name / "__init__.py").is_file() for name in FAMILIES)


@pytest.mark.parametrize("layer", LAYERS)
def test_game_names_live_in_the_games_packages(layer: str) -> None:
    """Outside shared/games, no code names a game family (a literal "go", "gomoku-15", ...) or imports a family's
    package: generic code asks the game's descriptor (shared.games.family) instead of branching on names."""
    offenders = []
    for path in _python_files(layer):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("shared/games/"):
            continue
        offenders += [f"{relative}:{entry}" for entry in _game_knowledge(path.read_text(encoding="utf-8"))
                      if (relative, entry.split(": ", 1)[1]) not in GAME_NAME_ALLOWED]
    assert not offenders, offenders


def test_the_search_knows_no_game() -> None:
    """shared/search holds generic search only: no module named after a game or its solvers."""
    names = {path.stem for path in (ROOT / "shared" / "search").glob("*.py")}
    specific = {"vcf", "vcf_lines", "threats", "othello_solver", "weights", "connect4_solver", "minimax"}
    assert not names & specific, sorted(names & specific)


def test_the_game_knowledge_check_sees_what_it_looks_for() -> None:
    source = ('import shared.games.go\nfrom shared.games import othello\nfrom shared.games.gomoku.vcf import x\n'
              'A = "go"\nB = f"gomoku-{3}"\nC = "Go on, let go of it"\nD = "google"\nE = "gomokus"\n'
              'F = "Game name, e.g. connect4"\nfrom shared.games import make_game\n')
    found = sorted(entry.split(": ", 1)[1] for entry in _game_knowledge(source))
    assert found == ["go", "gomoku-", "shared.games.go", "shared.games.gomoku.vcf", "shared.games.othello"]
