"""FoldedPolicyValueNet against the PolicyValueNet it was folded from: the same outputs (to float rounding) with
batch norms whose statistics and affine parameters are far from the identity, for several geometries."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from shared.games import make_game
from shared.network.evaluator import TorchEvaluator
from shared.network.folded import FoldedPolicyValueNet, bf16_copy
from shared.network.resnet import PolicyValueNet
from shared.network.spec import NetworkError


def _network_with_batch_norm_statistics(game_name: str, blocks: int, channels: int, seed: int) -> PolicyValueNet:
    """A network whose every batch norm has random running statistics and affine parameters (eval mode)."""
    game = make_game(game_name)
    torch.manual_seed(seed)
    model = PolicyValueNet(game.num_planes, game.height, game.width, game.num_actions, blocks, channels)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-2.0, 2.0)
                module.running_var.uniform_(0.05, 4.0)
                module.weight.uniform_(-1.5, 1.5)
                module.bias.uniform_(-1.0, 1.0)
    return model.eval()


@pytest.mark.parametrize("game_name, blocks, channels", [("connect4", 2, 16), ("othello-6x6", 1, 8),
                                                         ("gomoku-8x8-5", 3, 24)])
def test_folded_matches_the_network(game_name: str, blocks: int, channels: int) -> None:
    model = _network_with_batch_norm_statistics(game_name, blocks, channels, seed=blocks)
    folded = FoldedPolicyValueNet(model)
    inputs = torch.randn(32, model.num_planes, model.height, model.width)
    with torch.inference_mode():
        want_logits, want_values = model(inputs)
        logits, values = folded(inputs)
    assert logits.shape == want_logits.shape and values.shape == want_values.shape
    np.testing.assert_allclose(logits.numpy(), want_logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values.numpy(), want_values.numpy(), rtol=1e-4, atol=1e-5)
    # Folding really happened: no batch norm left, and the folded copy is not the identity of the original.
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in folded.modules())
    assert (folded.num_planes, folded.height, folded.width, folded.num_actions) == (
        model.num_planes, model.height, model.width, model.num_actions)


def test_folded_copy_is_fixed_at_construction_and_inference_only() -> None:
    model = _network_with_batch_norm_statistics("connect4", 1, 8, seed=3)
    folded = FoldedPolicyValueNet(model)
    inputs = torch.randn(4, model.num_planes, model.height, model.width)
    with torch.inference_mode():
        before = folded(inputs)[0].clone()
        with torch.no_grad():
            model.stem[1].running_mean.add_(5.0)          # a later change to the source...
        after = folded(inputs)[0]
        changed = model(inputs)[0]
    assert torch.equal(before, after)                    # ... does not reach the copy
    assert not torch.allclose(changed, after)
    assert not any(p.requires_grad for p in folded.parameters())
    with pytest.raises(NetworkError, match="inference only"):
        folded.train()
    with pytest.raises(NetworkError, match="expects input"):
        folded(torch.zeros(2, 3, 6, 7))


def test_evaluator_runs_the_folded_network() -> None:
    model = _network_with_batch_norm_statistics("connect4", 2, 16, seed=5)
    game = make_game("connect4")
    evaluator = TorchEvaluator(model, game, precision="fp32")
    assert isinstance(evaluator.inference_model, FoldedPolicyValueNet)
    states = game.initial_states(3)
    states = game.step(states, np.array([3, 2, 6]))
    logits, values = evaluator(states)
    with torch.inference_mode():
        want_logits, want_values = model(torch.from_numpy(game.encode(states)))
    np.testing.assert_allclose(logits, want_logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values, want_values.numpy(), rtol=1e-4, atol=1e-5)


def _autocast_bf16(model: torch.nn.Module, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.inference_mode(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits, values = model(inputs)
    return logits.float(), values.float()


@pytest.mark.parametrize("game_name, blocks, channels", [("connect4", 2, 16), ("gomoku-8x8-5", 2, 48)])
def test_bf16_copy_equals_bf16_autocast_bit_for_bit(game_name: str, blocks: int, channels: int) -> None:
    model = _network_with_batch_norm_statistics(game_name, blocks, channels, seed=7)
    folded = FoldedPolicyValueNet(model).to(memory_format=torch.channels_last)
    copy16 = bf16_copy(folded)
    assert all(p.dtype == torch.bfloat16 for p in copy16.parameters())
    assert all(p.dtype == torch.float32 for p in folded.parameters())           # the source is left as it was
    inputs = torch.randn(64, model.num_planes, model.height, model.width).contiguous(memory_format=torch.channels_last)
    want_logits, want_values = _autocast_bf16(folded, inputs)
    with torch.inference_mode():
        logits, values = copy16(inputs.to(torch.bfloat16))
    assert logits.dtype == torch.bfloat16
    assert torch.equal(logits.float(), want_logits) and torch.equal(values.float(), want_values)


def test_bf16_evaluator_returns_the_autocast_outputs() -> None:
    model = _network_with_batch_norm_statistics("gomoku-8x8-5", 2, 24, seed=9)
    game = make_game("gomoku-8x8-5")
    evaluator = TorchEvaluator(model, game, precision="bf16")
    states = game.step(game.initial_states(5), np.array([0, 9, 27, 36, 63]))
    logits, values = evaluator(states)
    assert logits.dtype == np.float32 and values.dtype == np.float32
    inputs = torch.from_numpy(game.encode(states)).contiguous(memory_format=torch.channels_last)
    want_logits, want_values = _autocast_bf16(evaluator.inference_model, inputs)
    np.testing.assert_array_equal(logits, want_logits.numpy())
    np.testing.assert_array_equal(values, want_values.numpy())
    fp32_logits, _ = TorchEvaluator(model, game, precision="fp32")(states)
    assert not np.array_equal(fp32_logits, logits)                              # it really ran in bf16
