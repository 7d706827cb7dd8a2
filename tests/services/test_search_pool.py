"""services.search_pool: N search processes sharing one network, kept from one self-play job to the next; the
games are exactly those of separate evaluators, and a failed job leaves no process behind."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest

from services.search_pool import (SearchProcessPool, close_worker_pool, merge_records, play_selfplay_shared,
                                  split_games, worker_pool)
from shared.games import make_game
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
from shared.search.errors import EvaluatorError
from tests.search.helpers import HashEvaluator, RecordingEvaluator

FIELDS = ("states", "pi", "action", "game_id", "move_number", "results", "game_lengths", "z")


def _separate(game_name, config, shares_and_seeds):
    """The records of each share played in this process with its own evaluator, merged."""
    game = make_game(game_name)
    return merge_records([play_selfplay_games(game, HashEvaluator(game), n, config, np.random.default_rng(seed))
                          for n, seed in shares_and_seeds])


def _assert_same_games(got, expected):
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name))


def test_split_and_merge():
    assert split_games(10, 3) == [4, 3, 3] and split_games(2, 4) == [1, 1] and split_games(5, 1) == [5]
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=4), max_moves=3)
    parts = [play_selfplay_games(game, HashEvaluator(game), n, config, np.random.default_rng(n)) for n in (2, 3)]
    merged = merge_records(parts)
    assert merged.results.shape == (5,) and sorted(set(merged.game_id.tolist())) == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(merged.action[merged.game_id >= 2], parts[1].action)
    assert merged.ownership is None                                   # tic-tac-toe has no territory
    go = make_game("go-5x5")
    go_parts = [play_selfplay_games(go, HashEvaluator(go), n, config, np.random.default_rng(n)) for n in (2, 3)]
    np.testing.assert_array_equal(merge_records(go_parts).ownership, np.concatenate([p.ownership for p in go_parts]))


@pytest.mark.parametrize("parallel", [1, 2])
def test_shared_selfplay_plays_exactly_the_games_of_separate_evaluators(parallel):
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=16, leaves_per_step=2))
    evaluator = RecordingEvaluator(game)
    shared = play_selfplay_shared("tictactoe", evaluator, 6, config, seeds=[7, 8], processes=2, window_s=0.2,
                                  timeout_s=120, parallel=parallel)
    _assert_same_games(shared, _separate("tictactoe", config, [(3, 7), (3, 8)]))
    if parallel == 1:   # merged: the leaves of both processes in one forward pass at least once
        assert max(evaluator.batches) > 3 * 2
    else:               # parallel: one process's leaves per pass (3 games x 2 leaves at most)
        assert max(evaluator.batches) <= 3 * 2
    assert not mp.active_children()


def test_a_pool_plays_job_after_job_with_the_same_processes():
    """Three jobs (two games, and fewer games than processes) on one pool: one start of its processes, and each
    job plays exactly the games of separate evaluators."""
    small = SelfPlayConfig(search=SearchConfig(num_simulations=8))
    connect4 = SelfPlayConfig(search=SearchConfig(num_simulations=8), max_moves=6)
    with SearchProcessPool(2) as pool:
        first = pool.play("tictactoe", RecordingEvaluator(make_game("tictactoe")), 4, small, [1, 2], timeout_s=120)
        pids = pool.pids
        second = pool.play("connect4", RecordingEvaluator(make_game("connect4")), 3, connect4, [3, 4],
                           timeout_s=120, parallel=2)
        third = pool.play("tictactoe", HashEvaluator(make_game("tictactoe")), 1, small, [5, 6], timeout_s=120)
        assert pool.pids == pids and len(pids) == 2 and pool.started == 2
    assert not mp.active_children()
    _assert_same_games(first, _separate("tictactoe", small, [(2, 1), (2, 2)]))
    _assert_same_games(second, _separate("connect4", connect4, [(2, 3), (1, 4)]))
    _assert_same_games(third, _separate("tictactoe", small, [(1, 5)]))


def test_a_process_gone_between_jobs_is_replaced_before_the_next():
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8))
    evaluator = HashEvaluator(make_game("tictactoe"))
    with SearchProcessPool(2) as pool:
        pool.play("tictactoe", evaluator, 2, config, [1, 2], timeout_s=120)
        old = pool.pids
        os.kill(old[1], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while any(child.pid == old[1] for child in mp.active_children()) and time.monotonic() < deadline:
            time.sleep(0.05)                                  # until it is gone (a kill is not instant)
        again = pool.play("tictactoe", evaluator, 2, config, [1, 2], timeout_s=120)
        assert pool.started == 4 and not set(pool.pids) & set(old)
    _assert_same_games(again, _separate("tictactoe", config, [(1, 1), (1, 2)]))
    assert not mp.active_children()


def test_a_failing_job_is_reported_stops_every_process_and_the_next_job_starts_new_ones():
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=4))
    calls = [0]

    def flaky(states):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("device lost")
        return HashEvaluator(game)(states)

    with SearchProcessPool(2) as pool:
        with pytest.raises(EvaluatorError, match="device lost"):
            pool.play("tictactoe", flaky, 4, config, seeds=[1, 2], timeout_s=120)
        assert pool.pids == [] and not mp.active_children()
        after = pool.play("tictactoe", HashEvaluator(game), 4, config, seeds=[1, 2], timeout_s=120)
        assert pool.started == 4
    _assert_same_games(after, _separate("tictactoe", config, [(2, 1), (2, 2)]))
    with pytest.raises(EvaluatorError, match="device lost"):   # a pool of its own: stopped all the same
        calls[0] = 0
        play_selfplay_shared("tictactoe", flaky, 4, config, seeds=[1, 2], processes=2, timeout_s=120)
    assert not mp.active_children()


def test_the_worker_pool_is_kept_per_size():
    try:
        pool = worker_pool(2)
        assert worker_pool(2) is pool
        other = worker_pool(3)
        assert other is not pool and other.processes == 3
    finally:
        close_worker_pool()
    assert not mp.active_children()
