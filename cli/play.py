"""`zeroforge play`: a game in the terminal against the network-guided search.

    zeroforge play --game connect4 --first ai --hint
    zeroforge play --game gomoku-8x8-5 --save game.sgf
    printf '5\\n1\\nquit\\n' | zeroforge play --game tictactoe --model model.pt

Moves are typed in the game's notation, one per turn; an unreadable or illegal move is refused with the
reason in the game's notation ("c3 is occupied after move 5") and asked again. Commands: `hint` (the AI's
top moves and value for your position), `undo` (take back your last move and the AI's reply), `help`,
`quit` (or end of input). In Othello a forced pass is announced and played for you. With --hint the hint is
shown before each of your moves and the AI's value estimate after each of its moves. At the end the winning
line is marked on the board (in-a-row games) and the game record is printed in the game's notation; --save
FILE writes it (SGF for Gomoku). The game logic lives in cli.play_session, the record in cli.game_record.
"""
from __future__ import annotations

from pathlib import Path

import click

from cli.play_common import (
    canonical_game_name, checked_device, config_file_option, data_dir_option, describe_model, device_option,
    game_and_registry, game_config, game_option, model_option, user_errors,
)
from cli.store_replica import store_option, sync_registry
from shared.players.analysis import DEFAULT_ANALYSIS_SIMULATIONS, PositionAnalysis

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "?")
HINT_WORDS = ("hint",)
UNDO_WORDS = ("undo", "takeback")


def hint_text(analysis: PositionAnalysis) -> str:
    """'hint: c3 62%, d4 20% ...; value for you +0.15; line c3 d4 e5' (visit shares, side to move's view)."""
    moves = ", ".join(f"{stat.move} {100 * stat.visit_share:.0f}%" for stat in analysis.top)
    line = f"; line {' '.join(analysis.pv)}" if len(analysis.pv) > 1 else ""
    return f"hint: {moves}; value for you {analysis.value:+.2f}{line}"


def _help_text(session) -> str:
    from shared.players.positions import move_form

    return (f"type one move: {move_form(session.game)}; {len(session.legal_moves())} legal moves now. "
            "Commands: hint, undo, quit")


def _read_move(colour: str) -> str | None:
    """One line from the user, stripped; None at the end of input."""
    try:
        return click.prompt(f"your move ({colour})", type=str, prompt_suffix=": ").strip()
    except click.exceptions.Abort:   # end of input (or Ctrl-C / Ctrl-D)
        return None


def _undo(session) -> None:
    from shared.games import GameError

    try:
        removed = session.undo()
    except GameError as exc:
        click.echo(f"nothing to undo: {exc}")
        return
    click.echo(f"took back {' '.join(session.game.action_to_str(a) for a in removed)}\n\n{session.game.render(session.state)}")


def _human_turn(session, hint: bool) -> bool:
    """Ask until the human plays a legal move (or passes when forced); False when the user quits."""
    from shared.players.analysis import side_names
    from shared.games import GameError

    forced = session.forced_pass()
    if forced is not None:
        click.echo("You have no legal move: you pass.")
        session.play_human(session.game.action_to_str(forced))
        return True
    if hint:
        click.echo(hint_text(session.analyze()))
    while True:
        colour = side_names(session.game, session.state)[1]
        text = _read_move(colour)
        word = (text or "").lower()
        if text is None or word in QUIT_WORDS:
            return False
        if word in HELP_WORDS:
            click.echo(_help_text(session))
        elif word in HINT_WORDS:
            click.echo(hint_text(session.analyze()))
        elif word in UNDO_WORDS:
            _undo(session)
        else:
            try:
                session.play_human(text)
                return True
            except GameError as exc:
                click.echo(f"not accepted: {' '.join(str(exc).split())}")


def _ai_turn(session, hint: bool) -> None:
    """Let the AI search and move; tell the user which move (and, with hints, its value estimate)."""
    analysis = session.play_ai()
    value = f"   (its value estimate {analysis.value:+.2f})" if hint else ""
    click.echo(f"AI ({analysis.colour}) plays {analysis.move}{value}")


def run_game(session, hint: bool) -> bool:
    """Play until the game ends (True) or the user quits (False), printing the board after every move
    (the final board is left to `finish_game`)."""
    click.echo(session.game.render(session.state))
    while not session.finished:
        if session.human_to_move:
            if not _human_turn(session, hint):
                return False
        else:
            _ai_turn(session, hint)
        if not session.finished:
            click.echo("\n" + session.game.render(session.state))
    return True


