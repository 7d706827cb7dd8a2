"""Flow-run names and artifact keys: the one place that names what zeroforge shows in the Prefect UI.

Every name starts with the game and the run identity, the first 6 hex digits of the data directory's id
(`<data>/zeroforge-id`), so two data directories, or a data directory deleted and made again, never share a
flow-run name or an artifact key: `tictactoe-3fa9c1-gen3-gate`. Names come from the run's own parameters
(the config or `game`, and `data_dir`), so a name never disagrees with what the run does.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from prefect.runtime import flow_run

from shared.layout import data_id

#: Hex digits of the data directory's id that go into names (12 exist; 6 tell data directories apart at a glance).
RUN_IDENTITY_DIGITS = 6
_NOT_KEY = re.compile(r"[^a-z0-9-]+")


def run_identity(data_dir: str | Path, create: bool = True) -> str:
    """The short identity of data directory `data_dir`: the first 6 hex digits of its id.

    The id is made when missing if `create`; otherwise a missing or damaged id is a LayoutError that says so.
    """
    return data_id(Path(data_dir), create)[:RUN_IDENTITY_DIGITS]


def name_prefix(game: str, data_dir: str | Path, create: bool = True) -> str:
    """"<game>-<identity>", e.g. "tictactoe-3fa9c1": the start of every flow-run name and artifact key."""
    return f"{game}-{run_identity(data_dir, create)}"


def deployment_name(action: str, game: str, data_dir: str | Path) -> str:
    """The name of the `action` deployment (rollback, promote, run) `zeroforge ui` serves for `game` under
    `data_dir`: what it does, then whose, e.g. "rollback tictactoe-3fa9c1", so the UI's deployment titles differ."""
    return f"{action} {name_prefix(game, data_dir)}"


def artifact_key(game: str, data_dir: str | Path, what: str, generation: int | None = None) -> str:
    """The Prefect artifact key of `what` (e.g. "gate", "strength") for this data directory and generation.

    e.g. artifact_key("gomoku-15", d, "gate", 3) -> "gomoku-15-3fa9c1-gen3-gate". Prefect accepts only lowercase
    letters, digits and dashes in keys, so anything else (".", "_", capitals) becomes a dash.
    """
    parts = [name_prefix(game, data_dir)] + ([f"gen{generation}"] if generation is not None else []) + [what]
    return _NOT_KEY.sub("-", "-".join(parts).lower()).strip("-")


def _game_of(parameters: dict[str, Any]) -> str:
    if "game" in parameters:
        return parameters["game"]
    config = parameters["config"]
    return config.game.name if hasattr(config, "game") else config["game"]["name"]


def run_name(template: str, create_identity: bool = True) -> Callable[[], str]:
    """A flow_run_name function: "<game>-<identity>-" + template formatted with the flow's parameters.

    The flow must take `data_dir` and either `config` (a PipelineConfig or its dict) or `game`; e.g.
    run_name("gen{generation}-gate") names the gate of generation 3 of tic-tac-toe "tictactoe-3fa9c1-gen3-gate".
    With create_identity=False a data directory without an id fails the run (a mistyped `data_dir` is not
    created) instead of getting a new one.
    """
    def name() -> str:
        parameters = flow_run.parameters
        prefix = name_prefix(_game_of(parameters), parameters["data_dir"], create_identity)
        return f"{prefix}-" + template.format(**parameters)
    return name

