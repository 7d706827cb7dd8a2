"""Hand-checked rules: Connect Four gravity, tic-tac-toe wins, Othello passes and game end, batch behaviour."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_DONE, F_LAST, F_PASSES, F_PLAYER, F_PLY, F_WINNER, GameError


def fields(game, state):
    state = np.asarray(state).reshape(-1)
    base = game.num_cells
    return {name: int(state[base + f]) for name, f in
            (("player", F_PLAYER), ("last", F_LAST), ("ply", F_PLY), ("done", F_DONE), ("winner", F_WINNER),
             ("passes", F_PASSES))}


def test_connect4_discs_fall_to_the_bottom_and_full_columns_close():
    game = make_game("connect4")
    state = game.play_moves(game.parse_moves("4 4 4"))[0]
    board = state[:42].reshape(6, 7)
    assert board[5, 3] == 1 and board[4, 3] == -1 and board[3, 3] == 1 and (board[:3] == 0).all()
    full = game.play_moves(game.parse_moves("444444"))
    assert not game.legal_mask(full)[0, 3] and game.legal_mask(full)[0].sum() == 6
    with pytest.raises(GameError, match="not legal"):
        game.play_moves(game.parse_moves("4444444"))


def test_connect4_wins_in_each_direction():
    game = make_game("connect4")
    for moves, winner in (("1122334", 1), ("112233", None), ("1213141", 1), ("71726354", -1),
                          ("1223433446", None), ("12234334464", 1), ("76654554424", 1), ("712234334464", -1)):
        state = game.play_moves(game.parse_moves(moves))[0]
        info = fields(game, state)
        if winner is None:
            assert info["done"] == 0, moves
        else:
            assert (info["done"], info["winner"]) == (1, winner), moves
            assert game.terminal_value(state[None])[0] == -1  # the side to move has lost


def test_tictactoe_win_draw_and_after_the_end():
    game = make_game("tictactoe")
    won = game.play_moves(game.parse_moves("1 4 2 5 3"))[0]
    assert (fields(game, won)["done"], fields(game, won)["winner"]) == (1, 1)
    drawn = game.play_moves(game.parse_moves("513746289"))[0]
    assert (fields(game, drawn)["done"], fields(game, drawn)["winner"], fields(game, drawn)["ply"]) == (1, 0, 9)
    with pytest.raises(GameError, match="after the game ended"):
        game.play_moves(game.parse_moves("1425367"))


def othello_position(game, black, white, to_move):
    """A custom Othello state: black/white lists of square names, to_move +1 (black) or -1 (white)."""
    state = game.initial_states(1)
    state[0, : game.num_cells] = 0
    for names, colour in ((black, 1), (white, -1)):
        for name in names:
            state[0, game.parse_action(name)] = colour
    state[0, game.num_cells + F_PLAYER] = to_move
    state[0, game.num_cells + F_PLY] = 10
    return state


def test_othello_forced_pass_is_the_only_move_and_the_game_ends_when_nobody_can_move():
    game = make_game("othello")
    state = othello_position(game, black=["a1"], white=["b1"], to_move=-1)   # white is stuck, black can play c1
    mask = game.legal_mask(state)[0]
    assert np.flatnonzero(mask).tolist() == [game.pass_action]
    passed = game.step(state, np.array([game.pass_action]))
    assert fields(game, passed) == {"player": 1, "last": 64, "ply": 11, "done": 0, "winner": 0, "passes": 1}
    assert np.flatnonzero(game.legal_mask(passed)[0]).tolist() == [game.parse_action("c1")]
    assert game.encode(passed)[0, 2].sum() == 0, "a pass leaves the last-move plane empty"
    final = game.step(passed, np.array([game.parse_action("c1")]))   # white is wiped out: nobody can move
    assert fields(game, final) == {"player": -1, "last": 2, "ply": 12, "done": 1, "winner": 1, "passes": 0}
    assert not game.legal_mask(final).any() and game.terminal_value(final)[0] == -1


def test_othello_move_flips_in_several_directions_and_stops_at_own_disc():
    game = make_game("othello")
    state = othello_position(game, black=["a1", "e1", "a5", "h8"], white=["b1", "c1", "d1", "b2", "c3", "a2", "a3", "a4", "g7"],
                             to_move=1)
    after = game.step(state, np.array([game.parse_action("d4")]))   # d4: only the diagonal c3-b2 up to a1 flips
    flipped = {game.action_to_str(c) for c in np.flatnonzero(after[0, :64] != state[0, :64])}
    assert flipped == {"d4", "c3", "b2"}
    assert not game.legal_mask(state)[0, game.parse_action("a6")], "a6 touches a5 (own disc): nothing to flip"
    after = game.step(state, np.array([game.parse_action("f6")]))   # f6: g7 is outflanked by h8
    flipped = {game.action_to_str(c) for c in np.flatnonzero(after[0, :64] != state[0, :64])}
    assert flipped == {"f6", "g7"}
    assert (after[0, :64][[game.parse_action(x) for x in ("b1", "c1", "d1")]] == -1).all()


def test_othello_6x6_start_and_first_moves():
    game = make_game("othello-6x6")
    start = game.initial_states(1)[0, :36].reshape(6, 6)
    assert start[2, 2] == start[3, 3] == -1 and start[3, 2] == start[2, 3] == 1 and np.count_nonzero(start) == 4
    legal = sorted(game.action_to_str(a) for a in np.flatnonzero(game.legal_mask(game.initial_states(1))[0]))
    assert legal == ["b3", "c2", "d5", "e4"]


def test_step_checks_batch_shapes():
    game = make_game("connect4")
    with pytest.raises(GameError, match="2 actions for 1 states"):
        game.step(game.initial_states(1), np.array([0, 1]))
    with pytest.raises(GameError, match="shape"):
        game.legal_mask(np.zeros((2, 5), dtype=np.int16))
