"""Network precision choice: `auto | fp32 | bf16` -> the precision an evaluator runs at.

    resolve_precision("auto", device, model, batch) -> "bf16" | "fp32"

auto: bf16 on CUDA; on CPU bf16 only when the CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16, see
`cpu_native_bf16`), the network is at least BF16_MIN_CHANNELS wide and the batch (rounded up to a power-of-two
bucket) is at least BF16_MIN_BATCH positions; fp32 otherwise. The rule stands for the measurement it replaces
(BENCHMARKS.md, "Precision"): there the bf16 pass was 1.1-2.7x faster than fp32, outside it 0.5-1.06x. A rule
and not a timing, so every worker on CPUs with the same flags makes the same choice for the same network and batch,
and a self-play job plays the same games whichever worker runs it (a timing under load picked bf16 now and then).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from shared.network.spec import NetworkError

PRECISIONS = ("auto", "fp32", "bf16")
#: cpuinfo flags that mean native bf16 arithmetic (dot products) on x86
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
#: auto on a CPU with native bf16: the narrowest network and the smallest batch bucket that run in bf16
BF16_MIN_CHANNELS = 48
BF16_MIN_BATCH = 4


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


def _channels(model: torch.nn.Module) -> int:
    """The width of `model`'s residual tower (its NetworkSpec's channels; 0 when it has none)."""
    spec = getattr(model, "spec", None)
    return int(getattr(spec, "channels", 0) or 0)


def resolve_precision(precision: str, device: str | torch.device, model: torch.nn.Module, batch: int,
                      native_bf16: Callable[[], bool] = cpu_native_bf16) -> str:
    """The precision ("fp32" or "bf16") to run `model` at on `device` for forward batches of about `batch`.

    fp32 / bf16 are returned as given; auto is decided by the module docstring's rule (native_bf16 is injectable
    for tests; it is asked only for wide networks at large enough batches)."""
    check_precision(precision)
    if precision != "auto":
        return precision
    kind = torch.device(device).type
    if kind == "cuda":
        return "bf16"
    if kind != "cpu" or _channels(model) < BF16_MIN_CHANNELS or batch_bucket(batch) < BF16_MIN_BATCH:
        return "fp32"
    return "bf16" if native_bf16() else "fp32"


__all__ = ["BF16_MIN_BATCH", "BF16_MIN_CHANNELS", "PRECISIONS", "batch_bucket", "check_precision", "cpu_native_bf16",
           "resolve_precision"]