def finish_game(session, finished: bool, players: tuple[str, str], save: Path | None) -> None:
    """The final board with the winning line marked, ONE end message, the game record, and --save."""
    from cli.game_record import mark_cells, write_record
    from shared.games.winning_line import winning_line
    from shared.games.base import F_WINNER

    game, state = session.game, session.state
    result = None
    if finished:
        line = winning_line(game, state)
        click.echo("\n" + mark_cells(game, state, line))
        result = int(state[game.num_cells + F_WINNER])
        squares = _line_text(game, line) if line else ""
        outcome = session.outcome_text()
        click.echo(f"game over: {outcome}{squares}")
    else:
        outcome = "unfinished"
        click.echo("game left unfinished")
    record = game.moves_to_str(session.moves)
    click.echo(f"game record ({len(session.moves)} moves): {record or '(no moves)'}")
    if save is not None:
        from shared.players.positions import winner_text

        text = winner_text(game, state) if finished else "unfinished"
        kind = write_record(save, game, session.moves, result_text=f"{text} ({outcome})", result=result,
                            players=players)
        click.echo(f"saved the game to {save} ({kind})")


def _line_text(game, cells: list[int]) -> str:
    """': h8 i8 j8 k8 l8 in a row' for games whose actions name cells; Connect Four's actions are columns, so
    its line is given by columns and rows (rows counted from the bottom)."""
    if game.num_actions == game.num_cells:
        return f": {' '.join(game.action_to_str(c) for c in cells)} in a row"
    columns = sorted({c % game.width + 1 for c in cells})
    rows = sorted({game.height - c // game.width for c in cells})
    return (f": {len(cells)} in a row in column{'s' if len(columns) > 1 else ''} {' '.join(map(str, columns))}, "
            f"row{'s' if len(rows) > 1 else ''} {' '.join(map(str, rows))} (from the bottom)")


@click.command("play")
@game_option
@model_option
@click.option("--sims", type=click.IntRange(1, 100_000), default=DEFAULT_ANALYSIS_SIMULATIONS, show_default=True,
              help="The AI's search simulations per move.")
@click.option("--first", type=click.Choice(["human", "ai"]), default="human", show_default=True,
              help="Who plays the first move.")
@click.option("--moves", "moves_text", default=None, metavar="MOVES",
              help="Start from the position after these moves (game notation) instead of the start position.")
@click.option("--hint", is_flag=True, help="Show the AI's top moves and value estimate before each of your moves.")
@click.option("--save", type=click.Path(path_type=Path, dir_okay=False), default=None, metavar="FILE",
              help="Write the game record to FILE at the end (SGF for Gomoku, the move string otherwise).")
@config_file_option
@data_dir_option
@device_option
@store_option
def play(game_name: str, model_text: str | None, sims: int, first: str, moves_text: str | None, hint: bool,
         save: Path | None, config_file: Path | None, data_dir: Path | None, device: str,
         store_url: str | None) -> None:
    """Play a game against the AI in the terminal (moves in the game's notation; hint, undo, help, quit).

    --first human gives you the first player's side (X, black in Othello), --first ai the second one.
    """
    from shared.players.analysis import choose_model, load_network_evaluator
    from shared.players.positions import move_form
    from cli.play_session import PlaySession

    device = checked_device(device)
    with user_errors():
        if store_url is not None:
            data_dir = sync_registry(store_url, data_dir, canonical_game_name(game_name), models=[model_text])
        game, registry_dir = game_and_registry(game_name, data_dir)
        model = choose_model(game, model_text, registry_dir)
        evaluate = load_network_evaluator(model.path, game, device)
        search = game_config(game.name, config_file).match_search_config(sims)
        session = PlaySession(game, evaluate, search=search, human_first=first == "human")
        if moves_text:
            session.start_from(moves_text)
        if model.note:
            click.echo(f"note: {model.note}")
        side = "first" if first == "human" else "second"
        click.echo(f"{game.name}: you play {side} against {describe_model(game, model, registry_dir)}, "
                   f"{sims} simulations per move.")
        click.echo(f"Type one move per turn: {move_form(game)}. Commands: hint, undo, help, quit.")
        ai_name = f"zeroforge {model.label}"
        players = ("you", ai_name) if first == "human" else (ai_name, "you")
        finished = run_game(session, hint)
        finish_game(session, finished, players, save)
