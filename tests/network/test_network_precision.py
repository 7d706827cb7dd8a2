"""Precision choice (auto | fp32 | bf16): capability detection, the measured decision and its cache."""
import numpy as np
import pytest

from shared.games import make_game
from shared.network import NetworkError, NetworkSpec, TorchEvaluator, create_model
from shared.network import precision as prec


@pytest.fixture(autouse=True)
def _fresh_cache():
    prec.clear_precision_cache()
    yield
    prec.clear_precision_cache()


def _model(blocks=1, channels=8):
    game = make_game("tictactoe")
    return game, create_model(game, NetworkSpec(blocks, channels, 8), seed=0)


def test_native_bf16_detection_from_capability_and_flags():
    assert prec.cpu_native_bf16(capability="AMX", flags=set())
    assert prec.cpu_native_bf16(capability="AVX512", flags={"avx512f", "avx512_bf16"})
    assert prec.cpu_native_bf16(capability="AVX2", flags={"amx_bf16"})
    assert not prec.cpu_native_bf16(capability="AVX512", flags={"avx512f", "avx2"})
    assert not prec.cpu_native_bf16(capability="DEFAULT", flags=set())


def test_explicit_precisions_and_cuda_need_no_measurement():
    _, model = _model()

    def never(*_args, **_kwargs):
        raise AssertionError("must not measure")

    assert prec.resolve_precision("fp32", "cpu", model, 64, native_bf16=never, measure=never) == "fp32"
    assert prec.resolve_precision("bf16", "cpu", model, 64, native_bf16=never, measure=never) == "bf16"
    assert prec.resolve_precision("auto", "cuda:0", model, 64, native_bf16=never, measure=never) == "bf16"
    with pytest.raises(NetworkError, match="precision"):
        prec.resolve_precision("fp16", "cpu", model, 64)


def test_auto_on_cpu_without_native_bf16_is_fp32_unmeasured():
    _, model = _model()

    def never(*_args, **_kwargs):
        raise AssertionError("must not measure")

    assert prec.resolve_precision("auto", "cpu", model, 64, native_bf16=lambda: False, measure=never) == "fp32"


def test_auto_on_cpu_follows_the_measurement_and_caches_per_architecture_and_bucket():
    _, model = _model()
    _, other = _model(blocks=2)
    calls = []

    def measure(m, shape):
        calls.append(shape)
        fast = shape[0] >= 64       # pretend bf16 wins at large batches only
        return {"fp32": 1.0, "bf16": 0.5 if fast else 0.95}

    def decide(m, batch):
        return prec.resolve_precision("auto", "cpu", m, batch, native_bf16=lambda: True, measure=measure)

    assert decide(model, 100) == "bf16"            # bucket 128
    assert calls == [(128, model.num_planes, 3, 3)]
    assert decide(model, 65) == "bf16" and len(calls) == 1   # same bucket: cached
    assert decide(model, 8) == "fp32"              # 0.95 s is not 10% faster than 1.0 s
    assert decide(other, 100) == "bf16" and len(calls) == 3  # another architecture is measured again
    assert decide(model, 8) == "fp32" and len(calls) == 3


def test_measure_precisions_times_both():
    _, model = _model()
    seconds = prec.measure_precisions(model.eval(), (4, model.num_planes, 3, 3), repeats=1)
    assert set(seconds) == {"fp32", "bf16"} and all(np.isfinite(v) and v > 0 for v in seconds.values())


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


def test_measurement_is_capped_in_batch_and_time():
    _, model = _model()
    seen = []
    model.register_forward_pre_hook(lambda module, args: seen.append(args[0].shape[0]))  # copied with the module
    prec.measure_precisions(model.eval(), (4096, model.num_planes, 3, 3), repeats=50, budget_s=0.0)
    assert set(seen) == {prec.MEASURE_MAX_BATCH}
    assert len(seen) == 4   # warm-up round and one timed round, two precisions each
