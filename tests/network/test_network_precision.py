"""Precision choice (auto | fp32 | bf16): capability detection and auto's rule (network width, batch bucket)."""
import numpy as np
import pytest

from shared.games import make_game
from shared.network import NetworkError, NetworkSpec, TorchEvaluator, create_model
from shared.network import precision as prec


def _model(blocks=1, channels=8):
    game = make_game("tictactoe")
    return game, create_model(game, NetworkSpec(blocks, channels, 8), seed=0)


def test_native_bf16_detection_from_capability_and_flags():
    assert prec.cpu_native_bf16(capability="AMX", flags=set())
    assert prec.cpu_native_bf16(capability="AVX512", flags={"avx512f", "avx512_bf16"})
    assert prec.cpu_native_bf16(capability="AVX2", flags={"amx_bf16"})
    assert not prec.cpu_native_bf16(capability="AVX512", flags={"avx512f", "avx2"})
    assert not prec.cpu_native_bf16(capability="DEFAULT", flags=set())


def _never(*_args, **_kwargs):
    raise AssertionError("must not ask the CPU")


def test_explicit_precisions_and_cuda_need_no_cpu_check():
    _, model = _model(channels=64)
    assert prec.resolve_precision("fp32", "cpu", model, 64, native_bf16=_never) == "fp32"
    assert prec.resolve_precision("bf16", "cpu", model, 64, native_bf16=_never) == "bf16"
    assert prec.resolve_precision("auto", "cuda:0", model, 64, native_bf16=_never) == "bf16"
    with pytest.raises(NetworkError, match="precision"):
        prec.resolve_precision("fp16", "cpu", model, 64)


def test_auto_on_a_cpu_with_native_bf16_runs_wide_networks_at_batches_of_4_or_more_in_bf16():
    _, narrow = _model(channels=32)
    _, wide = _model(channels=prec.BF16_MIN_CHANNELS)

    def decide(model, batch):
        return prec.resolve_precision("auto", "cpu", model, batch, native_bf16=lambda: True)

    assert [decide(wide, b) for b in (1, 2, 3, 4, 64, 1000)] == ["fp32", "fp32", "bf16", "bf16", "bf16", "bf16"]
    assert [prec.resolve_precision("auto", "cpu", narrow, b, native_bf16=_never) for b in (1, 4, 1000)] == ["fp32"] * 3
    assert prec.resolve_precision("auto", "cpu", wide, 64, native_bf16=lambda: False) == "fp32"
    folded = TorchEvaluator(wide, make_game("tictactoe"), precision="auto").inference_model
    assert decide(folded, 64) == "bf16"                   # the folded copy keeps the spec it is decided on


def test_auto_is_the_same_decision_every_time():
    """No timing: the same network and batch give the same precision in every process, so a self-play job plays
    the same games whichever worker runs it."""
    _, wide = _model(channels=64)
    decisions = {prec.resolve_precision("auto", "cpu", wide, batch, native_bf16=lambda: True)
                 for batch in (16, 17, 31, 32) for _ in range(20)}
    assert decisions == {"bf16"}


def test_evaluator_auto_decides_per_bucket(monkeypatch):
    game, model = _model()
    decided = []

    def fake_resolve(precision, device, m, batch):
        decided.append(batch)
        return "bf16" if batch >= 8 else "fp32"

    monkeypatch.setattr("shared.network.evaluator.resolve_precision", fake_resolve)
    evaluator = TorchEvaluator(model, game, precision="auto")
    states = game.initial_states(10)
    evaluator(states[:3])
    assert evaluator.use_bf16 is False
    evaluator(states)
    assert evaluator.use_bf16 is True
    evaluator(states[:4])
    evaluator(states[:9])
    assert decided == [4, 16]  # one decision per bucket
    logits, values = evaluator(states)
    assert logits.dtype == np.float32 and values.shape == (10,)


def test_evaluator_precision_overrides_use_bf16():
    game, model = _model()
    assert TorchEvaluator(model, game, use_bf16=True, precision="fp32").bf16_at(64) is False
    assert TorchEvaluator(model, game, precision="bf16").bf16_at(1) is True
    assert TorchEvaluator(model, game).precision == "fp32"
    with pytest.raises(NetworkError):
        TorchEvaluator(model, game, precision="half")
