"""services.trainer.train_job called directly: registration, idempotence, resume from a checkpoint, bad input."""
from __future__ import annotations

import logging

import pytest
import torch

import services.trainer as trainer
import shared.network.training as shared_training
from services.selfplay import selfplay_job
from services.trainer import TrainingDataError, train_job, train_settings
from shared.network import load_model
from tests.services.conftest import selfplay_payload, tiny_config, train_payload

STEPS = 6           # train.steps_per_generation of the tiny config
EVERY = 2           # train.checkpoint_every of the tiny config


class KilledTrainer(Exception):
    """Stands in for the worker process dying in the middle of training."""


@pytest.fixture
def with_shard(context, layout, data_dir, config, initial_version) -> str:
    """One generation-1 self-play shard played by the initial model; returns the initial version."""
    selfplay_job(selfplay_payload(layout, config, initial_version, "gen1-sp0000").model_dump(mode="json"), context)
    return initial_version


def _count_steps(monkeypatch, fail_at_call: int | None = None, on_first_call=None) -> list[int]:
    """Wrap services.trainer.train_step: record each step index; raise KilledTrainer on call `fail_at_call`."""
    steps: list[int] = []
    real_step = shared_training.train_step  # never a wrapper from an earlier call

    def counting_step(model, optimizer, batch, settings, step, device):
        if not steps and on_first_call is not None:
            on_first_call(model)
        if fail_at_call is not None and len(steps) + 1 == fail_at_call:
            raise KilledTrainer(f"killed before step {step}")
        steps.append(step)
        return real_step(model, optimizer, batch, settings, step, device)

    monkeypatch.setattr(trainer, "train_step", counting_step)
    return steps


def _checkpoint(layout, generation: int, parent: str):
    return layout.checkpoint_path(generation, parent)


def test_registers_a_candidate_with_its_training_figures(context, layout, data_dir, config, with_shard, registry) -> None:
    result = train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert result["reused"] is False and result["parent"] == with_shard and result["generation"] == 1
    record = registry.get(result["version"])
    assert record.status == "candidate" and record.parent == with_shard and record.generation == 1
    assert record.training["steps"] == STEPS and record.training["batch_size"] == 16
    assert record.training["shards"] == ["gen1-sp0000.h5"] and record.training["bad_shards"] == []
    assert record.training["positions"] == result["positions"] > 0
    assert record.training["loss"] == pytest.approx(record.training["policy_loss"] + record.training["value_loss"],
                                                    abs=1e-3)
    # a 6-step job reports its first step's loss and its last step's, not twice the mean of all six
    assert record.training["first_loss"] != record.training["loss"]
    assert registry.best().version == with_shard  # training never promotes
    parent = load_model(registry.get(with_shard).path).model.state_dict()
    child = load_model(record.path).model.state_dict()
    assert any(not torch.equal(parent[k], child[k]) for k in parent), "training did not change the weights"


def test_a_second_call_returns_the_same_candidate(context, layout, data_dir, config, with_shard, registry, monkeypatch) -> None:
    first = train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    steps = _count_steps(monkeypatch)
    again = train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert again["version"] == first["version"] and again["reused"] is True
    assert steps == [] and [v.version for v in registry.list()] == [with_shard, first["version"]]


def test_a_killed_trainer_resumes_from_its_checkpoint(context, data_dir, config, with_shard, layout, registry, monkeypatch) -> None:
    _count_steps(monkeypatch, fail_at_call=EVERY + 2)  # dies after 3 steps; the checkpoint holds step 2
    with pytest.raises(KilledTrainer):
        train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    ckpt = _checkpoint(layout, 1, with_shard)
    assert ckpt.is_file()
    assert torch.load(ckpt, weights_only=True)["step"] == EVERY
    assert [v.version for v in registry.list()] == [with_shard]

    steps = _count_steps(monkeypatch)
    result = train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert steps == list(range(EVERY, STEPS)), "the restarted job must continue at the checkpointed step"
    assert result["steps"] == STEPS and registry.get(result["version"]).parent == with_shard
    assert not ckpt.exists(), "the checkpoint must be deleted once the candidate is registered"
    assert not list(layout.checkpoints_dir.glob("*.pt")), "the temporary candidate file must be deleted"


