"""Resignation threshold calibration: the rule on constructed samples, and the samples read back from shards."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.search import SearchConfig, SelfPlayConfig, play_selfplay_games
from shared.shards import write_shard
from shared.shards.resign_calibration import (RESIGN_FLOOR, ResignSamples, calibrated_resign_threshold,
                                              no_resign_samples)
from tests.search.helpers import HashEvaluator
from tests.storage.conftest import BASE_ATTRS


def _samples(values, outcomes) -> ResignSamples:
    return ResignSamples(np.asarray(values, np.float32), np.asarray(outcomes, np.int8), (1,))


def test_keeps_the_ceiling_when_its_resignations_were_right() -> None:
    samples = _samples([-0.99, -0.95, -0.3, 0.2], [-1, -1, 1, 1])
    result = calibrated_resign_threshold(samples, -0.9)
    assert (result.threshold, result.fired, result.false) == (-0.9, 2, 0)


def test_lowers_the_threshold_below_the_false_resignations() -> None:
    # two players who won had values -0.95 and -0.97: any threshold above -0.97 resigns one of them
    samples = _samples([-0.999, -0.998, -0.995, -0.97, -0.95, -0.5], [-1, -1, -1, 1, 0, 1])
    result = calibrated_resign_threshold(samples, -0.9, target_false_rate=0.05)
    assert result.threshold == pytest.approx(-0.97) and result.fired == 3 and result.false == 0
    # a 40% allowance keeps the ceiling: 2 false of 5 fired
    loose = calibrated_resign_threshold(samples, -0.9, target_false_rate=0.4)
    assert loose.threshold == -0.9 and (loose.fired, loose.false) == (5, 2)


def test_falls_to_the_floor_when_even_the_surest_losses_were_won() -> None:
    samples = _samples([-1.0, -1.0, -0.99], [1, 1, 0])
    result = calibrated_resign_threshold(samples, -0.9)
    assert result.threshold == RESIGN_FLOOR and result.false == 2 and "calibrated" in result.describe()
    assert calibrated_resign_threshold(_samples([], []), -0.8).threshold == -0.8
    with pytest.raises(ValueError):
        calibrated_resign_threshold(samples, 0.1)


def test_samples_come_from_the_no_resign_games_of_the_wanted_generations(tmp_path) -> None:
    game = make_game("gomoku-6x6-4")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8), temperature_moves=4, resign_threshold=-0.3,
                            resign_disabled_fraction=0.5)
    records = play_selfplay_games(game, HashEvaluator(game, seed=3), 12, config, np.random.default_rng(5))
    write_shard(tmp_path / "gen-000002", "job-a", game, records, {**BASE_ATTRS, "generation": 2})
    samples = no_resign_samples(tmp_path, [2], game)
    disabled = np.flatnonzero(records.resign_disabled)
    assert disabled.size > 0 and samples.size == 2 * disabled.size
    expected = []
    for g in disabled:
        rows = records.game_id == g
        for side in (1, -1):
            mine = rows & (records.states[:, game.num_cells + F_PLAYER] == side)
            expected.append((records.root_value[mine].min(), np.sign(records.results[g] * side)))
    np.testing.assert_allclose(samples.lowest_value, [e[0] for e in expected])
    np.testing.assert_array_equal(samples.outcome, [e[1] for e in expected])
    assert no_resign_samples(tmp_path, [1, 3], game).size == 0
