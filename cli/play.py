"""`zeroforge play`: a game in the terminal against the network-guided search.

    zeroforge play --game connect4 --first ai --hint
    printf '5\\n1\\nquit\\n' | zeroforge play --game tictactoe --model model.pt

Moves are typed in the game's notation; an unreadable or illegal move is refused and asked again. `help`
lists the legal moves, `quit` (or end of input) leaves. In Othello a forced pass is announced and played
for you. With --hint the AI's top moves and value estimate for your position are shown before each of your
moves, and its own value estimate after each of its moves. The game logic lives in cli.play_session.
"""
from __future__ import annotations

from pathlib import Path

import click

from cli.play_common import (
    checked_device, config_file_option, data_dir_option, device_option, game_and_registry, game_config, game_option,
    model_option, user_errors,
)
from shared.players.analysis import DEFAULT_ANALYSIS_SIMULATIONS, PositionAnalysis

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "?")


def hint_text(analysis: PositionAnalysis) -> str:
    """'hint: c3 62%, d4 20% ...; value for you +0.15' (visit shares, value from the side to move's view)."""
    moves = ", ".join(f"{stat.move} {100 * stat.visits:.0f}%" for stat in analysis.top)
    return f"hint: {moves}; value for you {analysis.value:+.2f}"


def _example_move(game) -> str:
    """The first legal move of the start position, in the game's notation (to show the move format)."""
    legal = game.legal_mask(game.initial_states(1))[0]             # [A] bool
    return game.action_to_str(int(legal.argmax()))


def _read_move(colour: str) -> str | None:
    """One line from the user, stripped; None at the end of input."""
    try:
        return click.prompt(f"your move ({colour})", type=str, prompt_suffix=": ").strip()
    except click.exceptions.Abort:   # end of input (or Ctrl-C / Ctrl-D)
        return None


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
    colour = side_names(session.game, session.state)[1]
    while True:
        text = _read_move(colour)
        if text is None or text.lower() in QUIT_WORDS:
            return False
        if text.lower() in HELP_WORDS:
            click.echo(f"legal moves: {' '.join(session.legal_moves())}   (quit to leave)")
            continue
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
    """Play until the game ends (True) or the user quits (False), printing the board after every move."""
    click.echo(session.game.render(session.state))
    while not session.finished:
        if session.human_to_move:
            if not _human_turn(session, hint):
                return False
        else:
            _ai_turn(session, hint)
        click.echo("\n" + session.game.render(session.state))
    return True


@click.command("play")
@game_option
@model_option
@click.option("--sims", type=click.IntRange(1, 100_000), default=DEFAULT_ANALYSIS_SIMULATIONS, show_default=True,
              help="The AI's search simulations per move.")
@click.option("--first", type=click.Choice(["human", "ai"]), default="human", show_default=True,
              help="Who plays the first move.")
@click.option("--moves", "moves_text", default=None, metavar="MOVES",
              help="Start from the position after these moves (game notation) instead of the start position.")
@click.option("--hint", is_flag=True, help="Show the AI's top moves and value estimate as you play.")
@config_file_option
@data_dir_option
@device_option
def play(game_name: str, model_text: str | None, sims: int, first: str, moves_text: str | None, hint: bool,
         config_file: Path | None, data_dir: Path | None, device: str) -> None:
    """Play a game against the AI in the terminal (type moves in the game's notation; help, quit).

    --first human gives you the first player's side (X, black in Othello), --first ai the second one.
    """
    from shared.players.analysis import choose_model_path, load_network_evaluator
    from cli.play_session import PlaySession

    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        evaluate = load_network_evaluator(choose_model_path(game, model_text, registry_dir), game, device)
        search = game_config(game.name, config_file).match_search_config(sims)
        session = PlaySession(game, evaluate, search=search, human_first=first == "human")
        if moves_text:
            session.start_from(moves_text)
        side = "first" if first == "human" else "second"
        click.echo(f"{game.name}: you play {side}. Type a move like {_example_move(game)}; "
                   "'help' lists the legal moves, 'quit' leaves.")
        if not run_game(session, hint):
            click.echo("game left unfinished; bye")
            return
        click.echo(f"game over: {session.outcome_text()}")
