"""The `rollback` and `promote` flows: move a game's best model from the Prefect UI (deployments served by
`zeroforge ui`), through the registry's own `rollback` and `promote`, exactly as `zeroforge models` does; the
history records them as made by "prefect-ui".

A change takes effect at the next generation: a running pipeline reads the best version at the start of
each generation (flows/generation.py, initial_model_task), and a gate already running against the old best
has its promotion refused by the registry's compare-and-swap.

A refused change (an unknown version, a version the registry will not move best to, another data directory)
ends the flow run in a Failed state whose message is the registry's one-line reason: the run's log then
holds that line (Prefect's "Finished in state Failed(...)"), not a traceback. (Run from a deployment, Prefect's
engine also re-raises the failure and logs it with its traceback, "Engine execution exited with unexpected
exception"; RefusalLogFilter drops that record for these refusals only.)

A change republishes the store's registry view when the data directory records a store
(shared.store.view.republish_recorded_view).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.exceptions import FailedRun
from prefect.states import Failed, State

from flows.naming import run_name
from flows.prefect_env import check_served_data_dir
from shared.layout import DataLayout
from shared.registry import ModelRegistry, RegistryError
from shared.store.view import republish_recorded_view

#: Who the registry's history names for changes made through these flows.
UI_ACTOR = "prefect-ui"
#: How the message of a refused change's Failed state starts.
REFUSED = ("rollback refused: ", "promotion refused: ")


class RefusalLogFilter(logging.Filter):
    """Drops the log records that carry a refused change of these flows as an exception (Prefect's engine
    re-raising the Failed state as FailedRun): the Failed state's message already says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, FailedRun) and str(error).startswith(REFUSED))


#: Prefect logs a flow run's engine errors on this logger (prefect.logging.loggers.flow_run_logger).
_FLOW_RUN_LOGGER = logging.getLogger("prefect.flow_runs")
if not any(isinstance(f, RefusalLogFilter) for f in _FLOW_RUN_LOGGER.filters):
    _FLOW_RUN_LOGGER.addFilter(RefusalLogFilter())


def open_registry(data_dir: str, game: str) -> ModelRegistry:
    """The model registry of `game` under data directory `data_dir`; RegistryError when it has none, ValueError
    when a run of a `zeroforge ui` deployment names a data directory that UI does not serve."""
    check_served_data_dir(data_dir)
    layout = DataLayout(Path(data_dir), game)
    if not layout.registry_dir.is_dir():
        raise RegistryError(f"no model registry for game {game!r} under {data_dir} ({layout.registry_dir} does not "
                            "exist); check the data_dir and game parameters")
    return ModelRegistry(layout.registry_dir)


def previous_best(registry: ModelRegistry) -> str:
    """The version a rollback without a version goes back to: the newest promoted version older than the
    current best (so repeated rollbacks walk back through the promotions). RegistryError when there is none."""
    best = registry.best_version()
    if best is None:
        raise RegistryError(f"the registry {registry.directory} has no best model yet; nothing to roll back")
    older = [v.version for v in registry.list() if v.status == "promoted" and int(v.version) < int(best)]
    if not older:
        raise RegistryError(f"no promoted version older than the best {best} in {registry.directory}; "
                            "give the version to roll back to")
    return older[-1]


def _report(logger, action: str, game: str, entry: dict[str, Any] | None, registry: ModelRegistry,
            version: str, data_dir: str) -> dict[str, Any]:
    best = registry.best_version()
    if entry is not None:
        republish_recorded_view(DataLayout(Path(data_dir), game))
    if entry is None:
        logger.info("%s: %s already is the best model; nothing changed", game, version)
        return {"changed": False, "best": best, "previous_best": best}
    logger.info("%s: %s %s (best was %s): %s; the next generation plays with it", game, action, entry["version"],
                entry["previous_best"], entry["reason"])
    return {"changed": True, "best": best, "previous_best": entry["previous_best"]}


@flow(name="rollback", flow_run_name=run_name("rollback", create_identity=False))
def rollback_flow(data_dir: str, game: str, version: str | None = None,
                  reason: str = "rolled back from the UI") -> dict[str, Any] | State:
    """Point `game`'s best model under `data_dir` back at `version` (a previously promoted version; None: the
    newest promoted version older than the current best). Returns {"changed", "best", "previous_best"}
    (versions as 6-digit strings), or a Failed state with the registry's one-line reason when refused."""
    try:
        registry = open_registry(data_dir, game)
        target = previous_best(registry) if version is None else version
        entry = registry.rollback(target, reason, by=UI_ACTOR)
    except (RegistryError, ValueError) as exc:
        return Failed(message=f"{REFUSED[0]}{exc}")
    return _report(get_run_logger(), "rolled back to", game, entry, registry, target, data_dir)


@flow(name="promote", flow_run_name=run_name("promote-{version}", create_identity=False))
def promote_flow(data_dir: str, game: str, version: str, reason: str = "promoted from the UI",
                 force: bool = False) -> dict[str, Any] | State:
    """Make `version` the best model of `game` under `data_dir` (a rejected version only with `force`; a version
    that was best before is refused: that is a rollback). Returns {"changed", "best", "previous_best"}, or a
    Failed state with the registry's one-line reason when refused."""
    try:
        registry = open_registry(data_dir, game)
        entry = registry.promote(version, reason, force=force, by=UI_ACTOR)
    except (RegistryError, ValueError) as exc:
        return Failed(message=f"{REFUSED[1]}{exc}")
    return _report(get_run_logger(), "promoted", game, entry, registry, version, data_dir)
