"""The optional network parts (KataGo's helpers): the ownership head and the global-pooling blocks. Their spec
round trip, their shapes, the folded copy, model files and the clear errors for a wrong setting."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from shared.config import ConfigError, PipelineConfig, load_config
from shared.games import make_game
from shared.network import NetworkSpec, create_model, load_model, model_file_info, save_model
from shared.network.folded import FoldedPolicyValueNet
from shared.network.resnet import GlobalPoolBlock, ResidualBlock, global_pool_blocks
from shared.network.spec import NetworkError

PARTS = NetworkSpec(4, 16, 32, ownership=True, global_pool=True)


def _with_batch_norm_statistics(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Random running statistics and affine parameters in every batch norm (eval mode)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                for tensor, low, high in ((module.running_mean, -2.0, 2.0), (module.running_var, 0.05, 4.0),
                                          (module.weight, -1.5, 1.5), (module.bias, -1.0, 1.0)):
                    tensor.copy_(torch.rand(tensor.shape, generator=generator) * (high - low) + low)
    return model.eval()


def test_a_spec_without_parts_stores_only_the_sizes() -> None:
    assert NetworkSpec(4, 64).to_dict() == {"blocks": 4, "channels": 64, "value_hidden": 64}
    assert NetworkSpec.from_dict({"blocks": 4, "channels": 64, "value_hidden": 64}) == NetworkSpec(4, 64)
    assert PARTS.to_dict() == {"blocks": 4, "channels": 16, "value_hidden": 32, "ownership": True,
                               "global_pool": True}
    assert NetworkSpec.from_dict(PARTS.to_dict()) == PARTS
    assert str(PARTS) == "4x16 (value hidden 32, ownership head, global pooling)"


def test_bad_parts_are_refused_with_what_to_do() -> None:
    with pytest.raises(NetworkError, match="ownership"):
        NetworkSpec(2, 16, ownership=1)
    with pytest.raises(NetworkError, match="global pooling needs"):
        NetworkSpec(2, 2, global_pool=True)
    with pytest.raises(NetworkError, match="optional"):
        NetworkSpec.from_dict({"blocks": 2, "channels": 8, "pooling": True})
    with pytest.raises(NetworkError, match="no territory.*ownership_head = false"):
        create_model(make_game("connect4"), NetworkSpec(2, 16, ownership=True))


def test_the_config_refuses_an_ownership_head_without_territory() -> None:
    with pytest.raises(ConfigError, match="ownership_head"):
        load_config(PipelineConfig, "gomoku-8x8-5", env=None, overrides={"game.ownership_head": True})
    config = load_config(PipelineConfig, "go-9x9", env=None,
                         overrides={"game.ownership_head": True, "game.global_pool": True})
    assert config.game.ownership_head and config.game.global_pool and config.train.ownership_weight == 1.5


@pytest.mark.parametrize("blocks, expected", [(1, {0}), (2, {1}), (3, {2}), (6, {2, 5}), (7, {2, 5})])
def test_every_third_block_pools(blocks: int, expected: set[int]) -> None:
    assert global_pool_blocks(blocks) == expected
    model = create_model(make_game("go-5x5"), NetworkSpec(blocks, 8, global_pool=True))
    assert {i for i, block in enumerate(model.trunk) if isinstance(block, GlobalPoolBlock)} == expected
    assert all(isinstance(block, ResidualBlock) for i, block in enumerate(model.trunk) if i not in expected)


def test_a_pooling_block_sees_the_whole_board_at_once() -> None:
    """One stone in a corner changes the output of a pooling block in the far corner; a plain block's 5x5
    receptive field does not reach it."""
    torch.manual_seed(0)
    x = torch.zeros(2, 16, 9, 9)
    x[1, :, 0, 0] = 3.0
    for block, reaches in ((ResidualBlock(16).eval(), False), (GlobalPoolBlock(16).eval(), True)):
        with torch.no_grad():
            out = block(x)
        assert (not torch.allclose(out[0, :, 8, 8], out[1, :, 8, 8])) is reaches


def test_the_ownership_head_is_for_training_only() -> None:
    game = make_game("go-5x5")
    model = create_model(game, PARTS, seed=1)
    x = torch.from_numpy(game.encode(game.initial_states(3)))
    with torch.no_grad():
        logits, value = model(x)
        logits_t, value_t, owner = model.forward_train(x)
    assert logits.shape == (3, game.num_actions) and value.shape == (3,) and owner.shape == (3, 25)
    assert torch.equal(logits, logits_t) and torch.equal(value, value_t)
    plain = create_model(game, NetworkSpec(4, 16, 32), seed=1)
    assert plain.forward_train(x)[2] is None


@pytest.mark.parametrize("spec", [PARTS, NetworkSpec(3, 12, global_pool=True)])
def test_the_folded_copy_computes_the_same_function(spec: NetworkSpec) -> None:
    game = make_game("go-9x9")
    model = _with_batch_norm_statistics(create_model(game, spec, seed=2), seed=2)
    folded = FoldedPolicyValueNet(model)
    x = torch.randn(16, game.num_planes, 9, 9)
    with torch.inference_mode():
        want_logits, want_values = model(x)
        logits, values = folded(x)
    np.testing.assert_allclose(logits.numpy(), want_logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values.numpy(), want_values.numpy(), rtol=1e-4, atol=1e-5)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in folded.modules())


def test_model_files_keep_the_parts(tmp_path) -> None:
    game = make_game("go-5x5")
    model = _with_batch_norm_statistics(create_model(game, PARTS, seed=4), seed=4)
    path = tmp_path / "m.pt"
    save_model(path, model, game, {"generation": 1})
    loaded = load_model(path, expected_game=game)
    assert loaded.spec == PARTS and model_file_info(path)["spec"]["ownership"] is True
    x = torch.randn(4, game.num_planes, 5, 5)
    with torch.no_grad():
        for a, b in zip(model.forward_train(x), loaded.model.forward_train(x)):
            assert torch.equal(a, b)
