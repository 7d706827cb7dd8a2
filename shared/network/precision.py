"""Network precision choice: `auto | fp32 | bf16` -> the precision an evaluator runs at.

    resolve_precision("auto", device, model, batch) -> "bf16" | "fp32"

auto: bf16 on CUDA; on CPU bf16 only when the CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16, see
`cpu_native_bf16`) AND a short measurement at the search's batch (rounded up to a power-of-two bucket) shows
the bf16 forward pass faster than fp32 (by BF16_MIN_SPEEDUP; measured at up to 256 positions: one warm-up
and one timed forward pass per precision, more rounds only within a second); fp32 otherwise. The decision is cached in the process per (device type,
model architecture, batch bucket), so a worker measures once per network size and batch bucket.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from shared.network.folded import bf16_copy
from shared.network.spec import NetworkError

PRECISIONS = ("auto", "fp32", "bf16")
#: cpuinfo flags that mean native bf16 arithmetic (dot products) on x86
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
#: bf16 must be at least this much faster than fp32 in the measurement to be chosen (noise margin)
BF16_MIN_SPEEDUP = 1.10

_DECISIONS: dict[tuple, str] = {}
_LOCK = threading.Lock()


def check_precision(precision: str) -> str:
    """`precision` if it is one of auto, fp32, bf16; NetworkError otherwise."""
    if precision not in PRECISIONS:
        raise NetworkError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return precision


def _cpuinfo_flags(path: str = "/proc/cpuinfo") -> set[str]:
    """The CPU feature flags listed in /proc/cpuinfo (empty when it cannot be read, e.g. not Linux)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return set()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
            break
    return flags


def cpu_native_bf16(capability: str | None = None, flags: set[str] | None = None) -> bool:
    """True when this CPU computes bf16 natively (AMX or AVX512-BF16).

    capability: torch.backends.cpu.get_cpu_capability() (e.g. "AVX512", "AVX2", "AMX" not reported by all
    builds); flags: the /proc/cpuinfo flags. None -> read them. Either an AMX capability or one of the
    NATIVE_BF16_FLAGS is enough.
    """
    if capability is None:
        try:
            capability = torch.backends.cpu.get_cpu_capability()
        except Exception:  # older torch builds: no such function
            capability = ""
    if "AMX" in capability.upper():
        return True
    if flags is None:
        flags = _cpuinfo_flags()
    return bool(NATIVE_BF16_FLAGS & set(flags))


def batch_bucket(batch: int) -> int:
    """The smallest power of two >= batch (>= 1): the batch sizes a decision is cached for."""
    size = 1
    while size < max(1, batch):
        size *= 2
    return size


def architecture_key(model: torch.nn.Module) -> tuple:
    """What a network's speed depends on: class, input geometry, actions and its NetworkSpec."""
    spec = getattr(model, "spec", None)
    geometry = tuple(getattr(model, name, None) for name in ("num_planes", "height", "width", "num_actions"))
    return (type(model).__name__, geometry, tuple(sorted(spec.to_dict().items())) if spec is not None else None,
            sum(p.numel() for p in model.parameters()))


#: the measurement's batch is capped here (per-position CPU cost is flat beyond it) to keep it short
MEASURE_MAX_BATCH = 256


@torch.inference_mode()
def measure_precisions(model: torch.nn.Module, planes_shape: tuple[int, int, int, int], repeats: int = 3,
                       memory_format: torch.memory_format = torch.channels_last,
                       budget_s: float = 1.0) -> dict[str, float]:
    """Seconds per forward pass of `model` (on CPU) at fp32 and in bf16: {"fp32": s, "bf16": s}. The bf16 pass is
    the one CPU evaluators run: a copy of the model with bf16 weights (`shared.network.folded.bf16_copy`) on the
    inputs cast to bf16.

    planes_shape: (batch, C, H, W) of float32 zero-mean random inputs (batch capped at MEASURE_MAX_BATCH).
    One warm-up each, then up to `repeats` alternating timed rounds (at least one; no new round once
    `budget_s` seconds are spent); the minimum per precision is reported (robust to other processes).
    """
    shape = (min(planes_shape[0], MEASURE_MAX_BATCH), *planes_shape[1:])
    inputs = torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    inputs = inputs.contiguous(memory_format=memory_format)
    passes = {"fp32": model, "bf16": bf16_copy(model)}
    best = {"fp32": float("inf"), "bf16": float("inf")}
    began = time.perf_counter()
    for round_ in range(repeats + 1):
        if round_ > 1 and time.perf_counter() - began > budget_s:
            break
        for name in ("fp32", "bf16"):
            start = time.perf_counter()
            passes[name](inputs.to(torch.bfloat16) if name == "bf16" else inputs)
            if round_ > 0:  # round 0 is the warm-up (oneDNN primitive creation)
                best[name] = min(best[name], time.perf_counter() - start)
    return best


def resolve_precision(precision: str, device: str | torch.device, model: torch.nn.Module, batch: int,
                      native_bf16: Callable[[], bool] = cpu_native_bf16,
                      measure: Callable[..., dict[str, float]] = measure_precisions) -> str:
    """The precision ("fp32" or "bf16") to run `model` at on `device` for forward batches of about `batch`.

    fp32 / bf16 are returned as given; auto is decided as in the module docstring and cached per (device type,
    architecture_key(model), batch_bucket(batch)). native_bf16 and measure are injectable for tests.
    """
    check_precision(precision)
    if precision != "auto":
        return precision
    kind = torch.device(device).type
    if kind == "cuda":
        return "bf16"
    if kind != "cpu":
        return "fp32"
    key = (kind, architecture_key(model), batch_bucket(batch))
    with _LOCK:
        if key in _DECISIONS:
            return _DECISIONS[key]
        decision = "fp32"
        if native_bf16():
            shape = (batch_bucket(batch), model.num_planes, model.height, model.width)
            seconds = measure(model, shape)
            if seconds["bf16"] * BF16_MIN_SPEEDUP < seconds["fp32"]:
                decision = "bf16"
        _DECISIONS[key] = decision
        return decision


def clear_precision_cache() -> None:
    """Forget every cached auto decision (tests)."""
    with _LOCK:
        _DECISIONS.clear()


__all__ = ["BF16_MIN_SPEEDUP", "MEASURE_MAX_BATCH", "PRECISIONS", "architecture_key", "batch_bucket", "check_precision",
           "clear_precision_cache", "cpu_native_bf16", "measure_precisions", "resolve_precision"]
