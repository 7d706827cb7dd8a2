"""`zeroforge ui`: the Prefect server and UI of one data directory, with its rollback, promote and run deployments.

Each data directory is its own world: the server runs on the data directory's own database
(<data>/prefect), records its address there (runs of that directory report to it, and to no other), and two
`zeroforge ui` on two directories run side by side on two ports. Without --port it takes the port recorded for
the directory if free, else 4200 if free, else any free port. Once the server answers, a child process
(cli/ui_serve.py) serves the deployments, so a version can be rolled back or promoted from the browser.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import click

from cli.common import load_pipeline_config
from cli.local_workers import stop_processes
from cli.run import check_data_dir, raise_on_sigterm
from cli.server_output import forward_without_banner
from flows.prefect_env import (UI_DATA_DIR_ENV, UI_HOST, choose_ui_port, configure_prefect, forget_ui_server,
                               port_is_free, record_ui_server, recorded_ui_server, server_is_up, ui_url)
from shared.child_processes import start_tied
from shared.layout import LayoutError, data_id, default_data_root, games_in_data_root


def _wait_until_up(proc: subprocess.Popen, api: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not server_is_up(api):
        if proc.poll() is not None:
            raise click.ClickException(f"the Prefect server exited with code {proc.returncode}; see its output above")
        if time.monotonic() > deadline:
            raise click.ClickException(f"the Prefect server did not answer within {timeout_s:.0f} s")
        time.sleep(1.0)


def _serve_command(data_dir: Path, games: list[str], config_file: Path | None, settings: tuple[str, ...]) -> list[str]:
    cmd = [sys.executable, "-m", "cli.ui_serve", "--data-dir", str(data_dir)]
    for game in games:
        cmd += ["--game", game]
    if config_file is not None:
        cmd += ["--config", str(config_file)]
    for setting in settings:
        cmd += ["--set", setting]
    return cmd


@click.command()
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The pipeline's data directory (default: ZEROFORGE_DATA_DIR or ./zeroforge-data).")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="Port of the Prefect server and UI on 127.0.0.1 [default: the port recorded for the data "
                   "directory if free, else 4200 if free, else any free port].")
@click.option("--game", "games", multiple=True,
              help="Serve rollback/promote/run deployments for this game (repeatable) [default: every game "
                   "under the data directory].")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="TOML config file the run deployment's pipeline uses (as `zeroforge run --config`).")
@click.option("--set", "settings", multiple=True, metavar="SECTION.FIELD=VALUE",
              help="Config override for the run deployment's pipeline (repeatable, as `zeroforge run --set`).")
@click.option("--startup-timeout", type=click.FloatRange(1, 3600), default=120.0, show_default=True,
              help="Seconds to wait for the Prefect server to answer before giving up.")
def ui(data_dir: Path | None, port: int | None, games: tuple[str, ...], config_file: Path | None,
       settings: tuple[str, ...], startup_timeout: float) -> None:
    """Start the Prefect server and UI of one data directory and keep it running until Ctrl-C.

    It shows that directory's runs only; runs started on it afterwards report to it (it records its address
    under the data directory while it runs). It serves rollback, promote and run deployments for the games
    under the data directory, so a best model can be rolled back from the browser.
    """
    data_dir = (data_dir or default_data_root()).resolve()
    check_data_dir(data_dir)
    try:
        data_id(data_dir)          # the identity that names this directory's runs, artifacts and deployments
        configure_prefect(data_dir, use_recorded_ui=False)
        games = list(games) or games_in_data_root(data_dir)
    except (LayoutError, OSError) as exc:
        raise click.UsageError(f"--data-dir {data_dir}: {exc}") from None
    for game in games:             # a wrong game or setting stops the command now, not in the child
        load_pipeline_config(game, config_file, settings, data_dir)
    os.environ.pop("PREFECT_API_URL", None)
    running = recorded_ui_server(data_dir)
    if running is not None:
        click.echo(f"`zeroforge ui` already serves {data_dir} at {running.removesuffix('/api')}")
        return
    if port is None:
        port = choose_ui_port(data_dir)
    elif not port_is_free(port):
        raise click.UsageError(f"--port {port}: the port is in use (another program or another data directory's "
                               "UI); choose another --port, or omit it to get a free one")
    api = f"{ui_url(UI_HOST, port)}/api"
    prefect = shutil.which("prefect") or str(Path(sys.executable).with_name("prefect"))
    # The browser's pages call the API at the UI's own address; Prefect would derive it from its port setting
    # (4200), not from --port, and a UI on another port would then read another server's runs.
    server_env = dict(os.environ)
    if not {"PREFECT_UI_API_URL", "PREFECT_SERVER_UI_API_URL"} & set(server_env):
        server_env["PREFECT_SERVER_UI_API_URL"] = api
    # tied: a `zeroforge ui` killed with SIGKILL takes its server and deployments with it (shared.child_processes)
    proc = start_tied([prefect, "server", "start", "--host", UI_HOST, "--port", str(port)], env=server_env,
                      stdout=subprocess.PIPE, text=True, errors="replace")
    forward_without_banner(proc.stdout, sys.stdout)   # Prefect's `prefect config set` advice is wrong here
    children = [proc]
    # SIGTERM (systemd, kill) stops the server and the deployments like Ctrl-C, through the `finally` below
    signal.signal(signal.SIGTERM, raise_on_sigterm)
    try:
        _wait_until_up(proc, api, startup_timeout)
        record_ui_server(data_dir, api, proc.pid)
        if games:
            serve_env = dict(os.environ, PREFECT_API_URL=api, **{UI_DATA_DIR_ENV: str(data_dir)})
            children.append(start_tied(_serve_command(data_dir, games, config_file, settings), env=serve_env))
        click.echo(f"\nPrefect UI: {ui_url(UI_HOST, port)}  (data directory {data_dir}, "
                   f"PREFECT_HOME={os.environ['PREFECT_HOME']})")
        click.echo("zeroforge commands on this data directory find this server by themselves: no Prefect "
                   "setting to change.")
        if games:
            click.echo(f"Deployments rollback, promote and run for {', '.join(games)}: Deployments page, "
                       "then Run > Custom run.")
        else:
            click.echo(f"No game under {data_dir} yet: restart with --game NAME to serve its deployments.")
        click.echo("Flows started now with `zeroforge run` on this data directory show there. Ctrl-C stops the server.")
        proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        forget_ui_server(data_dir, proc.pid)
        stop_processes(children[::-1], timeout_s=15.0)
