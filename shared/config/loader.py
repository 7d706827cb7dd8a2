"""Build a service config from four layers, later layers winning:

    per-game defaults  <  TOML file  <  ZEROFORGE_<SECTION>__<FIELD> env vars  <  --set section.field=value

Why not pydantic-settings' BaseSettings for the service configs: a BaseSettings constructor reads the
process environment, so a worker re-validating a job's config (sent as JSON) would silently apply its
own environment on top. Here the environment is read once, explicitly, from an injectable mapping,
and unknown keys are reported with the list of valid ones.
"""
from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from shared.config.defaults import game_defaults
from shared.config.errors import ConfigError
from shared.config.services import SECTIONS, PipelineConfig, ServiceConfig

ENV_PREFIX = "ZEROFORGE_"
ENV_DELIMITER = "__"
DEFAULT_FILE_LABEL = "zeroforge.toml"

ConfigT = TypeVar("ConfigT", bound=ServiceConfig)
Nested = dict[str, dict[str, Any]]
Provenance = dict[tuple[str, str], str]


def _unknown_key_problem(section: str, field: str | None, where: str) -> str | None:
    """A message if `section` / `section.field` does not exist, else None."""
    if section not in SECTIONS:
        return f"unknown section [{section}] {where}; valid sections: {', '.join(SECTIONS)}"
    fields = SECTIONS[section].model_fields
    if field is not None and field not in fields:
        return f"unknown key {field!r} in [{section}] {where}; valid keys: {', '.join(fields)}"
    return None


def _put(values: Nested, provenance: Provenance, section: str, field: str, value: Any, source: str) -> None:
    values.setdefault(section, {})[field] = value
    provenance[(section, field)] = source


def _file_layer(file: Path) -> tuple[Nested, Provenance, list[str]]:
    """Read a TOML file into nested values; unknown sections/keys become problems."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {file} not found; pass an existing file or leave it out") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {file} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                          "save it as UTF-8 TOML") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"config file {file} is not valid TOML: {' '.join(str(exc).split())}") from None
    values: Nested = {}
    provenance: Provenance = {}
    problems: list[str] = []
    for section, table in data.items():
        if not isinstance(table, dict):
            problems.append(
                f"top-level key {section!r} in {file} must be inside a section; valid sections: {', '.join(SECTIONS)}"
            )
            continue
        for field, value in table.items():
            problem = _unknown_key_problem(section, field, f"of {file}")
            if problem:
                problems.append(problem)
            else:
                _put(values, provenance, section, field, value, f"from [{section}] of {file}")
    return values, provenance, problems


def _env_layer(env: Mapping[str, str]) -> tuple[Nested, Provenance, list[str]]:
    """Variables named ZEROFORGE_<SECTION>__<FIELD>; other ZEROFORGE_* names (no "__") are ignored."""
    values: Nested = {}
    provenance: Provenance = {}
    problems: list[str] = []
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or ENV_DELIMITER not in name:
            continue
        section, _, field = name[len(ENV_PREFIX):].lower().partition(ENV_DELIMITER)
        problem = _unknown_key_problem(section, field, f"(environment variable {name})")
        if problem:
            problems.append(problem)
        else:
            _put(values, provenance, section, field, env[name], f"from environment variable {name}")
    return values, provenance, problems


def _flatten_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Accept {"search.simulations": 64} and {"search": {"simulations": 64}} alike."""
    flat: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            flat.update({f"{key}.{inner}": inner_value for inner, inner_value in value.items()})
        else:
            flat[key] = value
    return flat


def _override_layer(overrides: Mapping[str, Any]) -> tuple[Nested, Provenance, list[str]]:
    values: Nested = {}
    provenance: Provenance = {}
    problems: list[str] = []
    for key, value in _flatten_overrides(overrides).items():
        section, dot, field = key.partition(".")
        if not dot or not field or "." in field:
            problems.append(f"override key {key!r} must look like section.field, e.g. search.simulations")
            continue
        problem = _unknown_key_problem(section, field, f"(--set {key})")
        if problem:
            problems.append(problem)
        else:
            _put(values, provenance, section, field, value, f"from --set {key}={value}")
    return values, provenance, problems


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """Parse CLI `--set section.field=value` items into {"section.field": "value"} (strings; the
    config models convert them). Raises ConfigError naming the bad item and the valid keys."""
    result: dict[str, str] = {}
    problems: list[str] = []
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        section, dot, field = key.partition(".")
        if not eq or not dot or not section or not field or "." in field:
            problems.append(f"--set {item!r}: expected section.field=value, e.g. --set search.simulations=64")
            continue
        problem = _unknown_key_problem(section, field, f"(--set {item})")
        if problem:
            problems.append(problem)
            continue
        result[key] = value.strip()
    if problems:
        raise ConfigError(problems)
    return result


