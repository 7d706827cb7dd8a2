"""The trainer's TensorBoard curves: one point per optimiser step, numbered across generations, written once
even when a killed job resumes, and never a reason for a training job to fail."""
from __future__ import annotations

import logging

import pytest

import shared.curves.events as events
from services.trainer import train_job
from shared.network.training import TrainSettings, learning_rate_at
from tests.services.conftest import train_payload
from tests.services.test_trainer import EVERY, STEPS, KilledTrainer, _count_steps, with_shard  # noqa: F401

pytest.importorskip("tensorboard", reason="the [tensorboard] extra is part of [test]")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

TAGS = {"train/loss", "train/policy_loss", "train/value_loss", "train/learning_rate", "train/grad_norm"}


def _scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    """tag -> (step, value) over every event file of the run, in step order. Each file is read on its own:
    the legacy directory loader orders files by name, and a writer counter that passes 9 -> 10 within one
    second sorts a newer file first (TensorBoard's own data server reads all files)."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(run_dir.glob("events.out.tfevents.*")):
        accumulator = EventAccumulator(str(path))
        accumulator.Reload()
        for tag in accumulator.Tags()["scalars"]:
            curves.setdefault(tag, []).extend((e.step, e.value) for e in accumulator.Scalars(tag))
    return {tag: sorted(points) for tag, points in curves.items()}


def test_each_step_is_written_with_its_losses_rate_and_gradient_norm(context, layout, config, with_shard) -> None:
    train_job(train_payload(layout, config, with_shard, generation=1), context)
    curves = _scalars(layout.tensorboard_run_dir)
    assert set(curves) == TAGS
    assert all([step for step, _ in points] == list(range(1, STEPS + 1)) for points in curves.values())
    t = config.train
    settings = TrainSettings(steps=STEPS, batch_size=t.batch_size, learning_rate=t.learning_rate,
                             weight_decay=t.weight_decay, lr_final_fraction=t.lr_final_fraction)
    assert [v for _, v in curves["train/learning_rate"]] == pytest.approx(
        [learning_rate_at(i, settings) for i in range(STEPS)], rel=1e-6)
    assert all(v > 0 for _, v in curves["train/grad_norm"])
    for (_, total), (_, policy), (_, value) in zip(curves["train/loss"], curves["train/policy_loss"],
                                                   curves["train/value_loss"]):
        assert total == pytest.approx(policy + t.value_weight * value, rel=1e-5)


def test_steps_are_numbered_across_generations(context, layout, config, with_shard) -> None:
    first = train_job(train_payload(layout, config, with_shard, generation=1), context)
    train_job(train_payload(layout, config, first["version"], generation=2), context)
    steps = [step for step, _ in _scalars(layout.tensorboard_run_dir)["train/loss"]]
    assert steps == list(range(1, 2 * STEPS + 1))


def test_a_resumed_job_writes_each_step_once(context, layout, config, with_shard, monkeypatch) -> None:
    _count_steps(monkeypatch, fail_at_call=EVERY + 2)  # dies in step 4; the checkpoint holds 2 steps
    with pytest.raises(KilledTrainer):
        train_job(train_payload(layout, config, with_shard, generation=1), context)
    assert [s for s, _ in _scalars(layout.tensorboard_run_dir)["train/loss"]] == list(range(1, EVERY + 1))
    monkeypatch.undo()
    train_job(train_payload(layout, config, with_shard, generation=1), context)
    assert [s for s, _ in _scalars(layout.tensorboard_run_dir)["train/loss"]] == list(range(1, STEPS + 1))


def test_without_tensorboard_the_job_trains_and_says_once_how_to_get_curves(context, layout, config, with_shard,
                                                                           monkeypatch, caplog) -> None:
    monkeypatch.setattr(events, "tensorboard_installed", lambda: False)
    monkeypatch.setattr(events, "_hint_logged", False)
    with caplog.at_level(logging.WARNING):
        first = train_job(train_payload(layout, config, with_shard, generation=1), context)
        train_job(train_payload(layout, config, first["version"], generation=2), context)
    assert [r.getMessage() for r in caplog.records].count(events.TENSORBOARD_HINT) == 1
    assert "zeroforge[tensorboard]" in events.TENSORBOARD_HINT
    assert not layout.tensorboard_run_dir.exists()


def test_an_unwritable_tensorboard_folder_never_fails_training(context, layout, config, with_shard, caplog) -> None:
    layout.tensorboard_run_dir.parent.mkdir(parents=True)
    layout.tensorboard_run_dir.write_text("a file where the run folder belongs")
    with caplog.at_level(logging.WARNING):
        result = train_job(train_payload(layout, config, with_shard, generation=1), context)
    assert result["steps"] == STEPS and not result["reused"]
    assert any("TensorBoard curves under" in r.getMessage() for r in caplog.records)