def _parent_state(registry, version: str) -> dict[str, torch.Tensor]:
    return load_model(registry.get(version).path).model.state_dict()


def _assert_starts_from(expected: dict[str, torch.Tensor]):
    def check(model) -> None:
        state = model.state_dict()
        assert all(torch.equal(state[k].cpu(), expected[k]) for k in expected), "training did not start from the parent"
    return check


def test_a_damaged_checkpoint_is_ignored_with_a_warning(context, data_dir, config, with_shard, layout, registry, monkeypatch, caplog) -> None:
    ckpt = _checkpoint(layout, 1, with_shard)
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    ckpt.write_bytes(b"\x80\x02 this is not a torch checkpoint")
    steps = _count_steps(monkeypatch, on_first_call=_assert_starts_from(_parent_state(registry, with_shard)))
    with caplog.at_level(logging.WARNING, logger="services.trainer"):
        result = train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert steps == list(range(STEPS))
    assert any("ignoring unreadable checkpoint" in r.getMessage() for r in caplog.records)
    assert result["reused"] is False and not ckpt.exists()


def test_a_half_loadable_checkpoint_leaves_the_parent_weights(context, data_dir, config, with_shard, layout, registry, monkeypatch, caplog, tictactoe) -> None:
    """Weights that load but an optimiser state that does not: training must start over from the parent,
    not from the checkpoint's weights with step 0."""
    from shared.network import NetworkSpec, create_model

    other = create_model(tictactoe, NetworkSpec(blocks=1, channels=8), seed=99)
    ckpt = _checkpoint(layout, 1, with_shard)
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": other.state_dict(), "optimizer": {"state": "garbage"}, "step": 2,
                "history": [{"loss": 1.0}, {"loss": 1.0}]}, ckpt)
    steps = _count_steps(monkeypatch, on_first_call=_assert_starts_from(_parent_state(registry, with_shard)))
    with caplog.at_level(logging.WARNING, logger="services.trainer"):
        train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert steps == list(range(STEPS))
    assert any("ignoring unreadable checkpoint" in r.getMessage() for r in caplog.records)


def test_an_empty_replay_window_is_a_training_data_error(context, layout, data_dir, config, initial_version, registry) -> None:
    with pytest.raises(TrainingDataError, match=r"no self-play positions under .*shards.*run self-play"):
        train_job(train_payload(layout, config, initial_version, generation=1, seed=0), context)
    assert [v.version for v in registry.list()] == [initial_version]


def test_train_settings_carry_every_train_field() -> None:
    cfg = tiny_config(**{"train.lr_final_fraction": 0.5, "train.grad_clip": 1.5, "train.optimizer": "sgd",
                         "train.value_weight": 2.0, "train.augment": False})
    settings = train_settings(cfg.train)
    assert (settings.steps, settings.batch_size) == (STEPS, 16)
    assert settings.lr_final_fraction == 0.5 and settings.grad_clip == 1.5
    assert settings.optimizer == "sgd" and settings.value_weight == 2.0 and settings.augment is False


@pytest.fixture
def step_threads(monkeypatch) -> list[int]:
    """Torch threads seen by each training step of the jobs the test runs."""
    seen: list[int] = []
    real_step = shared_training.train_step

    def recording_step(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real_step(*args, **kwargs)

    monkeypatch.setattr(trainer, "train_step", recording_step)
    return seen


def test_train_torch_threads_hold_for_the_job_only(context, layout, data_dir, with_shard, step_threads) -> None:
    before = torch.get_num_threads()
    wanted = before + 1                            # more than the worker has: the job raises it
    config = tiny_config(**{"train.torch_threads": wanted})
    train_job(train_payload(layout, config, with_shard, generation=1, seed=5), context)
    assert step_threads == [wanted] * STEPS
    assert torch.get_num_threads() == before


def test_train_torch_threads_are_a_floor_a_worker_with_more_keeps_its_own(context, layout, data_dir, with_shard,
                                                                          step_threads) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(3)                       # a worker started with --torch-threads 3
    try:
        train_job(train_payload(layout, tiny_config(**{"train.torch_threads": 2}), with_shard, generation=1, seed=5),
                  context)
        assert step_threads == [3] * STEPS and torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)

