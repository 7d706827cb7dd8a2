"""PolicyValueNet shapes and the per-game default sizes."""
import numpy as np
import pytest
import torch

from shared.games import make_game
from shared.network import (
    NetworkError,
    NetworkSpec,
    PolicyValueNet,
    create_model,
    default_network_spec,
)

GAMES = ["tictactoe", "connect4", "gomoku-6x6-4", "gomoku-8x8-5", "gomoku-15", "othello", "othello-6x6"]


@pytest.mark.parametrize("name", GAMES)
def test_forward_shapes_for_each_game(name):
    game = make_game(name)
    model = create_model(game, NetworkSpec(1, 8, 8), seed=0)
    states = game.initial_states(3)
    x = torch.from_numpy(game.encode(states))
    with torch.inference_mode():
        logits, value = model(x)
    assert logits.shape == (3, game.num_actions) and logits.dtype == torch.float32
    assert value.shape == (3,) and value.dtype == torch.float32
    assert torch.all(value.abs() <= 1.0)


def test_connect4_policy_head_has_seven_actions():
    game = make_game("connect4")
    model = create_model(game, seed=0)
    assert model.policy_fc.out_features == 7 == game.num_actions
    assert model.policy_fc.in_features == 2 * 6 * 7


def test_default_specs_are_what_the_pipeline_trains():
    """The pipeline's [game] blocks/channels defaults come from the one table in shared/network/spec.py."""
    from shared.config import PipelineConfig, load_config

    for name in ["tictactoe", "connect4", "gomoku-6x6-4", "gomoku-8x8-5", "gomoku-15", "othello", "othello-6x6",
                 "gomoku-10x10-5", "gomoku-19x19-5", "gomoku-5x5-4"]:
        spec = default_network_spec(name)
        cfg = load_config(PipelineConfig, name, None, {}, {})
        assert (cfg.game.blocks, cfg.game.channels, cfg.game.value_hidden) == (spec.blocks, spec.channels,
                                                                               spec.value_hidden), name
    assert (default_network_spec("gomoku-15").blocks, default_network_spec("gomoku-15").channels) == (10, 128)


def test_every_preset_game_has_a_default():
    from shared.games import GAME_NAMES
    for name in GAME_NAMES:
        assert isinstance(default_network_spec(name), NetworkSpec)


def test_bad_specs_and_names_raise_clear_errors():
    with pytest.raises(NetworkError, match="no default network"):
        default_network_spec("chess")
    with pytest.raises(NetworkError, match="channels"):
        NetworkSpec(2, 0)
    assert NetworkSpec.parse("10x128") == NetworkSpec(10, 128)
    assert NetworkSpec.parse("3x32x16") == NetworkSpec(3, 32, 16)
    with pytest.raises(NetworkError, match="BLOCKSxCHANNELS"):
        NetworkSpec.parse("big")


def test_wrong_input_shape_is_refused():
    model = PolicyValueNet(3, 6, 7, 7, blocks=1, channels=8)
    with pytest.raises(NetworkError, match=r"\[N, 3, 6, 7\]"):
        model(torch.zeros(2, 3, 7, 6))


def test_create_model_is_seeded_and_leaves_global_rng_alone():
    game = make_game("tictactoe")
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = create_model(game, seed=5)
    after = torch.rand(1)
    b = create_model(game, seed=5)
    c = create_model(game, seed=6)
    assert torch.equal(before, after)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    assert np.isfinite(a.num_parameters())
