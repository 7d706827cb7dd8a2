"""The network's input planes: the game's own encoding, plus, for networks built with `line_planes`, two planes
of the immediate winning cells in in-a-row games.

Line planes (an input feature in the spirit of the hand-made liberty and ladder planes of AlphaGo and KataGo):
plane C is 1 on the empty cells where the side to move would complete n in a row, plane C + 1 on those where the
opponent would (shared.games.lines.completion_cells: the rules, exact, overlines included). With them the network
sees "win now" and "block now" directly instead of having to learn to count stones along four directions; they
are a function of the board alone, so the game's symmetries transform them like every other plane. Games with
lines are those with an `n_in_row` (tic-tac-toe, Gomoku, Connect Four; on Connect Four a winning cell is marked
even when it is not yet playable).
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_PLAYER, Game
from shared.games.lines import completion_cells
from shared.network.spec import NetworkError

#: Planes added by `line_planes`: the side to move's winning cells, then the opponent's.
LINE_PLANES = 2


def has_lines(game: Game) -> bool:
    """True when `game` is an in-a-row game whose winning cells the line planes can mark."""
    return isinstance(getattr(game, "n_in_row", None), int)


def check_line_planes(game: Game) -> None:
    """NetworkError naming the fix when `game` cannot have line planes (it has no n-in-a-row rule)."""
    if not has_lines(game):
        raise NetworkError(f"{game.name} has no lines to complete, so its network cannot have line planes; they are "
                           "for tic-tac-toe, Gomoku and Connect Four (set game.line_planes = false)")


def input_planes(game: Game, line_planes: bool) -> int:
    """Number of input planes C of a network for `game`: game.num_planes, + LINE_PLANES with line planes."""
    return game.num_planes + (LINE_PLANES if line_planes else 0)


def encode_inputs(game: Game, states: np.ndarray, line_planes: bool) -> np.ndarray:
    """Network inputs: states [B, S] int16 -> planes [B, C, H, W] float32 with C = input_planes(game, line_planes):
    game.encode(states), then (line_planes) the side to move's and the opponent's winning cells."""
    planes = game.encode(states)                                                  # [B, C0, H, W] float32
    if not line_planes:
        return planes
    check_line_planes(game)
    cells = np.ascontiguousarray(states[:, : game.num_cells], np.int16)          # [B, H*W] +1 first, -1 second
    first, second = completion_cells(cells, game.height, game.width, game.n_in_row)   # [B, H*W] bool each
    first_to_move = (states[:, game.num_cells + F_PLAYER] == 1)[:, None]         # [B, 1] bool
    own = np.where(first_to_move, first, second)
    other = np.where(first_to_move, second, first)
    lines = np.stack([own, other], axis=1).astype(np.float32)                    # [B, 2, H*W]
    shape = (states.shape[0], LINE_PLANES, game.height, game.width)
    return np.concatenate([planes, lines.reshape(shape)], axis=1)
