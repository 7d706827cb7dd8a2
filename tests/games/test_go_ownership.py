"""Go's ownership (the area-scoring owner of each point), the target of a network's ownership head: hand-made
boards with known owners, the agreement with the area score, and the games without territory."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import GameError


def _states_with_rows(game, rows: list[str]) -> np.ndarray:
    """One state whose board is `rows` (top row first; 'B' black, 'W' white, '.' empty)."""
    state = game.initial_states(1)
    state[0, : game.num_cells] = [{"B": 1, "W": -1, ".": 0}[c] for c in "".join(rows)]
    return state


def _owners(game, rows: list[str]) -> list[str]:
    values = game.ownership(_states_with_rows(game, rows))[0].reshape(game.height, game.width)
    return ["".join({1: "b", -1: "w", 0: "."}[int(v)] for v in row) for row in values]


def test_an_empty_board_belongs_to_no_one() -> None:
    game = make_game("go-5x5")
    owners = game.ownership(game.initial_states(2))
    assert owners.shape == (2, 25) and owners.dtype == np.int8 and not owners.any()


def test_a_lone_stone_owns_the_whole_board() -> None:
    assert _owners(make_game("go-5x5"), [".....", ".....", "..B..", ".....", "....."]) == ["bbbbb"] * 5


def test_walls_split_the_board_and_the_region_between_them_is_dame() -> None:
    game = make_game("go-5x5")
    rows = [".B.W."] * 5
    assert _owners(game, rows) == ["bb.ww"] * 5
    assert game.area_score(_states_with_rows(game, rows))[0] == 10 - 10 - game.komi


def test_eyes_belong_to_their_owner_and_a_region_touching_both_colours_to_no_one() -> None:
    game = make_game("go-5x5")
    rows = ["B.BW.",
            "BBBWW",
            "WWW..",
            ".W...",
            "W.W.."]
    assert _owners(game, rows) == ["bbbww",
                                   "bbbww",
                                   "wwwww",
                                   "wwwww",
                                   "wwwww"]
    rows = ["BW.WB",
            "BW.WB",
            "BWWWB",
            "BBBBB",
            "....."]
    assert _owners(game, rows)[:2] == ["bwwwb", "bwwwb"]     # the gap touches only white
    rows = ["B.W..",
            "B.W..",
            "B.W..",
            "B.W..",
            "B.W.."]
    assert _owners(game, rows) == ["b.www"] * 5              # column 1 touches both: dame


@pytest.mark.parametrize("name", ["tictactoe", "connect4", "gomoku-8x8-5", "othello-6x6"])
def test_games_without_territory_say_so(name: str) -> None:
    game = make_game(name)
    assert game.has_ownership is False
    with pytest.raises(GameError, match="no territory"):
        game.ownership(game.initial_states(1))


def test_ownership_refuses_a_wrong_shape() -> None:
    game = make_game("go-5x5")
    with pytest.raises(GameError, match="ownership takes states"):
        game.ownership(np.zeros((2, 3), np.int16))
