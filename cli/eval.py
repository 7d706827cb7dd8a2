"""`zeroforge eval A B`: a paired match between any two players, with the gate's openings and statistics.

    zeroforge eval best pure-mcts:400 --game connect4 --games 100 --sims 64
    zeroforge eval minimax random --game tictactoe --games 40 --json

Players are player specs (shared.players.spec): a registry version, best, shipped, a model file, random,
pure-mcts:N or minimax (tic-tac-toe). With --store URL the registry and the models played come from the run's
object store (cli.store_replica). The logic lives in shared.players.match; this module parses and prints.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from cli.play_common import (
    canonical_game_name, checked_device, config_file_option, data_dir_option, device_option, fail, game_and_registry,
    game_config, game_option, user_errors,
)
from cli.render import text_table
from cli.store_replica import store_option, sync_registry


def match_progress():
    """(update(games done, games in all, A's score so far), finish) for a match played here: a rich progress bar
    with the score and the time left on stderr when it is a terminal, else a plain line on stderr at most every
    ~10 s (services.progress.LogThrottle) and at the last game."""
    import time

    if not sys.stderr.isatty():
        from services.progress import LogThrottle

        throttle, start = LogThrottle(), time.monotonic()

        def line(done: int, total: int, score: float) -> None:
            if throttle.due(done) or done == total:
                click.echo(f"games {done}/{total}, score of A so far {score:.3f} ({time.monotonic() - start:.0f} s)",
                           err=True)
        return line, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    progress = Progress("games", BarColumn(), MofNCompleteColumn(), "score of A {task.fields[score]}",
                        TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    task = progress.add_task("games", total=None, score="-")
    progress.start()

    def update(done: int, total: int, score: float) -> None:
        progress.update(task, completed=done, total=total, score=f"{score:.3f}")

    return update, progress.stop


def model_notes(game, specs: tuple[str, str], registry_dir: Path) -> list[str]:
    """Notes about network players that fall back (`best` without a registry plays the shipped model), each
    naming the player; resolving here also stops a missing model before any game is played."""
    from shared.players.spec import parse_player_spec, resolve_model

    notes = []
    for name, text in zip("AB", specs):
        spec = parse_player_spec(text)
        if spec.uses_network:
            model = resolve_model(spec, game, registry_dir)
            if model.note:
                notes.append(f"player {name} ({text}): {model.note}")
    return notes


#: Matches of at least this many games use one process per core by default (`--processes`).
AUTO_PROCESSES_MIN_GAMES = 40


def _wdl(counts: list[int]) -> str:
    """[wins, draws, losses] as 'W-D-L'."""
    return "-".join(str(c) for c in counts)


def format_report(report: dict) -> str:
    """The eval report as a small table plus one line of settings."""
    rows = [
        ("games", f"{report['games']} ({report['pairs']} openings x 2 colours)"),
        ("A wins / draws / losses", f"{report['wins']} / {report['draws']} / {report['losses']}"),
        ("  W-D-L as first player / second", f"{_wdl(report['a_first'])} / {_wdl(report['a_second'])}"),
        ("score of A [95% CI]", f"{report['score']:.3f} [{report['ci_low']:.3f}, {report['ci_high']:.3f}]"),
        ("Elo A - B [95% CI]", f"{report['elo']:+.0f} [{report['elo_low']:+.0f}, {report['elo_high']:+.0f}]"),
    ]
    title = f"A = {report['player_a']}   B = {report['player_b']}   ({report['game']})"
    plies = report.get("opening_plies")
    openings = "" if plies is None else f" ({','.join(map(str, plies))} plies of any move)"
    footer = (f"{report['sims']} simulations per move for network players; opening seed {report['opening_seed']}"
              f"{openings}; {report['jobs']} chunks; {report['seconds']:.1f} s")
    return "\n".join([title, text_table(["", "value"], rows), footer])


def _plies_option(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    """--opening-plies as a tuple of ply counts (None when not given); a bad value is a one-line error."""
    from shared.config.fields import parse_plies

    if value is None:
        return None
    try:
        return parse_plies(value)
    except ValueError as exc:
        fail(f"--opening-plies {value!r}: {exc}")


@click.command("eval")
@click.argument("player_a")
@click.argument("player_b")
@game_option
@click.option("--games", type=int, required=True, help="Games to play; even: games/2 openings, each played twice.")
@click.option("--sims", type=click.IntRange(1, 100_000), default=None,
              help="Simulations per move for network players [default: the game's gate simulations].")
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
              help="Random seed of the players (in the gate's chunk i, A gets SEED+i, B SEED+i+1).")
@click.option("--opening-seed", type=click.IntRange(0, 2**31), default=None, help="Seed of the opening set [default: the gate's].")
@click.option("--opening-plies", "opening_plies", callback=_plies_option, default=None, metavar="PLIES",
              help="Openings of these lengths made of any legal moves, e.g. 6-8 or 6,7,8 (the form of "
                   "gate.opening_plies) [default: the game family's openings].")
@config_file_option
@data_dir_option
@device_option
@click.option("--processes", type=click.IntRange(1, 256), default=None,
              help="Processes playing the chunks at once, at most one per chunk; the games are the same as with one "
                   f"[default: one per core on cpu from {AUTO_PROCESSES_MIN_GAMES} games, else 1].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@store_option
def eval_command(player_a: str, player_b: str, game_name: str, games: int, sims: int | None, seed: int,
                 opening_seed: int | None, opening_plies: tuple[int, ...] | None, config_file: Path | None,
                 data_dir: Path | None, device: str, processes: int | None, as_json: bool,
                 store_url: str | None) -> None:
    """Play PLAYER_A against PLAYER_B (player specs) and report A's W/D/L, score and Elo with 95% intervals.

    Specs: random, minimax (tic-tac-toe), pure-mcts:N, best, shipped, a registry version (e.g. 000012) or a
    model file. `best` without a registry (or before the first promotion) plays the shipped model, with a note. The match is played exactly as the gate plays it: the gate's search settings and opening set,
    each opening twice with colours swapped, in the gate's chunks; the openings are the game family's (those of
    the anchor match) unless --opening-plies asks for others, e.g. those of a gate.opening_plies setting.
    """
    from shared.players.match import check_game_count, evaluate_players

    device = checked_device(device)
    with user_errors():
        check_game_count(games)
        if store_url is not None:
            data_dir = sync_registry(store_url, data_dir, canonical_game_name(game_name), models=[player_a, player_b])
        game, registry_dir = game_and_registry(game_name, data_dir)
        cfg = game_config(game.name, config_file)
        notes = model_notes(game, (player_a, player_b), registry_dir)
        for note in notes:
            click.echo(f"note: {note}", err=True)
        search = cfg.match_search_config(sims)
        opening_seed = cfg.gate.opening_seed if opening_seed is None else opening_seed
        if processes is None:      # starting a process costs ~2 s: small matches stay in this one
            processes = (os.cpu_count() or 1) if device == "cpu" and games >= AUTO_PROCESSES_MIN_GAMES else 1
        update, finish = match_progress()
        try:
            stats, seconds = evaluate_players(game, player_a, player_b, games=games, search=search,
                                              jobs=cfg.gate.jobs, seed=seed, opening_seed=opening_seed,
                                              registry_dir=registry_dir, device=device, progress=update,
                                              processes=processes, opening_plies=opening_plies)
        finally:
            finish()
    report = {**stats.to_dict(), "player_a": player_a, "player_b": player_b, "game": game.name,
              "sims": search.num_simulations, "seed": seed, "opening_seed": opening_seed,
              "opening_plies": None if opening_plies is None else list(opening_plies), "jobs": cfg.gate.jobs,
              "seconds": seconds, "notes": notes}
    click.echo(json.dumps(report, sort_keys=True) if as_json else format_report(report))