def _choose_game(game: str | None, layers: list[tuple[Nested, Provenance]]) -> str:
    """The game name: the `game` argument, else the highest layer's game.name; conflicts are errors."""
    named = [(str(v["game"]["name"]), p[("game", "name")]) for v, p in layers if "name" in v.get("game", {})]
    if game is None:
        if not named:
            raise ConfigError("game.name: no game given — pass --game, or set name in [game] of zeroforge.toml")
        return named[-1][0]
    for name, source in named:
        if name.strip().lower() != game.strip().lower():
            raise ConfigError(
                f"game.name: {name!r} ({source}) conflicts with the requested game {game!r}; remove one of them"
            )
    return game


_BOUND_WORDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
_TYPE_WORDS = {
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_type": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "missing": "is required",
}


def _describe_error(error: Mapping[str, Any]) -> str:
    """Short wording of one pydantic error, e.g. "must be >= 1"."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in _BOUND_WORDS:
        bound = next(iter(ctx.values()), "?")
        return f"must be {_BOUND_WORDS[kind]} {bound}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '?')}"
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind]
    return str(error["msg"]).removeprefix("Value error, ")


def _format_problem(error: Mapping[str, Any], provenance: Provenance, file_label: str) -> str:
    """One line: field path, what is wrong, the value and its source, and where to fix it."""
    loc = [str(part) for part in error["loc"]]
    text = _describe_error(error)
    if not loc:  # a check across sections; its message names the fields
        return text
    section = loc[0]
    if len(loc) == 1:  # a check across fields of one section
        return f"{section}: {text} — fix it in [{section}] of {file_label}, ZEROFORGE_{section.upper()}__* or --set"
    field = loc[1]
    source = provenance.get((section, field), "from the built-in default")
    shown = _redact(repr(error["input"])) if len(repr(error["input"])) <= 200 else repr(error["input"])[:200] + "..."
    got = f" (got {shown} {_redact(source)})" if error["type"] != "missing" else ""
    return (
        f"{section}.{field}: {text}{got} — set it in [{section}] of {file_label}, "
        f"ZEROFORGE_{section.upper()}__{field.upper()} or --set {section}.{field}=..."
    )


_URL_PASSWORD = re.compile(r"(://[^:@/\s]*):[^@\s]*@")


def _redact(text: str) -> str:
    """`text` with the password of any URL in it (scheme://user:password@host) replaced by '***'."""
    return _URL_PASSWORD.sub(r"\1:***@", text)


def _merge(layers: list[tuple[Nested, Provenance]]) -> tuple[Nested, Provenance]:
    merged: Nested = {section: {} for section in SECTIONS}  # a section no layer mentions takes its defaults
    provenance: Provenance = {}
    for values, sources in layers:
        for section, table in values.items():
            merged.setdefault(section, {}).update(table)
        provenance.update(sources)
    return merged, provenance


def load_config(
    cls: type[ConfigT],
    game: str | None,
    file: Path | str | None = None,
    env: Mapping[str, str] | None = os.environ,
    overrides: Mapping[str, Any] | None = None,
) -> ConfigT:
    """Build `cls` (SelfPlayServiceConfig, TrainerConfig, GatekeeperConfig or PipelineConfig).

    Layers, later winning: game_defaults(game) < TOML `file` < `env` (ZEROFORGE_<SECTION>__<FIELD>;
    None = no environment) < `overrides` ({"search.simulations": 64} or nested). `game` may be None
    when a layer sets game.name. All sections are validated (one shared file serves every service),
    then the sections `cls` declares are returned. Raises ConfigError listing every problem.
    """
    if not (isinstance(cls, type) and issubclass(cls, ServiceConfig)):
        raise ConfigError(f"load_config needs a ServiceConfig class such as PipelineConfig, got {cls!r}")
    file_label = str(file) if file is not None else DEFAULT_FILE_LABEL
    layers: list[tuple[Nested, Provenance]] = []
    problems: list[str] = []
    for values, sources, layer_problems in (
        _file_layer(Path(file)) if file is not None else ({}, {}, []),
        _env_layer(env) if env is not None else ({}, {}, []),
        _override_layer(overrides or {}),
    ):
        layers.append((values, sources))
        problems.extend(layer_problems)
    if problems:
        raise ConfigError(problems)
    game_name = _choose_game(game, layers)
    defaults = game_defaults(game_name)
    default_sources = {(s, f): f"from the defaults for {game_name}" for s, table in defaults.items() for f in table}
    if game is not None:
        default_sources[("game", "name")] = "from --game"
    merged, provenance = _merge([(defaults, default_sources), *layers])
    try:
        full = PipelineConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError([_format_problem(e, provenance, file_label) for e in exc.errors()]) from None
    return full if cls is PipelineConfig else full.service_config(cls)
