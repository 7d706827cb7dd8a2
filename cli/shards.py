"""`zeroforge shards`: list self-play shards and inspect one (summary, a game move by move, a move's heat map).

Errors print one line `error: ...` on stderr and exit with code 2.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import click

from shared.layout import DataLayout, LayoutError, default_data_root, resolve_game_name
from shared.shards import ShardError, read_shard, scan_shards
from shared.shards.reader import ShardInfo
from cli.render import game_listing, move_view, shard_summary, text_table


def _fail(message: object) -> NoReturn:
    """One-line error on stderr, exit code 2."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise click.exceptions.Exit(2)


def _info_json(info: ShardInfo) -> dict:
    return {
        "path": str(info.path), "job_id": info.job_id, "generation": info.generation, "games": info.num_games,
        "positions": info.num_positions, "model_version": info.model_version, "created": info.created,
        "size_bytes": info.size_bytes, "game": info.game_name,
    }


def _shards_directory(directory: Path | None, game_name: str | None, data_dir: Path | None) -> Path:
    if directory is not None:
        if not directory.is_dir():
            _fail(f"{directory} is not a directory; pass a shards directory or use --data-dir/--game")
        return directory
    root = data_dir or default_data_root()
    return DataLayout(root, resolve_game_name(root, game_name, must_exist=True)).shards_dir


@click.group()
def shards() -> None:
    """Inspect self-play shards (HDF5 files of positions, visit distributions and results)."""


@shards.command("ls")
@click.argument("directory", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option("--game", "game_name", help="Game whose shards to list (default: the only game in the data dir).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")
def ls_command(directory: Path | None, as_json: bool, game_name: str | None, data_dir: Path | None) -> None:
    """List the shards under DIR (recursively), or under the game's shards directory in the data root."""
    try:
        scan = scan_shards(_shards_directory(directory, game_name, data_dir), recursive=True)
    except (LayoutError, ShardError) as exc:
        _fail(exc)
    infos = scan.infos
    if directory is not None and game_name:  # an explicit DIR may mix games; keep only the requested one
        infos = [i for i in infos if i.game_name == game_name]
    for bad in scan.damaged:
        click.echo(f"warning: unreadable shard {bad.path}: {' '.join(bad.problem.split())}", err=True)
    if as_json:
        click.echo(json.dumps([_info_json(i) for i in infos], indent=2))
        return
    rows = [(i.generation, i.job_id, i.num_games, i.num_positions, i.model_version or "-", i.created[:19],
             f"{i.size_bytes / 1024:.0f}K") for i in infos]
    click.echo(text_table(["gen", "job", "games", "positions", "model", "created (UTC)", "size"], rows))
    click.echo(f"{len(infos)} shards, {sum(i.num_games for i in infos)} games, "
               f"{sum(i.num_positions for i in infos)} positions" + (f", {len(scan.damaged)} unreadable" if scan.damaged else ""))


def _load_game(shard):
    from shared.games import make_game_from_params

    try:
        return make_game_from_params(shard.game_params)
    except (ValueError, KeyError) as exc:  # GameError and ShardError are ValueErrors
        _fail(f"{shard.path}: cannot rebuild its game {shard.attrs.get('game')}: {exc}")


@shards.command("show")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--game", "game_index", type=click.IntRange(0, 10**9),
              help="Show game K (0-based, as listed in the summary) move by move.")
@click.option("--move", "move", type=click.IntRange(1, 10**6),
              help="With --game: board and root visit heat map at move M (1-based).")
def show_command(file: Path, game_index: int | None, move: int | None) -> None:
    """Summarise shard FILE; with --game K list one game; with --game K --move M show a move's heat map."""
    if move is not None and game_index is None:
        _fail("--move M needs --game K (the game whose move to show)")
    try:
        shard = read_shard(file)
        if game_index is None:
            click.echo(shard_summary(shard))
            return
        game = _load_game(shard)
        shard.game_rows(game_index)  # ShardError for a game out of range
        if move is None:
            click.echo(game_listing(game, shard, game_index))
            return
        from rich.console import Console

        Console(highlight=False, soft_wrap=True).print(move_view(game, shard, game_index, move))
    except ShardError as exc:
        _fail(exc)
