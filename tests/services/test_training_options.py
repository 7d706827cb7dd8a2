"""Training options: value targets mixing z with the search value, steps proportional to new positions (with a
resumed job), and the self-play job's resignation counts."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import services.trainer as trainer
import shared.network.training as shared_training
from flows.generation import resign_summary
from services.selfplay import selfplay_job
from services.trainer import train_job
from shared.config import ConfigError
from shared.network.training import steps_for_new_positions, value_targets
from shared.shards import generation_positions, load_replay_window, read_shard
from shared.shards.gameinfo import resign_counts
from tests.services.conftest import selfplay_payload, tiny_config, train_payload


class KilledTrainer(Exception):
    """Stands in for the worker process dying in the middle of training."""


def test_value_targets_blend_z_and_the_root_value_from_the_side_to_move() -> None:
    z = np.array([1.0, -1.0, 0.0, 1.0], np.float32)
    root_value = np.array([0.5, 0.5, -1.0, 1.0], np.float32)
    np.testing.assert_allclose(value_targets(z, root_value, 0.25), [0.875, -0.625, -0.25, 1.0], rtol=1e-6)
    np.testing.assert_allclose(value_targets(z, root_value, 1.0), root_value)
    assert value_targets(z, root_value, 0.0) is z                  # mix 0: exactly the former targets
    with pytest.raises(ValueError, match="value_target_mix must be in"):
        value_targets(z, root_value, 1.5)


@pytest.mark.parametrize("new, r, expected", [
    (1000, 2.0, 50),          # ceil(2000 / 256) = 8 -> min_steps 50
    (100_000, 2.0, 782),      # ceil(200000 / 256) = 782
    (1_000_000, 2.0, 1000),   # 7813 -> steps_per_generation 1000
    (0, 2.0, 50),
    (5000, None, 1000),       # off: always steps_per_generation
])
def test_steps_follow_new_positions_within_the_clamp(new, r, expected) -> None:
    assert steps_for_new_positions(new, r, 256, 50, 1000) == expected


def test_min_steps_above_the_cap_is_refused_when_steps_follow_the_data() -> None:
    with pytest.raises(ConfigError, match=r"min_steps \(50\) must be <= steps_per_generation \(6\)"):
        tiny_config(**{"train.samples_per_position": 4.0})
    assert tiny_config().train.min_steps == 50                     # unset: the fixed steps, no check


@pytest.fixture
def shard_gen1(context, layout, config, initial_version) -> str:
    selfplay_job(selfplay_payload(layout, config, initial_version, "gen1-sp0000").model_dump(mode="json"), context)
    return initial_version


def test_the_replay_window_hands_the_root_values_to_training(layout, shard_gen1, tictactoe) -> None:
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 1000)
    shard = read_shard(layout.shard_path(1, "gen1-sp0000"), tictactoe)
    np.testing.assert_array_equal(window.root_value, shard.moves["root_value"])
    assert window.root_value.shape == window.z.shape and window.root_value.dtype == np.float32


def _sampled(monkeypatch, pick) -> list:
    """A list that gets pick(states [N, S] int16, value targets [N] float32) of every batch the trainer samples
    from."""
    seen = []
    real = trainer.sample_batch

    def spy(game, states, pi, z, batch_size, rng, augment, **options):
        seen.append(pick(states, z))
        return real(game, states, pi, z, batch_size, rng, augment, **options)

    monkeypatch.setattr(trainer, "sample_batch", spy)
    return seen


def _value_targets_seen(monkeypatch) -> list[np.ndarray]:
    """A list that gets the value targets [N] float32 of every batch the trainer samples from."""
    return _sampled(monkeypatch, lambda states, z: z)


def test_training_samples_the_mixed_value_targets(context, layout, shard_gen1, tictactoe, monkeypatch) -> None:
    seen = _value_targets_seen(monkeypatch)
    config = tiny_config(**{"train.value_target_mix": 0.5})
    train_job(train_payload(layout, config, shard_gen1), context)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 1000)
    expected = 0.5 * window.z + 0.5 * window.root_value
    assert len(seen) == config.train.steps_per_generation
    np.testing.assert_allclose(seen[0], expected, rtol=1e-6)
    assert not np.array_equal(seen[0], window.z)


def test_steps_from_new_positions_and_a_resumed_job_keeps_them(context, layout, shard_gen1, registry,
                                                               monkeypatch) -> None:
    config = tiny_config(**{"train.samples_per_position": 4.0, "train.min_steps": 2,
                            "train.steps_per_generation": 40, "train.checkpoint_every": 2})
    new = generation_positions(layout.generation_shards_dir(1), 1)
    assert new == read_shard(layout.shard_path(1, "gen1-sp0000")).num_positions > 0
    expected = min(40, max(2, math.ceil(4.0 * new / 16)))
    assert 2 < expected < 40, "the tiny shard should land inside the clamp"
    steps: list[int] = []
    real_step = shared_training.train_step

    def counting(model, optimizer, batch, settings, step, device, fail_at=[5]):
        if fail_at and len(steps) + 1 == fail_at[0]:
            fail_at.clear()
            raise KilledTrainer(f"killed before step {step}")
        steps.append(step)
        return real_step(model, optimizer, batch, settings, step, device)

    monkeypatch.setattr(trainer, "train_step", counting)
    with pytest.raises(KilledTrainer):
        train_job(train_payload(layout, config, shard_gen1), context)
    assert torch.load(layout.checkpoint_path(1, shard_gen1), weights_only=True)["step"] == 4
    result = train_job(train_payload(layout, config, shard_gen1), context)
    assert steps == list(range(4)) + list(range(4, expected))        # resumed at 4, same total
    assert result["steps"] == expected and result["new_positions"] == new


def test_the_selfplay_job_reports_resignations_as_the_shard_stores_them(context, layout, initial_version) -> None:
    config = tiny_config(**{"selfplay.resign_threshold": -0.05, "selfplay.resign_disabled_fraction": 0.5,
                            "selfplay.games_per_job": 16})
    result = selfplay_job(selfplay_payload(layout, config, initial_version, "gen1-sp0001").model_dump(mode="json"),
                          context)
    shard = read_shard(layout.shard_path(1, "gen1-sp0001"))
    counts = resign_counts(shard.game_info, shard.game_results).as_dict()
    assert {k: result[k] for k in counts} == counts == {k: shard.attrs[k] for k in counts}
    assert counts["resigned_games"] > 0 and counts["no_resign_games"] > 0
    assert counts["resigned_games"] + counts["no_resign_games"] <= 16
    again = selfplay_job(selfplay_payload(layout, config, initial_version, "gen1-sp0001").model_dump(mode="json"),
                         context)
    assert again["reused"] and {k: again[k] for k in counts} == counts


def test_the_generation_log_reports_the_false_resignation_rate() -> None:
    totals = {"resigned_games": 40, "no_resign_games": 13, "would_resign_games": 12, "false_resignations": 1}
    assert resign_summary(totals) == "; resigned 40, false resigns 1/12 = 8% (of 13 no-resign games)"
    assert "false resigns 0/0 = n/a" in resign_summary({**totals, "would_resign_games": 0, "false_resignations": 0})


def _hand_shard(tictactoe):
    """Three tic-tac-toe games as shard rows (only what the cut reads): game 0 has 5 rows with sampled moves at
    rows 1 and 3, game 1 has 3 rows and none, game 2 has 2 rows and a sampled last move."""
    from shared.games.base import F_PLAYER
    from shared.shards import schema
    from shared.shards.reader import Shard

    lengths = [5, 3, 2]
    t = sum(lengths)
    states = np.zeros((t, tictactoe.state_size), np.int16)
    plies = np.concatenate([np.arange(n) for n in lengths])
    states[:, tictactoe.num_cells + F_PLAYER] = np.where(plies % 2 == 0, 1, -1)
    sampled = np.zeros(t, bool)
    sampled[[1, 3, 9]] = True
    pi = np.zeros((t, 9), np.float32)
    pi[:, 0] = 1.0                                                     # the most visited move: 0
    moves = np.zeros(t, schema.MOVES_DTYPE)
    moves["game_id"] = np.repeat(np.arange(3), lengths)
    moves["move_number"] = plies
    moves["action"] = np.where(sampled, 5, 0)
    moves["root_value"] = np.arange(1, t + 1) / 10.0                   # 0.1 ... 1.0
    games = np.zeros(3, schema.GAMES_DTYPE)
    games["game_id"], games["length"] = np.arange(3), lengths
    z = np.array([1, -1, 1, -1, 1, 0, 0, 0, -1, 1], np.float32)
    return Shard(path=None, attrs={}, states=states, pi=pi, z=z, moves=moves, games=games, game_info=None)


def test_value_targets_cut_at_the_first_sampled_move_take_its_search_value_from_the_side_to_move(tictactoe) -> None:
    from shared.shards.replay import sampled_move_cut_values

    cut = sampled_move_cut_values(_hand_shard(tictactoe), tictactoe.num_cells)
    expected = [-0.2, 0.2, -0.4, 0.4, 1.0,     # game 0: rows 0-3 cut at rows 1 and 3 (the other side there: negated)
                0.0, 0.0, 0.0,                # game 1: no sampled move, z
                -1.0, 1.0]                    # game 2: cut at its last row, never at game 0's or game 1's rows
    np.testing.assert_allclose(cut, expected, rtol=1e-6)
    assert cut.dtype == np.float32


def test_training_samples_the_cut_value_targets(context, layout, shard_gen1, tictactoe, monkeypatch) -> None:
    from shared.shards.replay import sampled_move_cut_values

    seen = _value_targets_seen(monkeypatch)
    result = train_job(train_payload(layout, tiny_config(**{"train.value_cut_at_sampled_moves": True}), shard_gen1),
                       context)
    shard = read_shard(layout.shard_path(1, "gen1-sp0000"), tictactoe)
    expected = sampled_move_cut_values(shard, tictactoe.num_cells)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 1000, cut_values=True)
    np.testing.assert_array_equal(window.cut_value, expected)
    np.testing.assert_array_equal(seen[0], expected)
    # the tiny self-play samples its temperature moves, so some targets are search values, not results
    assert (shard.moves["action"] != shard.pi.argmax(axis=1)).any() and not np.array_equal(expected, shard.z)
    assert result["value_targets_cut"] == round(float(np.mean(expected != shard.z)), 4) > 0   # in the record too
    newest = load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 7, cut_values=True)
    np.testing.assert_array_equal(newest.cut_value, expected[-7:])        # the newest rows, cut on the whole game
    assert load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 1000).cut_value is None


def test_training_with_merged_positions_samples_each_state_once(context, layout, shard_gen1, tictactoe,
                                                                monkeypatch) -> None:
    seen = _sampled(monkeypatch, lambda states, z: (states, z))
    result = train_job(train_payload(layout, tiny_config(**{"train.merge_duplicate_positions": True}), shard_gen1),
                       context)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, tictactoe, 1000)
    distinct = np.unique(window.states, axis=0)
    states, z = seen[0]
    assert states.shape[0] == distinct.shape[0] < window.states.shape[0]   # every game starts on the empty board
    assert np.unique(states, axis=0).shape[0] == states.shape[0]
    empty = np.flatnonzero((states[:, :tictactoe.num_cells] == 0).all(axis=1))
    assert empty.size == 1
    starts = (window.states[:, :tictactoe.num_cells] == 0).all(axis=1)
    assert z[empty[0]] == pytest.approx(float(window.z[starts].mean()), abs=1e-6)   # the mean of its games' results
    assert result["duplicates_merged"] == window.states.shape[0] - distinct.shape[0]
    assert result["positions"] == distinct.shape[0]
