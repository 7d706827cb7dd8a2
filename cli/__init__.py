"""The `zeroforge` command: one click group; each subcommand lives in its own module and is imported only
when it is used, so `zeroforge play` does not pay for Prefect and rq imports."""
from __future__ import annotations

import importlib

import click

#: command name -> "module:attribute" of its click command or group.
COMMANDS = {
    "run": "cli.run:run",
    "status": "cli.status:status",
    "worker": "cli.worker:worker",
    "ui": "cli.ui:ui",
    "selfplay": "cli.jobs:selfplay",
    "train": "cli.jobs:train",
    "gate": "cli.jobs:gate",
    "models": "cli.models:models",
    "shards": "cli.shards:shards",
    "eval": "cli.eval:eval_command",
    "analyze": "cli.analyze:analyze",
    "play": "cli.play:play",
    "gtp": "cli.gtp:gtp",
    "pbrain": "cli.pbrain:pbrain",
    "bench": "cli.bench:bench",
    "store": "cli.store:store",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module the first time the subcommand is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            module, attribute = COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zeroforge")
def main() -> None:
    """zeroforge: self-play AlphaZero training for board games."""
