"""Positions from move text, with errors in the game's own notation.

    state = position_from_moves(game, "4453")          # [S] int16, GameError if unreadable, illegal or over
    reason = illegal_move_reason(game, state, action, moves_played=5)   # "c3 is occupied after move 5"
    action = parse_one_move(game, "44")                 # GameError: "'44' is 2 moves; type one move ..."

Move numbers are 1-based and count every move played from the start position (passes included), the same
numbering as `zeroforge shards show` and `play`'s game record.
"""
from __future__ import annotations

import numpy as np

from shared.games import family_of
from shared.games.base import F_PLAYER, F_WINNER, Game, GameError


def side_names(game: Game, state: np.ndarray) -> tuple[str, str]:
    """("first"|"second", colour) of the side to move in state [S]; colours as the game family names its sides
    (X/O, black/white in Othello)."""
    first = int(state[game.num_cells + F_PLAYER]) == 1
    names = family_of(game).side_names
    return ("first" if first else "second"), names[0] if first else names[1]


def winner_text(game: Game, state: np.ndarray) -> str:
    """'X won', 'O won' ('black won' ... in Othello) or 'it was drawn' for a finished state [S]."""
    winner = int(state[game.num_cells + F_WINNER])
    if winner == 0:
        return "it was drawn"
    names = family_of(game).side_names
    return f"{names[0] if winner == 1 else names[1]} won"


def _after(moves_played: int) -> str:
    return f"after move {moves_played}" if moves_played else "in the start position"


def illegal_move_reason(game: Game, state: np.ndarray, action: int, moves_played: int) -> str:
    """Why `action` cannot be played in the unfinished state [S] int16, in the game's notation.

    E.g. "c3 is occupied after move 5", "column 4 is full after move 9", "f5 is not a legal move for black
    after move 3". `moves_played` is the number of moves that led to `state`.
    """
    move = game.action_to_str(action)
    after = _after(moves_played)
    if family_of(game).column_moves:                      # an action is a column; it is illegal when full
        return f"column {move} is full {after}"
    if action < game.num_cells and int(state[action]) != 0:
        return f"{move} is occupied {after}"
    colour = side_names(game, state)[1]
    if action >= game.num_cells:
        return f"{move} is not allowed for {colour} {after}: passing is only legal when no other move is"
    return f"{move} is not a legal move for {colour} {after}"


def play_actions(game: Game, actions: list[int]) -> np.ndarray:
    """Play `actions` from the start, checking each one -> state [S] int16.

    GameError in the game's notation: "move 6: c3 is occupied after move 5", "move 8 (4) comes after the end
    of the game (X won with move 7)".
    """
    state = game.initial_states(1)                                      # [1, S] int16
    for played, action in enumerate(actions):
        if game.is_terminal(state)[0]:
            text = game.action_to_str(action) if 0 <= action < game.num_actions else str(action)
            raise GameError(f"move {played + 1} ({text}) comes after the end of the game "
                            f"({winner_text(game, state[0])} with move {played})")
        if not (0 <= action < game.num_actions and game.legal_mask(state)[0, action]):
            raise GameError(f"move {played + 1}: {illegal_move_reason(game, state[0], action, played)}")
        state = game.step(state, np.array([action], np.int64))
    return state[0]


def position_from_moves(game: Game, moves_text: str) -> np.ndarray:
    """The position after `moves_text` (game notation, from the start) -> state [S] int16.

    GameError (in the game's notation) when a move is unreadable or illegal, or when the game is already
    over after the moves.
    """
    state = play_actions(game, game.parse_moves(moves_text))
    if game.is_terminal(state[None])[0]:
        raise GameError(f"the game is already over after {moves_text!r} ({winner_text(game, state)}); "
                        "there is nothing to analyse")
    return state


def move_form(game: Game) -> str:
    """How one move is written, e.g. "a column digit 1-7 from the left, e.g. 4"."""
    form = family_of(game).move_form
    if form is not None:
        return form(game)
    example = game.action_to_str(int(game.legal_mask(game.initial_states(1))[0].argmax()))
    return f"one move such as {example}"


def parse_one_move(game: Game, text: str) -> int:
    """One move typed by a person -> action index; GameError showing the right form otherwise.

    Several moves at once ("44" in Connect Four, "h8 i9" in Gomoku) are refused with a message that says
    how many moves were typed and what one move looks like.
    """
    text = text.strip()
    try:
        return game.parse_action(text)
    except GameError as exc:
        single_error = exc
    try:
        actions = game.parse_moves(text)
    except GameError:
        actions = []
    if len(actions) > 1:
        raise GameError(f"{text!r} is {len(actions)} moves ({' '.join(game.action_to_str(a) for a in actions)}); type one move at a "
                        f"time: {move_form(game)}")
    if len(actions) == 1:
        return actions[0]
    reason = str(single_error).split(":")[0]
    raise GameError(f"{reason}; type one move: {move_form(game)}")
