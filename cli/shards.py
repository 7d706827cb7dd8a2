"""`zeroforge shards`: list self-play shards and inspect one (summary, a game move by move, one move's heat
map, a move-by-move replay), each view also as JSON.

    zeroforge shards ls --game tictactoe                  # every shard with its path
    zeroforge shards show                                 # the newest shard of the game
    zeroforge shards show JOB_ID --index 3 --move 5       # a shard by job id (or file), game 3, move 5
    zeroforge shards show JOB_ID --index 3 --replay       # every move; Enter steps on a terminal
    zeroforge shards show g3-sp0                          # a job by its short id: generation 3, job 0

SHARD is a shard file, a self-play job id (found in the game's shard folders through the data layout) or its
short form g<generation>-sp<index> (shared.shards.short_ids; `shards ls` shows it).
With --store s3://BUCKET/PREFIX (a host without the pipeline's data directory), the store's shards of the game are
fetched first into a replica (--data-dir, else the deployment's cache directory; cli.store_replica).
Errors print one line `error: ...` on stderr and exit with code 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cli.play_common import fail
from cli.store_replica import mirror_game_shards, store_option
from cli.render import game_json, game_listing, shard_summary, summary_json, text_table
from shared.layout import DataLayout, LayoutError, default_data_root, resolve_game_name
from shared.shards import ShardError, read_shard, scan_shards
from shared.shards.reader import ShardInfo
from shared.shards.short_ids import parse_short_id, resolve_short_id, short_id

_DATA_DIR_HELP = "Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data)."


def _info_json(info: ShardInfo) -> dict:
    return {
        "path": str(info.path), "job_id": info.job_id, "short_id": short_id(info.job_id),
        "generation": info.generation, "games": info.num_games,
        "positions": info.num_positions, "model_version": info.model_version, "created": info.created,
        "size_bytes": info.size_bytes, "game": info.game_name,
    }


def _layout(game_name: str | None, data_dir: Path | None) -> DataLayout:
    root = data_dir or default_data_root()
    return DataLayout(root, resolve_game_name(root, game_name, must_exist=True))


def _shards_directory(directory: Path | None, game_name: str | None, data_dir: Path | None) -> tuple[Path, Path]:
    """(directory to scan, directory the paths are shown relative to)."""
    if directory is not None:
        if not directory.is_dir():
            fail(f"{directory} is not a directory; pass a shards directory or use --data-dir/--game")
        return directory, directory
    layout = _layout(game_name, data_dir)
    return layout.shards_dir, layout.root


def _relative(path: Path, base: Path) -> str:
    try:
        return str(Path(path).relative_to(base))
    except ValueError:
        return str(path)


@click.group()
def shards() -> None:
    """Inspect self-play shards (HDF5 files of positions, visit distributions and results)."""


@shards.command("ls")
@click.argument("directory", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option("--game", "game_name", help="Game whose shards to list (default: the only game in the data dir).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), help=_DATA_DIR_HELP)
@store_option
def ls_command(directory: Path | None, as_json: bool, game_name: str | None, data_dir: Path | None,
               store_url: str | None) -> None:
    """List the shards under DIRECTORY (recursively), or under the game's shards directory in the data root,
    with their paths (relative to the data root or DIRECTORY; the JSON has full paths)."""
    if store_url is not None and directory is None:
        data_dir = mirror_game_shards(store_url, game_name, data_dir)
    try:
        folder, base = _shards_directory(directory, game_name, data_dir)
        scan = scan_shards(folder, recursive=True)
    except (LayoutError, ShardError) as exc:
        fail(exc)
    infos = scan.infos
    if directory is not None and game_name:  # an explicit DIR may mix games; keep only the requested one
        infos = [i for i in infos if i.game_name == game_name]
    for bad in scan.damaged:
        click.echo(f"warning: unreadable shard {bad.path}: {' '.join(bad.problem.split())}", err=True)
    if as_json:
        click.echo(json.dumps([_info_json(i) for i in infos], indent=2))
        return
    rows = [(i.generation, short_id(i.job_id) or "-", i.job_id, i.num_games, i.num_positions, i.model_version or "-", i.created[:19],
             f"{i.size_bytes / 1024:.0f}K", _relative(i.path, base)) for i in infos]
    click.echo(text_table(["gen", "short", "job", "games", "positions", "model", "created (UTC)", "size", "path"], rows))
    click.echo(f"{len(infos)} shards, {sum(i.num_games for i in infos)} games, "
               f"{sum(i.num_positions for i in infos)} positions" + (f", {len(scan.damaged)} unreadable" if scan.damaged else "")
               + f"; paths relative to {base}")


def _find_shard(shard: str | None, game_name: str | None, data_dir: Path | None) -> Path:
    """SHARD as a file path, else as a job id in the game's shard folders; no SHARD: the newest shard."""
    if shard is not None and (Path(shard).is_file() or shard.endswith(".h5") or "/" in shard):
        if not Path(shard).is_file():
            fail(f"shard file {shard} does not exist; give a shard file or a job id (see `zeroforge shards ls`)")
        return Path(shard)
    layout = _layout(game_name, data_dir)
    if shard is None:
        infos = scan_shards(layout.shards_dir).infos
        if not infos:
            fail(f"no shards for {layout.game_name} under {layout.shards_dir}; "
                 f"play some with `zeroforge selfplay --game {layout.game_name} --generation 1`")
        return infos[-1].path
    found = layout.find_shard(shard)
    if found is None and parse_short_id(shard) is not None:     # a short job id: g<generation>-sp<index>
        infos = scan_shards(layout.shards_dir).infos if layout.shards_dir.is_dir() else []
        job = resolve_short_id(shard, (i.job_id for i in infos))
        found = next(i.path for i in reversed(infos) if i.job_id == job)
    if found is None:
        fail(f"no shard file {shard!r} and no shard of job {shard!r} under {layout.shards_dir}; "
             "give a job id, its short form (g<generation>-sp<index>, e.g. g3-sp0) or a file; "
             "see `zeroforge shards ls`")
    return found


