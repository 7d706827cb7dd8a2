"""A toy game family, written as a game package outside zeroforge's tree would be: the rules (three in a row on a
small board) and one `GameFamily` descriptor named FAMILY. tests/games/test_new_game.py registers it in-process;
tests/e2e/test_new_game_run.py trains it with `zeroforge run` through ZEROFORGE_GAMES=tests.games.toyline
(docs/adding-a-game.md walks through it)."""
from __future__ import annotations

import re

import numpy as np

from shared.games import GameError, GameFamily
from shared.games.base import F_LAST, F_PLAYER, F_WINNER
from shared.games.family import BaselinePlayer
from shared.games.inarow import InARowGame
from shared.games.notation import parse_square, render_grid, split_tokens, square_name

__all__ = ["FAMILY", "CornerPlayer", "ToyLine"]

_NAME = re.compile(r"toyline-([0-9]{1,2})")


class ToyLine(InARowGame):
    """Three in a row on an N x N board (N = 3..5); squares written like Gomoku's ("b2", rows from the bottom)."""

    family = "toyline"

    def __init__(self, size: int = 4) -> None:
        if not 3 <= size <= 5:
            raise GameError(f"toyline size {size} is out of range 3..5")
        super().__init__(f"toyline-{size}", size, size, 3)

    def action_to_str(self, action: int) -> str:
        return square_name(int(action) // self.width, int(action) % self.width, self.height, True)

    def parse_action(self, text: str) -> int:
        return parse_square(str(text).strip(), self.height, self.width, True)

    def parse_moves(self, text: str) -> list[int]:
        return [self.parse_action(token) for token in split_tokens(text)]

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        state = self._single_state(state)
        last = int(state[self.num_cells + F_LAST]) if highlight_last else -1
        cols = [chr(ord("a") + c) for c in range(self.width)]
        rows = [str(self.height - r) for r in range(self.height)]
        return "\n".join(render_grid(state[: self.num_cells].reshape(self.height, self.width), last, cols, rows) + [self._status_line(state)])


def _parse(key: str) -> ToyLine | None:
    match = _NAME.fullmatch(key)
    return None if match is None else ToyLine(int(match.group(1)))


class CornerPlayer:
    """A baseline only toyline games seat: the lowest legal square."""

    def __init__(self, game, name: str = "corner") -> None:
        self.game, self.name = game, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        return self.game.legal_mask(states).argmax(axis=1).astype(np.int64)

    def reset(self) -> None:
        """Nothing to forget."""


def _winning_moves(game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """The search's moves [B] int64, each replaced by the lowest square that wins at once when there is one
    (states [B, S] int16)."""
    chosen = np.array(actions, np.int64)
    for row, state in enumerate(states):
        legal = np.flatnonzero(game.legal_mask(state[None])[0])
        after = game.step(np.repeat(state[None], legal.size, axis=0), legal)            # [L, S] int16
        mover = int(state[game.num_cells + F_PLAYER])
        wins = legal[after[:, game.num_cells + F_WINNER] == mover]
        if wins.size:
            chosen[row] = wins[0]
    return chosen


def _root_solver(game, simulations):
    """Win-in-one at the root of every search of at least 8 simulations."""
    if simulations is None or simulations < 8:
        return None
    return lambda states, actions, visits: _winning_moves(game, states, actions, visits)


#: The pipeline settings of every toyline game: a generation in well under a minute on 2 cores.
_PRESET = {
    "search": {"simulations": 16},
    "selfplay": {"games_per_job": 16, "jobs_per_generation": 2},
    "train": {"batch_size": 32, "steps_per_generation": 60},
    "gate": {"games": 40, "jobs": 2, "anchor_games": 10},
}

FAMILY = GameFamily(
    name="toyline",
    parse=_parse,
    name_from_params=lambda params: f"toyline-{int(params['height'])}",
    presets=("toyline-4",),
    name_forms=("toyline-{N}",),
    names_help="'toyline-{N}' with N in 3..5",
    network_size=lambda name: (1, 8) if _NAME.fullmatch(name) else None,
    config_defaults=lambda name: (_PRESET if _NAME.fullmatch(name) else None),
    default_anchor="corner",
    root_solver=_root_solver,
    opening_plan=lambda game: ((1,), np.ones(game.num_actions, bool)),
    baseline_players={"corner": BaselinePlayer(lambda game, value, seed: CornerPlayer(game), only="toyline")},
    move_form=lambda game: "a square like b2",
)
