"""The `zeroforge` command: one click group, one module per subcommand family."""
from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zeroforge")
def main() -> None:
    """zeroforge: self-play AlphaZero training for board games."""


def _register() -> None:
    # Each module defines one click command or group named like the module; they are added here.
    from services.cli import bench, jobs, run, ui, worker

    main.add_command(bench.bench)
    main.add_command(run.run)
    main.add_command(worker.worker)
    main.add_command(ui.ui)
    main.add_command(jobs.selfplay)
    main.add_command(jobs.train)
    main.add_command(jobs.gate)
    from services.cli import models, shards

    main.add_command(shards.shards)
    main.add_command(models.models)
    from services.cli import analyze, eval as eval_cli, play

    main.add_command(eval_cli.eval_command)
    main.add_command(analyze.analyze)
    main.add_command(play.play)


_register()
