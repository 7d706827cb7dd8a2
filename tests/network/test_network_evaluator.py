"""TorchEvaluator: shapes, dtypes, value range, chunking, agreement with the raw model."""
import numpy as np
import pytest
import torch

from shared.games import make_game
from shared.network import NetworkError, NetworkSpec, TorchEvaluator, configure_torch_threads, create_model


def _random_positions(game, count, seed):
    """count non-terminal positions reached by a few random legal moves: [count, S] int16."""
    rng = np.random.default_rng(seed)
    states = game.initial_states(count)
    for _ in range(4):
        mask = game.legal_mask(states)
        live = np.flatnonzero(mask.any(axis=1))
        actions = np.array([rng.choice(np.flatnonzero(mask[i])) for i in live])
        stepped = game.step(states[live], actions)
        keep = ~game.is_terminal(stepped)
        states[live[keep]] = stepped[keep]
    return states


@pytest.mark.parametrize("name", ["tictactoe", "connect4", "othello-6x6"])
def test_outputs_shapes_dtypes_and_range(name):
    game = make_game(name)
    evaluator = TorchEvaluator(create_model(game, NetworkSpec(1, 16, 16), seed=1), game)
    assert evaluator.use_bf16 is False
    states = _random_positions(game, 10, seed=0)
    logits, values = evaluator(states)
    assert isinstance(logits, np.ndarray) and logits.shape == (10, game.num_actions) and logits.dtype == np.float32
    assert isinstance(values, np.ndarray) and values.shape == (10,) and values.dtype == np.float32
    assert np.all(np.abs(values) <= 1.0) and np.all(np.isfinite(logits))


def test_matches_model_and_chunking_is_transparent():
    game = make_game("connect4")
    model = create_model(game, NetworkSpec(2, 16, 16), seed=2)
    states = _random_positions(game, 13, seed=1)
    whole = TorchEvaluator(model, game)(states)
    chunked = TorchEvaluator(model, game, max_batch=4)(states)
    with torch.inference_mode():
        logits, values = model(torch.from_numpy(game.encode(states)))
    np.testing.assert_allclose(whole[0], logits.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(whole[1], values.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(chunked[0], whole[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(chunked[1], whole[1], rtol=1e-4, atol=1e-5)


def test_bf16_on_cpu_is_close_to_float32():
    game = make_game("tictactoe")
    model = create_model(game, NetworkSpec(1, 16, 16), seed=3)
    states = _random_positions(game, 6, seed=2)
    exact = TorchEvaluator(model, game)(states)
    approx = TorchEvaluator(model, game, use_bf16=True)(states)
    assert approx[0].dtype == np.float32
    np.testing.assert_allclose(approx[1], exact[1], atol=0.1)


def test_bad_input_and_mismatched_game_raise():
    game = make_game("tictactoe")
    evaluator = TorchEvaluator(create_model(game, NetworkSpec(1, 8, 8), seed=0), game)
    with pytest.raises(NetworkError, match=r"\[M, 15\]"):
        evaluator(np.zeros((2, 14), dtype=np.int16))
    with pytest.raises(NetworkError, match="does not fit game"):
        TorchEvaluator(create_model(game, NetworkSpec(1, 8, 8), seed=0), make_game("connect4"))
    with pytest.raises(NetworkError, match="CUDA"):
        TorchEvaluator(create_model(game, NetworkSpec(1, 8, 8), seed=0), game, use_cuda_graphs=True)


def test_configure_torch_threads():
    before = torch.get_num_threads()
    try:
        configure_torch_threads(1)
        assert torch.get_num_threads() == 1
        with pytest.raises(NetworkError):
            configure_torch_threads(0)
    finally:
        torch.set_num_threads(before)
