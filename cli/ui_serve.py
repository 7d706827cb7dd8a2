"""The deployments `zeroforge ui` serves for its data directory: `rollback`, `promote` and `run` (the pipeline with
Redis and local workers, as `zeroforge run` starts it), one of each per game, with the data directory and game
as parameter defaults, so a run started from the browser needs no typing beyond a version.

`zeroforge ui` starts this module in a child process once its Prefect server answers:

    python -m cli.ui_serve --data-dir D [--game G ...] [--config FILE] [--set SECTION.FIELD=VALUE ...]

with PREFECT_API_URL pointing at that server; the child serves the deployments (prefect.serve) until stopped.
"""
from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import click
from prefect import flow, serve
from prefect.types.entrypoint import EntrypointType

from cli.common import load_pipeline_config
from cli.run import check_data_dir, check_run_settings, raise_on_sigterm, run_pipeline
from flows.naming import deployment_name, name_prefix, run_name
from flows.prefect_env import check_served_data_dir
from flows.registry_ops import promote_flow, rollback_flow

#: Flow runs of the served deployments that may run at once (a pipeline and a rollback, say).
SERVE_LIMIT = 4


@flow(name="run", flow_run_name=run_name("run", create_identity=False))
def run_flow(data_dir: str, game: str, generations: int | None = None, config_file: str | None = None,
             settings: list[str] | None = None) -> list[dict[str, Any]]:
    """`zeroforge run` from the browser: load the config of `game` (defaults < `config_file` < environment <
    `settings`, each "section.field=value"), start Redis and local workers as `zeroforge run` does, and run the
    pipeline flow for `generations` (None: the config's pipeline.generations; 0: until stopped) on `data_dir`.
    Returns the pipeline's per-generation summaries."""
    check_served_data_dir(data_dir)
    cfg, root = load_pipeline_config(game, Path(config_file) if config_file else None, tuple(settings or ()),
                                     Path(data_dir))
    check_run_settings(cfg, cfg.pipeline.local_workers > 0)
    check_data_dir(root)
    count = cfg.pipeline.generations if generations is None else (generations or None)
    if threading.current_thread() is threading.main_thread():
        # canceling the run in the UI sends SIGTERM: stop the private Redis and the local workers on the way out
        signal.signal(signal.SIGTERM, raise_on_sigterm)
    return run_pipeline(cfg, root, count, None, None, False)


def build_deployments(data_dir: Path, games: list[str], config_file: Path | None,
                      settings: tuple[str, ...]) -> list:
    """The RunnerDeployments of `rollback`, `promote` and `run` for each game in `games`, named
    "<action> <game>-<identity>" (flows.naming.deployment_name, e.g. "rollback tictactoe-3fa9c1"), with data_dir and game (and the ui's config file and
    --set values for `run`) as parameter defaults."""
    deployments = []
    for game in games:
        cfg, _ = load_pipeline_config(game, config_file, settings, data_dir)   # a wrong setting fails here, at start
        name = name_prefix(game, data_dir)
        where = {"data_dir": str(data_dir), "game": game}
        tags = ["zeroforge", game, name]
        deployments += [
            rollback_flow.to_deployment(
                deployment_name("rollback", game, data_dir), parameters=where, tags=tags,
                entrypoint_type=EntrypointType.MODULE_PATH,
                description=f"Roll {game}'s best model under {data_dir} back (version empty: to the previous "
                            "promoted one); the next generation plays with it."),
            promote_flow.to_deployment(
                deployment_name("promote", game, data_dir), parameters=where, tags=tags,
                entrypoint_type=EntrypointType.MODULE_PATH,
                description=f"Make a version {game}'s best model under {data_dir}; the next generation plays "
                            "with it."),
            run_flow.to_deployment(
                deployment_name("run", game, data_dir), tags=tags, entrypoint_type=EntrypointType.MODULE_PATH,
                parameters={**where, "generations": cfg.pipeline.generations,
                            "config_file": str(config_file) if config_file else None, "settings": list(settings)},
                description=f"Train {game} on {data_dir} as `zeroforge run` does (Redis and local workers "
                            "included), generation after generation."),
        ]
    return deployments


@click.command()
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.option("--game", "games", multiple=True, required=True)
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), default=None)
@click.option("--set", "settings", multiple=True)
def main(data_dir: Path, games: tuple[str, ...], config_file: Path | None, settings: tuple[str, ...]) -> None:
    """Serve the deployments of `build_deployments` until stopped (started by `zeroforge ui`)."""
    serve(*build_deployments(data_dir.resolve(), list(games), config_file, settings), limit=SERVE_LIMIT,
          print_starting_message=False, pause_on_shutdown=False)


if __name__ == "__main__":
    # import the module by its name, so the flows' entrypoints read "cli.ui_serve:run_flow", not "__main__:..."
    from cli.ui_serve import main as serve_main

    serve_main()
