"""Invariants of the `Game` contract (shared/games/base.py), checked on random batched playouts of every game."""
from __future__ import annotations

import json

import numpy as np
import pytest

from shared.games import make_game, make_game_from_params
from shared.games.base import F_DONE, F_LAST, F_PASSES, F_PLAYER, F_PLY, F_WINNER, NO_ACTION
from tests.games.helpers import CONFORMANCE_GAMES, expand, random_playout, sample_rows

EXPECTED_SYMMETRIES = {"tictactoe": 8, "connect4": 2, "gomoku-6x6-4": 8, "gomoku-15": 8, "gomoku-7x9-4": 4,
                       "othello": 8, "othello-6x6": 8, "go-9x9": 8, "go-5x5": 8}


def extra_state_size(game) -> int:
    """The documented data a game keeps after the common fields (0 for all but Go; see shared/games/go.py)."""
    if game.params()["family"] == "go":
        cells = game.num_cells
        return 7 * cells + 5 * (2 * cells + 1)  # 7 history boards, a 5-word superko key per position
    return 0


@pytest.fixture(scope="module", params=CONFORMANCE_GAMES)
def game_and_playout(request):
    game = make_game(request.param)
    batch = 8 if game.num_cells > 100 else 24
    return game, random_playout(game, batch=batch, seed=7)


def field(game, states, f):
    return states[:, game.num_cells + f]


def test_description(game_and_playout):
    game, _ = game_and_playout
    params = game.params()
    assert json.loads(json.dumps(params)) == params
    assert {"name", "family", "height", "width"} <= set(params)
    assert make_game_from_params(params) == game
    assert make_game(game.name) == game
    assert game.num_symmetries == EXPECTED_SYMMETRIES[game.name]
    assert game.state_size == game.height * game.width + 6 + extra_state_size(game)


def test_start_states(game_and_playout):
    game, _ = game_and_playout
    states = game.initial_states(3)
    assert states.shape == (3, game.state_size) and states.dtype == np.int16
    assert (field(game, states, F_PLAYER) == 1).all() and (field(game, states, F_LAST) == NO_ACTION).all()
    assert (field(game, states, F_PLY) == 0).all() and not game.is_terminal(states).any()
    assert game.legal_mask(states).any(axis=1).all()


def test_every_ply_keeps_the_invariants(game_and_playout):
    game, playout = game_and_playout
    for states, actions in zip(playout.states, playout.actions):
        mask = game.legal_mask(states)
        done = game.is_terminal(states)
        assert mask.shape == (len(states), game.num_actions) and mask.dtype == bool
        assert mask[~done].any(axis=1).all(), "a live position must have a legal action"
        assert not mask[done].any(), "a finished position must have no legal action"
        before = states.copy()
        after = game.step(states, np.maximum(actions, 0))
        assert np.array_equal(states, before), "step must not modify its input"
        assert after.dtype == np.int16 and after.shape == states.shape
        assert np.array_equal(after[done], states[done]), "finished games pass through step unchanged"
        live = ~done
        assert (field(game, after, F_PLY)[live] == field(game, states, F_PLY)[live] + 1).all()
        assert (field(game, after, F_LAST)[live] == actions[live]).all()
        assert (field(game, after, F_PLAYER)[live] == -field(game, states, F_PLAYER)[live]).all()


def test_results_and_terminal_values(game_and_playout):
    game, playout = game_and_playout
    final = playout.final
    assert game.is_terminal(final).all()
    winner = field(game, final, F_WINNER)
    value = game.terminal_value(final)
    assert value.dtype == np.float32
    assert np.array_equal(value, winner * field(game, final, F_PLAYER))  # value is from the side to move
    if game.params()["family"] == "othello":
        disc_balance = np.sign(final[:, : game.num_cells].sum(axis=1))
        assert np.array_equal(winner, disc_balance)
        assert (field(game, final, F_PASSES) <= 1).all()
    elif game.params()["family"] == "go":
        assert np.array_equal(winner, np.sign(game.area_score(final)))
        ended_by_passes = field(game, final, F_PASSES) == 2
        assert (ended_by_passes | (field(game, final, F_PLY) == 2 * game.num_cells)).all()
    else:
        last_mover = -field(game, final, F_PLAYER)
        assert ((winner == 0) | (winner == last_mover)).all(), "only the player who just moved can win"
        assert (value <= 0).all()
        draws = winner == 0
        assert (field(game, final, F_PLY)[draws] == game.num_cells).all(), "draws only on a full board"
    assert (game.terminal_value(playout.states[0]) == 0).all()


