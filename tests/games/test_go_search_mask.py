"""Go's search mask: the search leaves out a pass while some empty point belongs to no one (the opening, open
dame), and keeps it after the opponent's pass, once the board is divided, and at the length cap."""
from __future__ import annotations

import numpy as np

from shared.games import make_game
from shared.games.base import F_PASSES, F_PLY
from shared.games.go.rules import Go
from tests.games.helpers import CONFORMANCE_GAMES, random_playout
from tests.games.test_go import play, setup

DIVIDED = """
. X O . .
X X O . .
. X O . .
X X O O O
. X O . .
"""
DAME = """
. X . O .
X X . O .
. X . O .
X X . O O
. X . O .
"""


def test_other_games_search_every_legal_move():
    for name in CONFORMANCE_GAMES:
        game = make_game(name)
        if game.params()["family"] == "go":
            continue
        for states in random_playout(game, batch=6, seed=3).states[::3]:
            assert np.array_equal(game.search_mask(states), game.legal_mask(states)), name


def test_no_pass_in_the_opening_while_dame_is_open_or_without_a_stone():
    game = Go(5)
    one_stone = play(game, game.initial_states(1), "B4")         # the whole board borders black only
    assert game.area_score(one_stone)[0] == 25 - 7.5
    for state in (game.initial_states(1), one_stone, play(game, game.initial_states(1), "C3 C2 B3"),
                  setup(game, DAME), setup(game, DAME, to_move=-1)):
        mask = game.search_mask(state)
        assert not mask[0, game.pass_action]
        assert np.array_equal(mask[0, :-1], game.legal_mask(state)[0, :-1]), "every placement stays"


def test_pass_is_searched_after_a_pass_on_a_divided_board_and_at_the_cap():
    game = Go(5)
    after_pass = play(game, game.initial_states(1), "C3 pass")
    assert after_pass[0, game.num_cells + F_PASSES] == 1 and game.search_mask(after_pass)[0, game.pass_action]
    for to_move in (1, -1):
        divided = setup(game, DIVIDED, to_move)
        assert np.array_equal(game.search_mask(divided), game.legal_mask(divided)), "every empty point is owned"
    last = game.initial_states(1)
    last[0, game.num_cells + F_PLY] = game.max_moves - 1      # the open board, one move before the cap
    assert game.legal_mask(last)[0].all() and game.search_mask(last)[0, game.pass_action]


def test_the_mask_is_a_nonempty_subset_of_the_legal_moves_in_random_games():
    for name in ("go-5x5", "go-9x9"):
        game = make_game(name)
        for states in random_playout(game, batch=12, seed=5).states:
            legal, searched = game.legal_mask(states), game.search_mask(states)
            live = ~game.is_terminal(states)
            assert not (searched & ~legal).any()
            assert searched[live].any(axis=1).all() and not searched[~live].any()


def test_a_network_player_does_not_pass_in_the_opening():
    from shared.players.player import MCTSPlayer
    from shared.search import SearchConfig
    from tests.search.helpers import UniformEvaluator

    game = make_game("go-9x9")
    player = MCTSPlayer(game, UniformEvaluator(game), SearchConfig(num_simulations=16))
    states = game.initial_states(4)
    for _ in range(10):
        actions = player.select_actions(states)
        assert (actions != game.pass_action).all()
        states = game.step(states, actions)
