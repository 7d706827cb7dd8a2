"""`zeroforge analyze`: the network-guided search's best move, value and top moves for given positions.

    zeroforge analyze --game connect4 --moves "4453" --json
    zeroforge analyze --game gomoku-15 --positions games.txt --sims 400      # one JSON line per input line

A position is the move sequence from the start in the game's notation ("" or no --moves = the start
position). Each answer names the model that searched ("model"), the principal variation ("pv", in the game's
notation), and per top move its root visit count ("visits"), visit share ("visit_share"), prior and q
(null for a move the search never visited). With --positions every line of FILE ('-' = stdin) is one position (an empty line is the start position), all
valid positions are searched in ONE batched search, and one JSON line is printed per input line, in order;
a line that cannot be read or played, or whose game is over, gets {"moves": ..., "error": ...} instead.
With --time SECONDS the search runs in slices and keeps the largest that fits in that many seconds (all positions
together), at most --sims simulations; each answer then also says its "simulations" and "seconds".
The logic lives in shared.players.analysis and shared.players.timed_analysis.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

import click

from cli.play_common import (
    checked_device, config_file_option, data_dir_option, device_option, fail, game_and_registry, game_config,
    game_option, model_option, user_errors,
)
from shared.players.analysis import DEFAULT_ANALYSIS_SIMULATIONS, DEFAULT_TOP_K


def read_position_lines(handle: TextIO) -> list[str]:
    """The move strings of a positions file, one per line, line endings removed (empty = the start position)."""
    return [line.rstrip("\r\n") for line in handle.read().splitlines()]


def _analyze_one(game, evaluate, moves_text: str, search, top: int, as_json: bool, model: str,
                 seconds: float | None) -> None:
    """Analyse one position (within `seconds` when given); an unreadable or illegal move string is a one-line
    error (exit 2)."""
    from shared.players.analysis import format_analysis, position_from_moves
    from shared.players.timed_analysis import timed_analysis
    from shared.games import GameError

    try:
        state = position_from_moves(game, moves_text)     # [S] int16
    except GameError as exc:
        fail(f"--moves {moves_text!r}: {exc}")
    timed = timed_analysis(game, evaluate, state[None], search=search, seconds=seconds, top_k=top)
    analysis = timed.analyses[0]
    if as_json:
        answer = analysis.to_dict(moves_text, model)
        if seconds is not None:
            answer.update(simulations=timed.simulations, seconds=round(timed.seconds, 3))
        click.echo(json.dumps(answer))
        return
    click.echo(format_analysis(game, state, analysis, model))
    if seconds is not None:
        click.echo(f"searched {timed.simulations} simulations in {timed.seconds:.2f} s "
                   f"(time budget {seconds:g} s, at most {search.num_simulations})")


@click.command("analyze")
@game_option
@click.option("--moves", "moves_text", default=None, metavar="MOVES",
              help='Moves played from the start, in the game\'s notation (e.g. "4453", "h8 i9") '
                   '[default: the start position].')
@click.option("--positions", "positions_file", type=click.File("r"), default=None, metavar="FILE",
              help="Analyse every line of FILE ('-' = stdin) in one batch; prints one JSON line per line.")
@model_option
@click.option("--sims", type=click.IntRange(1, 100_000), default=DEFAULT_ANALYSIS_SIMULATIONS, show_default=True,
              help="Search simulations per position (with --time: the most simulations).")
@click.option("--time", "seconds", type=click.FloatRange(min=0, min_open=True, max=86_400), default=None,
              metavar="SECONDS", help="Search as many simulations as fit in SECONDS (all positions together), "
                                      "at most --sims [default: no time limit, exactly --sims].")
@click.option("--top", type=click.IntRange(1, 1000), default=DEFAULT_TOP_K, show_default=True,
              help="Moves listed in the top list.")
@config_file_option
@data_dir_option
@device_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (always on with --positions).")
def analyze(game_name: str, moves_text: str | None, positions_file: TextIO | None, model_text: str | None,
            sims: int, seconds: float | None, top: int, config_file: Path | None, data_dir: Path | None, device: str,
            as_json: bool) -> None:
    """Best move, value (side to move's view), principal variation and top moves for one or many positions."""
    from shared.players.analysis import choose_model, load_network_evaluator
    from shared.players.timed_analysis import analyze_move_strings

    if moves_text is not None and positions_file is not None:
        fail("give one of --moves \"...\" (one position) or --positions FILE (one position per line), not both")
    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        search = game_config(game.name, config_file).match_search_config(sims)
        lines = read_position_lines(positions_file) if positions_file is not None else None
        model = choose_model(game, model_text, registry_dir)
        if model.note:
            click.echo(f"note: {model.note}", err=True)
        evaluate = load_network_evaluator(model.path, game, device)
        if seconds is not None:
            from shared.players.timed_analysis import warm_up

            warm_up(game, evaluate, search)        # the first searches are slow; not on the clock
        if lines is None:
            _analyze_one(game, evaluate, moves_text or "", search, top, as_json, model.label, seconds)
            return
        for answer in analyze_move_strings(game, evaluate, lines, search=search, top_k=top, model=model.label,
                                           seconds=seconds):
            click.echo(json.dumps(answer))
