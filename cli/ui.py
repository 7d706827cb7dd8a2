"""`zeroforge ui`: start the Prefect server and UI on localhost over the pipeline's own Prefect database."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import click

from flows.prefect_env import (UI_HOST, UI_PORT, configure_prefect, forget_ui_server, record_ui_server, server_is_up,
                               ui_url)
from shared.layout import default_data_root


@click.command()
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The pipeline's data directory (default: ZEROFORGE_DATA_DIR or ./zeroforge-data).")
@click.option("--port", type=click.IntRange(1, 65535), default=UI_PORT, show_default=True,
              help="Port of the Prefect server and UI on 127.0.0.1.")
@click.option("--startup-timeout", type=click.FloatRange(1, 3600), default=120.0, show_default=True,
              help="Seconds to wait for the Prefect server to answer before giving up.")
def ui(data_dir: Path | None, port: int, startup_timeout: float) -> None:
    """Start the Prefect UI at http://127.0.0.1:4200 and keep it running until Ctrl-C.

    Flows started by `zeroforge run` after this (from the same data directory) report to it, as it records its
    address under the data directory while it runs; earlier runs are already in the same database and show too.
    """
    data_dir = (data_dir or default_data_root()).resolve()
    try:
        configure_prefect(data_dir, use_recorded_ui=False)
    except OSError as exc:
        raise click.ClickException(f"--data-dir {data_dir}: cannot use it ({exc.strerror or exc})") from None
    os.environ.pop("PREFECT_API_URL", None)
    api = f"{ui_url(UI_HOST, port)}/api"
    if server_is_up(api):
        click.echo(f"a Prefect server already answers at {ui_url(UI_HOST, port)}")
        return
    prefect = shutil.which("prefect") or str(Path(sys.executable).with_name("prefect"))
    cmd = [prefect, "server", "start", "--host", UI_HOST, "--port", str(port)]
    proc = subprocess.Popen(cmd)
    try:
        deadline = time.monotonic() + startup_timeout
        while not server_is_up(api):
            if proc.poll() is not None:
                raise click.ClickException(f"the Prefect server exited with code {proc.returncode}; see its output above")
            if time.monotonic() > deadline:
                raise click.ClickException(f"the Prefect server did not answer within {startup_timeout:.0f} s")
            time.sleep(1.0)
        record_ui_server(data_dir, api, proc.pid)
        click.echo(f"\nPrefect UI: {ui_url(UI_HOST, port)}  (PREFECT_HOME={os.environ['PREFECT_HOME']})")
        click.echo("Flows started now with `zeroforge run` show there. Ctrl-C stops the server.")
        proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        forget_ui_server(data_dir, proc.pid)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