def _load_game(shard):
    from shared.games import make_game_from_params

    try:
        return make_game_from_params(shard.game_params)
    except (ValueError, KeyError) as exc:  # GameError and ShardError are ValueErrors
        fail(f"{shard.path}: cannot rebuild its game {shard.attrs.get('game')}: {exc}")


def _console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _wait_for_enter() -> bool:
    """Wait for Enter on the terminal; False when the user types q (or the input ends)."""
    try:
        answer = click.prompt("Enter: next move, q: stop", default="", show_default=False, prompt_suffix=" ")
    except click.exceptions.Abort:
        return False
    return answer.strip().lower() not in ("q", "quit")


def _show_game(game, shard, index: int, move: int | None, replay: bool, as_json: bool) -> None:
    from cli.shard_views import move_json, move_view, replay as replay_moves

    shard.game_rows(index)  # ShardError for a game out of range
    length = int(shard.games["length"][index])
    if replay:
        if as_json:
            click.echo(json.dumps([move_json(game, shard, index, m) for m in range(1, length + 2)], indent=2))
            return
        console = _console()
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
        replay_moves(game, shard, index, console.print, _wait_for_enter if interactive else (lambda: True))
        return
    if move is None:
        click.echo(json.dumps(game_json(game, shard, index), indent=2) if as_json else game_listing(game, shard, index))
        return
    if as_json:
        click.echo(json.dumps(move_json(game, shard, index, move), indent=2))
    else:
        _console().print(move_view(game, shard, index, move))


@shards.command("show")
@click.argument("shard", required=False, metavar="[SHARD]")
@click.option("--index", "game_index", type=click.IntRange(min=0), default=None, metavar="K",
              help="Show game K (0-based, as listed in the summary) move by move.")
@click.option("--move", "move", type=click.IntRange(min=1), default=None, metavar="M",
              help="With --index: the board, the root visit heat map, the search value and z at move M (1-based); "
                   "M = moves + 1 shows the final position.")
@click.option("--replay", is_flag=True,
              help="With --index: every move, then the final position (Enter steps on a terminal; all printed otherwise).")
@click.option("--all", "all_games", is_flag=True, help="List every game in the summary (default: the first 50).")
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON.")
@click.option("--game", "game_name", help="Game whose shards hold SHARD (default: the only game in the data dir).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), help=_DATA_DIR_HELP)
@store_option
def show_command(shard: str | None, game_index: int | None, move: int | None, replay: bool, all_games: bool,
                 as_json: bool, game_name: str | None, data_dir: Path | None, store_url: str | None) -> None:
    """Summarise SHARD (a shard file, a self-play job id or its short form g<generation>-sp<index> as `shards ls`
    shows it, e.g. g3-sp0; default: the newest shard); --index K lists game K,
    --move M shows one move's heat map, --replay steps through the game."""
    if (move is not None or replay) and game_index is None:
        fail(f"{'--move M' if move is not None else '--replay'} needs --index K (the game to show)")
    if move is not None and replay:
        fail("give --move M or --replay, not both")
    if store_url is not None:
        data_dir = mirror_game_shards(store_url, game_name, data_dir)
    try:
        loaded = read_shard(_find_shard(shard, game_name, data_dir))
        if game_index is None:
            click.echo(json.dumps(summary_json(loaded), indent=2) if as_json else shard_summary(loaded, all_games))
            return
        _show_game(_load_game(loaded), loaded, game_index, move, replay, as_json)
    except (ShardError, LayoutError) as exc:
        fail(exc)
