"""shared.network.training: symmetry-consistent batches, a loss that falls on a fixed dataset, the lr schedule, the
gradient norm before clipping."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from shared.network import NetworkSpec, create_model
from shared.network.training import TrainSettings, learning_rate_at, losses, make_optimizer, sample_batch, train_step


def _asymmetric_position(game) -> np.ndarray:
    """X on cell 0, O on cell 1 (last move): no board symmetry but the identity keeps this position."""
    return game.play_moves([0, 1]).reshape(1, -1)  # [1, S] int16


def _symmetry_of(game, original_planes: np.ndarray, planes: np.ndarray) -> int:
    """The one symmetry k with transform_planes(original, k) == planes ([1, C, H, W] and [C, H, W])."""
    matches = [k for k in range(game.num_symmetries)
               if np.array_equal(game.transform_planes(original_planes, k)[0], planes)]
    assert len(matches) == 1, f"planes match symmetries {matches}, expected exactly one"
    return matches[0]


def test_sample_batch_transforms_planes_and_policy_together(tictactoe) -> None:
    states = _asymmetric_position(tictactoe)
    target_action = 5
    pi = np.zeros((1, tictactoe.num_actions), np.float32)
    pi[0, target_action] = 1.0
    z = np.array([-0.5], np.float32)
    original = tictactoe.encode(states)                                   # [1, C, H, W] float32
    planes, targets, values = sample_batch(tictactoe, states, pi, z, 64, np.random.default_rng(0), augment=True)
    assert planes.shape == (64, *original.shape[1:]) and planes.dtype == np.float32
    assert targets.shape == (64, tictactoe.num_actions) and targets.dtype == np.float32
    np.testing.assert_array_equal(values, np.full(64, -0.5, np.float32))  # z is symmetry-invariant
    seen = set()
    for i in range(64):
        k = _symmetry_of(tictactoe, original, planes[i])
        seen.add(k)
        assert int(targets[i].argmax()) == int(tictactoe.symmetry_action_map(k)[target_action]), f"sample {i}, k={k}"
        assert targets[i].sum() == pytest.approx(1.0)
        # the transformed planes are the encoding of the transformed position (the network sees a real position)
        np.testing.assert_array_equal(planes[i], tictactoe.encode(tictactoe.transform_states(states, k))[0])
    assert seen == set(range(tictactoe.num_symmetries)), f"64 draws used only symmetries {sorted(seen)}"


def test_sample_batch_without_augmentation_returns_the_rows_unchanged(tictactoe) -> None:
    states = np.concatenate([_asymmetric_position(tictactoe), tictactoe.initial_states(1)])
    pi = np.eye(tictactoe.num_actions, dtype=np.float32)[[5, 2]]
    z = np.array([1.0, -1.0], np.float32)
    planes, targets, values = sample_batch(tictactoe, states, pi, z, 16, np.random.default_rng(1), augment=False)
    encoded = tictactoe.encode(states)
    for i in range(16):
        row = 0 if values[i] == 1.0 else 1
        np.testing.assert_array_equal(planes[i], encoded[row])
        np.testing.assert_array_equal(targets[i], pi[row])


def _fixed_dataset(game, rng: np.random.Generator, positions: int = 48):
    """Random reachable positions with fixed random targets: states [N,S] int16, pi [N,A] float32, z [N] float32."""
    states = []
    for _ in range(positions):
        s = game.initial_states(1)
        for _ in range(int(rng.integers(0, 5))):
            legal = np.flatnonzero(game.legal_mask(s)[0])
            s = game.step(s, np.array([rng.choice(legal)]))
        states.append(s)
    states = np.concatenate(states)
    pi = np.where(game.legal_mask(states), rng.random((positions, game.num_actions)), 0.0).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 0.0, 1.0], size=positions).astype(np.float32)
    return states, pi, z


def test_losses_fall_on_a_fixed_dataset(tictactoe) -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states, pi, z = _fixed_dataset(tictactoe, rng)
    model = create_model(tictactoe, NetworkSpec(blocks=1, channels=8), seed=0)
    settings = TrainSettings(steps=50, batch_size=48, learning_rate=0.01, weight_decay=1e-4, augment=False)
    optimizer = make_optimizer(model, settings)
    history = []
    for step in range(settings.steps):
        batch = (tictactoe.encode(states), pi, z)  # the whole dataset every step: a deterministic target
        history.append(train_step(model, optimizer, batch, settings, step, "cpu"))
    first, last = history[0], history[-1]
    assert set(first) == {"loss", "policy_loss", "value_loss", "lr", "grad_norm"}
    assert all(np.isfinite(h["grad_norm"]) and h["grad_norm"] > 0 for h in history)
    assert last["loss"] < 0.8 * first["loss"], (first, last)
    assert last["value_loss"] < first["value_loss"] and last["policy_loss"] < first["policy_loss"]
    assert all(np.isfinite(h["loss"]) for h in history)


def test_the_gradient_norm_is_measured_before_clipping(tictactoe) -> None:
    states, pi, z = _fixed_dataset(tictactoe, np.random.default_rng(1))
    model = create_model(tictactoe, NetworkSpec(blocks=1, channels=8), seed=0)
    settings = TrainSettings(steps=1, batch_size=48, learning_rate=0.01, weight_decay=0.0, augment=False,
                             grad_clip=1e-3)
    twin = copy.deepcopy(model).train()
    planes = torch.from_numpy(tictactoe.encode(states))
    total, _, _ = losses(twin, planes, torch.from_numpy(pi), torch.from_numpy(z), settings.value_weight)
    total.backward()
    expected = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in twin.parameters()])).item()
    record = train_step(model, make_optimizer(model, settings), (tictactoe.encode(states), pi, z), settings, 0, "cpu")
    assert record["grad_norm"] == pytest.approx(expected, rel=1e-4) and expected > 100 * settings.grad_clip


def test_learning_rate_schedule_runs_from_lr_to_the_final_fraction() -> None:
    settings = TrainSettings(steps=40, batch_size=8, learning_rate=0.02, weight_decay=0.0, lr_final_fraction=0.1)
    rates = [learning_rate_at(step, settings) for step in range(settings.steps)]
    assert rates[0] == pytest.approx(0.02)
    assert rates[-1] == pytest.approx(0.002)
    assert all(a >= b for a, b in zip(rates, rates[1:])), "the cosine schedule must never rise"
    constant = TrainSettings(steps=10, batch_size=8, learning_rate=0.01, weight_decay=0.0, lr_final_fraction=1.0)
    assert all(learning_rate_at(s, constant) == pytest.approx(0.01) for s in range(10))


def test_train_step_sets_the_scheduled_learning_rate(tictactoe) -> None:
    model = create_model(tictactoe, NetworkSpec(blocks=1, channels=8), seed=1)
    settings = TrainSettings(steps=5, batch_size=4, learning_rate=0.01, weight_decay=0.0, lr_final_fraction=0.5)
    optimizer = make_optimizer(model, settings)
    states, pi, z = _fixed_dataset(tictactoe, np.random.default_rng(2), positions=4)
    out = train_step(model, optimizer, (tictactoe.encode(states), pi, z), settings, 4, "cpu")
    assert out["lr"] == pytest.approx(0.005)
    assert all(group["lr"] == pytest.approx(0.005) for group in optimizer.param_groups)


def test_unknown_optimizer_is_a_clear_error(tictactoe) -> None:
    model = create_model(tictactoe, NetworkSpec(blocks=1, channels=8), seed=1)
    with pytest.raises(ValueError, match="adamw or sgd"):
        make_optimizer(model, TrainSettings(steps=1, batch_size=1, learning_rate=0.1, weight_decay=0.0,
                                            optimizer="lion"))
