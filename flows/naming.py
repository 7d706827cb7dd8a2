"""Flow-run names: `<game>-<what>` from the run's own config parameter, so a name never disagrees with it."""
from __future__ import annotations

from typing import Callable

from prefect.runtime import flow_run


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
