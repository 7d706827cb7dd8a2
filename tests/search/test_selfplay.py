"""play_selfplay_games: records, targets and signs, on tic-tac-toe with a deterministic evaluator."""
from __future__ import annotations

import numpy as np
import pytest

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


#: Self-play games of the search BEFORE it was compiled and given a solver (commit 43d4b05), with the same seeds:
#: (game, games, simulations, leaves per step, action sequences). With the solver off the rewrite plays them
#: move for move (tree reuse, leaves_per_step > 1, Othello passes included).
GAMES_OF_THE_NUMPY_SEARCH = [
    ('tictactoe', 3, 24, 1, [[3, 5, 7, 0, 8, 6, 2, 4, 1], [2, 6, 3, 8, 7, 4, 0, 1, 5], [1, 5, 3, 6, 7, 4, 2, 0, 8]]),
    ('connect4', 2, 24, 2, [[1, 4, 0, 4, 0, 2, 2, 2, 0, 2, 0], [5, 1, 4, 0, 4, 1, 5, 1, 0, 1]]),
    ('gomoku-6x6-4', 2, 16, 1, [[1, 20, 2, 24, 25, 27, 14, 35, 10, 15, 32, 0, 19, 8, 7, 4, 30, 13, 9, 17, 34, 6], [1, 7, 31, 23, 27, 26, 25, 15, 24, 17, 6, 3, 0, 14, 10, 30, 20, 4, 9, 16]]),
    ('othello-6x6', 1, 12, 3, [[22, 28, 13, 7, 34, 9, 10, 19, 3, 5, 24, 23, 16, 8, 17, 11, 12, 27, 4, 33, 25, 31, 35, 29, 6, 26, 18, 2, 30, 0, 1, 36, 32]]),
]


@pytest.mark.parametrize("game_name, games, sims, leaves_per_step, expected", GAMES_OF_THE_NUMPY_SEARCH)
def test_selfplay_without_the_solver_replays_the_former_search(game_name, games, sims, leaves_per_step,
                                                               expected) -> None:
    game = make_game(game_name)
    config = SelfPlayConfig(search=SearchConfig(num_simulations=sims, leaves_per_step=leaves_per_step,
                                                solver=False), temperature_moves=4)
    rec = play_selfplay_games(game, HashEvaluator(game, seed=2), games, config, np.random.default_rng(11))
    assert [rec.action[rec.game_id == g].astype(int).tolist() for g in range(games)] == expected


# ----- overlap: two game groups alternate between search and network -------------------------------------------
def _play_many(overlap: bool, num_games: int, seed: int):
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=16), temperature_moves=9, overlap=overlap)
    return play_selfplay_games(game, HashEvaluator(game), num_games, config, np.random.default_rng(seed))


def test_overlap_off_is_the_default_and_replays_exactly() -> None:
    assert SelfPlayConfig(search=SearchConfig()).overlap is False
    a, b = _play_many(False, 8, 3), _play_many(False, 8, 3)
    np.testing.assert_array_equal(a.action, b.action)
    np.testing.assert_array_equal(a.pi, b.pi)


def test_overlap_records_are_complete_and_reproducible() -> None:
    rec = _play_many(True, 9, 4)
    assert sorted(set(rec.game_id.tolist())) == list(range(9))
    assert rec.states.shape[0] == int(rec.game_lengths.sum())
    for g in range(9):
        rows = np.flatnonzero(rec.game_id == g)
        assert rec.move_number[rows].tolist() == list(range(rec.game_lengths[g]))
    again = _play_many(True, 9, 4)  # each group has its own random stream: same seed, same games
    np.testing.assert_array_equal(rec.action, again.action)


def test_overlap_plays_the_same_games_in_distribution() -> None:
    """First moves, results and game lengths over 400 games each: overlap on vs off (same distribution)."""
    game = make_game("tictactoe")
    stats = {}
    for overlap in (False, True):
        recs = [_play_many(overlap, 200, seed) for seed in (11, 12)]
        first = np.concatenate([r.action[r.move_number == 0] for r in recs])
        results = np.concatenate([r.results for r in recs])
        lengths = np.concatenate([r.game_lengths for r in recs])
        stats[overlap] = (np.bincount(first, minlength=game.num_actions) / first.size,
                          np.array([(results == v).mean() for v in (1, 0, -1)]), lengths.mean())
    # sampling error of a frequency over 400 games is <= 0.025 (1 sigma); allow about 4 sigma
    assert np.abs(stats[False][0] - stats[True][0]).max() < 0.1
    assert np.abs(stats[False][1] - stats[True][1]).max() < 0.1
    assert abs(stats[False][2] - stats[True][2]) < 0.5


def test_overlap_never_calls_the_evaluator_concurrently_and_cleans_up() -> None:
    import threading
    import time

    game = make_game("tictactoe")
    inner = HashEvaluator(game)
    busy, seen = [0], {"max": 0, "threads": set()}
    guard = threading.Lock()

    def evaluate(states):
        with guard:
            busy[0] += 1
            seen["max"] = max(seen["max"], busy[0])
            seen["threads"].add(threading.get_ident())
        time.sleep(0.001)
        out = inner(states)
        with guard:
            busy[0] -= 1
        return out

    before = threading.active_count()
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8), overlap=True)
    play_selfplay_games(game, evaluate, 6, config, np.random.default_rng(0))
    assert seen["max"] == 1 and len(seen["threads"]) == 2
    assert threading.active_count() == before


@pytest.mark.parametrize("failing_group", [0, 1])
def test_overlap_failure_in_either_group_is_raised_and_threads_stop(failing_group) -> None:
    import threading

    game = make_game("tictactoe")
    inner = HashEvaluator(game)
    main = threading.get_ident()
    calls = [0]

    def evaluate(states):
        calls[0] += 1
        in_main = threading.get_ident() == main
        if calls[0] > 6 and in_main == (failing_group == 0):
            raise RuntimeError("evaluator broke")
        return inner(states)

    before = threading.active_count()
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8), overlap=True)
    with pytest.raises(RuntimeError, match="evaluator broke"):
        play_selfplay_games(game, evaluate, 6, config, np.random.default_rng(0))
    assert threading.active_count() == before
