"""Flow-run names: `<game>-<what>` from the run's own config parameter, so a name never disagrees with it."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from prefect.runtime import flow_run

from shared.layout import data_id


def run_name(template: str) -> Callable[[], str]:
    """A flow_run_name function: "<game>-" + template formatted with the flow's parameters.

    e.g. run_name("gen{generation}-gate") names the gate of generation 3 of tic-tac-toe "tictactoe-gen3-gate".
    """
    def name() -> str:
        parameters = flow_run.parameters
        config = parameters["config"]
        game = config.game.name if hasattr(config, "game") else config["game"]["name"]
        return f"{game}-" + template.format(**parameters)
    return name


def artifact_key(game: str, data_dir: str | Path, what: str) -> str:
    """The Prefect artifact key of `what` for this game and data directory: "<game>-<first 6 hex digits of the
    data directory's id>-<what>", e.g. "tictactoe-3fa9c1-curves" (Prefect keys take lowercase letters,
    digits and dashes only, so anything else becomes a dash)."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{game}-{data_id(Path(data_dir))[:6]}-{what}".lower())
