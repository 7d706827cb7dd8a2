"""play_selfplay_games: records, targets and signs, on tic-tac-toe with a deterministic evaluator."""
from __future__ import annotations

import numpy as np

from shared.games import make_game
from shared.games.base import F_PLAYER, F_WINNER
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
from tests.search.helpers import HashEvaluator


def _play(num_games=6, solver=True, **kwargs):
    game = make_game("tictactoe")
    calls = []
    config = SelfPlayConfig(search=SearchConfig(num_simulations=24, leaves_per_step=2, solver=solver), **kwargs)
    records = play_selfplay_games(game, HashEvaluator(game), num_games, config, np.random.default_rng(5),
                                  progress=lambda done, total: calls.append((done, total)))
    return game, records, calls


def test_records_replay_to_the_recorded_results() -> None:
    game, rec, calls = _play()
    assert rec.states.shape[0] == rec.pi.shape[0] == rec.z.shape[0] == int(rec.game_lengths.sum())
    np.testing.assert_allclose(rec.pi.sum(axis=1), 1.0, rtol=1e-6)
    assert (rec.visit_count >= 24).all()
    for g in range(6):
        rows = np.flatnonzero(rec.game_id == g)
        assert rec.move_number[rows].tolist() == list(range(rec.game_lengths[g]))
        final = game.play_moves(rec.action[rows].astype(int).tolist())
        assert game.is_terminal(final)[0]
        assert rec.results[g] == final[0, game.num_cells + F_WINNER]
        np.testing.assert_array_equal(rec.states[rows[0]], game.initial_states(1)[0])
        # z: the game's winner from the side to move at each position
        to_move = rec.states[rows, game.num_cells + F_PLAYER]
        np.testing.assert_array_equal(rec.z[rows], rec.results[g] * to_move)
        assert (rec.pi[rows, rec.action[rows]] > 0).all()
    assert calls[-1] == (6, 6) and [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_temperature_zero_plays_the_most_visited_move() -> None:
    """Without the solver; with it a proven win may be played before it is the most visited move."""
    _, rec, _ = _play(num_games=4, solver=False, temperature_moves=0, temperature_final=0.0)
    chosen = rec.pi[np.arange(len(rec.action)), rec.action]
    np.testing.assert_array_equal(chosen, rec.pi.max(axis=1))


def test_selfplay_with_the_solver_never_misses_a_win_in_one() -> None:
    game, rec, _ = _play(num_games=8, temperature_moves=9)              # temperature 1 all game long
    for row in range(len(rec.action)):
        state = rec.states[row: row + 1]
        wins = game.winning_moves(state)[0]
        if wins.any():
            assert wins[rec.action[row]], (row, game.render(state[0]))


def test_move_cap_ends_games_as_draws() -> None:
    _, rec, _ = _play(num_games=3, max_moves=2)
    assert rec.game_lengths.tolist() == [2, 2, 2] and rec.results.tolist() == [0, 0, 0]
    assert (rec.z == 0).all()
