"""The square-weights Othello player: its table, its choices on hand-made positions, its strength against random."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import GameError, make_game
from shared.players.spec import PlayerSpecError, build_player, check_fixed_player, parse_player_spec
from shared.players.arena import play_match
from shared.players.player import RandomPlayer
from shared.search import SearchConfig, opening_set
from shared.games.othello.weights import RESULT_SCORE, WeightsPlayer, square_weights
from shared.stats import evaluate_pairs


def test_square_weights_8x8_is_the_classic_table_and_symmetric() -> None:
    w = square_weights(8)
    assert w[0].tolist() == [100, -20, 10, 5, 5, 10, -20, 100]
    assert w[1].tolist() == [-20, -50, -2, -2, -2, -2, -50, -20]
    assert w[2].tolist() == [10, -2, -1, -1, -1, -1, -2, 10]
    assert w[3].tolist() == [5, -2, -1, -1, -1, -1, -2, 5]
    for k in range(4):
        assert np.array_equal(np.rot90(w, k), w)
    assert np.array_equal(w.T, w)
    assert square_weights(6)[0].tolist() == [100, -20, 10, 10, -20, 100]
    with pytest.raises(GameError):
        square_weights(3)


def _position(game, white: list[str], black: list[str]) -> np.ndarray:
    """Black to move on a board holding only the given discs: -> [S] int16."""
    state = game.play_moves([])[0].copy()
    state[:game.num_cells] = 0
    for square in white:
        state[game.parse_action(square)] = -1
    for square in black:
        state[game.parse_action(square)] = 1
    return state


@pytest.mark.parametrize("white, black, best, worse", [
    (["b2", "d4"], ["c3", "d5"], "a1", "d3"),   # the corner (a1 flips b2) beats an inner move
    (["c3", "d5"], ["d4", "d4"], "d6", "b2"),   # the X-square b2 (flips c3) is avoided
])
def test_prefers_corners_and_avoids_x_squares(white, black, best, worse) -> None:
    game = make_game("othello")
    state = _position(game, white, black)
    player = WeightsPlayer(game, np.random.default_rng(0))
    scores = player.move_scores(state[None])[0]
    b, w = game.parse_action(best), game.parse_action(worse)
    assert np.isfinite(scores[b]) and np.isfinite(scores[w])
    assert scores[b] == scores.max() and scores[b] > scores[w]
    assert player.select_actions(state[None])[0] == b


def test_a_winning_last_move_beats_any_board_score() -> None:
    game = make_game("othello-6x6")
    player = WeightsPlayer(game, np.random.default_rng(0))
    state = game.play_moves([])[0]
    scores = player.move_scores(state[None])
    assert np.isfinite(scores).sum() == 4 and np.abs(scores[np.isfinite(scores)]).max() < RESULT_SCORE


def test_beats_random_clearly() -> None:
    game = make_game("othello-6x6")
    weights = WeightsPlayer(game, np.random.default_rng(1))
    result = play_match(game, weights, RandomPlayer(game, np.random.default_rng(2)),
                        opening_set(game, 10, 3))
    stats = evaluate_pairs(result.game_scores)
    assert stats.score >= 0.75, stats


def test_spec_weights_builds_for_othello_only() -> None:
    assert parse_player_spec("weights").kind == "weights"
    player = build_player("weights", make_game("othello"), search=SearchConfig())
    assert isinstance(player, WeightsPlayer)
    check_fixed_player("weights", make_game("othello-6x6"))
    with pytest.raises(PlayerSpecError, match="Othello"):
        check_fixed_player("weights", make_game("connect4"))
    with pytest.raises(GameError, match="Othello"):
        WeightsPlayer(make_game("gomoku-15"), np.random.default_rng(0))