def test_encoding_planes(game_and_playout):
    game, playout = game_and_playout
    states = sample_rows(playout.all_positions(), 400, seed=1)
    planes = game.encode(states)
    n = game.num_cells
    assert planes.shape == (len(states), game.num_planes, game.height, game.width) and planes.dtype == np.float32
    assert np.array_equal(game.encode(states[::2]), planes[::2])          # a strided batch encodes the same
    flat = planes.reshape(len(states), game.num_planes, n)
    player = field(game, states, F_PLAYER)[:, None]
    assert np.array_equal(flat[:, 0], (states[:, :n] == player).astype(np.float32))
    assert np.array_equal(flat[:, 1], (states[:, :n] == -player).astype(np.float32))
    if game.params()["family"] == "go":   # 17 planes: own/opponent stones now and 7 moves back, side to move
        history = states[:, n + 6: n + 6 + 7 * n].reshape(len(states), 7, n)
        for back in range(1, 8):
            assert np.array_equal(flat[:, 2 * back], (history[:, back - 1] == player).astype(np.float32))
            assert np.array_equal(flat[:, 2 * back + 1], (history[:, back - 1] == -player).astype(np.float32))
        assert np.array_equal(flat[:, 16], np.broadcast_to(player == 1, flat[:, 16].shape).astype(np.float32))
        return
    last = field(game, states, F_LAST)
    placed = (last >= 0) & (last < n)  # a stone went down (Othello's pass is action n; Connect Four's are columns)
    assert np.array_equal(flat[:, 2].sum(axis=1), placed.astype(np.float32))
    marked = flat[:, 2].argmax(axis=1)
    assert (flat[placed, 1, marked[placed]] == 1).all(), "the last stone belongs to the player who just moved"
    assert np.array_equal(flat[:, 3], np.broadcast_to(player == 1, flat[:, 3].shape).astype(np.float32))
    if game.num_planes == 5:
        assert np.array_equal(flat[:, 4], game.legal_mask(states)[:, :n].astype(np.float32))


def test_symmetries_commute_with_the_rules(game_and_playout):
    game, playout = game_and_playout
    positions = sample_rows(playout.all_positions(), 60, seed=2)
    parents, actions = np.nonzero(game.legal_mask(positions))
    children = game.step(positions[parents], actions)
    for k in range(game.num_symmetries):
        action_map = game.symmetry_action_map(k)
        assert sorted(action_map.tolist()) == list(range(game.num_actions))
        moved = game.transform_states(positions, k)
        assert np.array_equal(game.legal_mask(moved), game.transform_policy(game.legal_mask(positions), k))
        assert np.array_equal(game.transform_planes(game.encode(positions), k), game.encode(moved))
        # playing the mapped action in the moved position = moving the played position (wins, flips, fields)
        assert np.array_equal(game.step(moved[parents], action_map[actions]), game.transform_states(children, k))
    assert np.array_equal(game.symmetry_action_map(0), np.arange(game.num_actions))
    assert np.array_equal(game.transform_states(positions, 0), positions)


def test_transform_policy_moves_probability_with_actions(game_and_playout):
    game, _ = game_and_playout
    policy = np.random.default_rng(3).random((2, game.num_actions)).astype(np.float32)
    for k in range(game.num_symmetries):
        out = game.transform_policy(policy, k)
        assert np.array_equal(out[:, game.symmetry_action_map(k)], policy)


def test_notation_round_trips(game_and_playout):
    game, playout = game_and_playout
    for action in range(game.num_actions):
        assert game.parse_action(game.action_to_str(action)) == action
    for moves, final in list(zip(playout.move_lists(), playout.final))[:4]:
        text = game.moves_to_str(moves)
        assert game.parse_moves(text) == moves
        assert np.array_equal(game.play_moves(moves)[0], final)


def test_render_marks_coordinates_and_last_move(game_and_playout):
    game, playout = game_and_playout
    text = game.render(playout.states[min(3, len(playout.states) - 1)][0])
    assert "[" in text and "]" in text
    assert text.isascii()
    assert "[" not in game.render(game.initial_states(1)[0])


def test_children_of_live_positions_are_consistent(game_and_playout):
    game, playout = game_and_playout
    positions = sample_rows(np.concatenate(playout.states), 50, seed=4)
    children = expand(game, positions)
    assert len(children) == game.legal_mask(positions).sum()
    done = game.is_terminal(children)
    assert (field(game, children, F_DONE)[~done] == 0).all()
    assert (field(game, children, F_WINNER)[~done] == 0).all()
