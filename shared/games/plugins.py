"""Game families from outside zeroforge's tree: installed packages and modules named in ZEROFORGE_GAMES.

A game package defines its rules and one `GameFamily` (see family.py) and makes it known in either way:

- an installed distribution declares an entry point in the group "zeroforge.games" whose value is a module
  (its `FAMILY` attribute is registered) or "module:attribute" naming the `GameFamily` itself;
- the environment variable ZEROFORGE_GAMES lists modules the same way, comma-separated
  (`ZEROFORGE_GAMES=mygames.nim,other.pkg:FAMILY`), for a package that is not installed: its modules are
  imported as `python -m` would, from the current directory first (as uvicorn and flask find an app module).

Every process that handles the game needs it: the pipeline, each worker, the CLI commands. Local workers
inherit the variable; workers on other machines need the package and the variable set there too.

A source that cannot be loaded does not break the other games: its reason is kept (`plugin_problems`) and
shown when a game name is not found, so "unknown game 'nim-3'" also says that the nim package failed to import.
"""
from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points

from shared.games.family import GameFamily, register_family

#: The entry point group that installed game packages declare.
ENTRY_POINT_GROUP = "zeroforge.games"
#: The environment variable listing game modules to load (comma-separated "module" or "module:attribute").
GAMES_ENV = "ZEROFORGE_GAMES"
#: The attribute read from a module named without ":attribute".
DEFAULT_ATTRIBUTE = "FAMILY"

_problems: list[str] = []


def _family_from(target: str, source: str) -> GameFamily:
    """Import "module" or "module:attribute" and return the GameFamily it names; ValueError saying what failed."""
    module_name, _, attribute = target.strip().partition(":")
    attribute = attribute.strip() or DEFAULT_ATTRIBUTE
    if not module_name.strip():
        raise ValueError(f"{source}: {target!r} names no module; write 'package.module' or 'package.module:FAMILY'")
    try:
        module = importlib.import_module(module_name.strip())
    except Exception as exc:                                   # any import failure of a third-party module
        raise ValueError(f"{source}: cannot import {module_name.strip()!r} ({type(exc).__name__}: {exc})") from None
    family = getattr(module, attribute, None)
    if not isinstance(family, GameFamily):
        what = ("missing" if family is None else "a class" if isinstance(family, type)
                else f"a {type(family).__name__}")
        raise ValueError(f"{source}: {module_name.strip()}.{attribute} is {what}, not a GameFamily")
    return family


def load_game_plugins(environ: Mapping[str, str] | None = None) -> list[str]:
    """Register the families of the "zeroforge.games" entry points, then those of ZEROFORGE_GAMES (read from
    `environ`, default os.environ). Returns the names of the families registered; a source that fails is
    skipped and its reason kept for `plugin_problems`."""
    environ = os.environ if environ is None else environ
    sources = [(entry.value, f"entry point {entry.name!r} ({ENTRY_POINT_GROUP})")
               for entry in entry_points(group=ENTRY_POINT_GROUP)]
    named = [(item, f"{GAMES_ENV} entry {item.strip()!r}") for item in environ.get(GAMES_ENV, "").split(",")
             if item.strip()]
    if named and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())                    # the current directory's modules, as `python -m` finds them
    sources += named
    loaded = []
    for target, source in sources:
        try:
            loaded.append(register_family(_family_from(target, source)).name)
        except ValueError as exc:
            _problems.append(str(exc))
    return loaded


def plugin_problems() -> list[str]:
    """The reasons why game sources named by entry points or ZEROFORGE_GAMES could not be loaded, in order."""
    return list(_problems)
