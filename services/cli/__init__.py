"""The `zeroforge` command: one click group, one module per subcommand family."""
from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zeroforge")
def main() -> None:
    """zeroforge: self-play AlphaZero training for board games."""


def _register() -> None:
    # Each module defines one click command or group named like the module; they are added here.
    from services.cli import bench

    main.add_command(bench.bench)


_register()
