"""Keep freed heap memory in the process, so that each forward pass does not page-fault its buffers in again.

Why: a CPU forward pass allocates its activation buffers (hundreds of KB to a few MB each) and frees them at
the end. With glibc's default malloc settings the freed space at the top of the heap is given back to the
kernel once it passes the trim threshold (which follows the largest buffer freed so far), and the next pass
faults the same pages in again, zero-filled, one 4 KB page at a time. Between two passes the search's own numpy
temporaries make this worse. Measured on the development VM (BENCHMARKS.md, "Freed memory kept in the process"):
the gomoku-8x8-5 2x48 self-play rate at 400 simulations rose by 19-38% (fp32, bf16, auto) with the settings below.

`retain_freed_memory()` sets glibc's mmap threshold to its largest accepted value (32 MiB: smaller blocks come
from the heap) and the trim threshold to 256 MiB (up to that much freed space stays mapped), once per process.
The cost is resident memory: a process keeps up to 256 MiB of freed heap instead of returning it. Where the user
set glibc's own malloc tunables (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_, or a
glibc.malloc.* entry of GLIBC_TUNABLES) those are left to rule; on a C library other than glibc nothing is done.
So `GLIBC_TUNABLES=glibc.malloc.check=0` (glibc's default, a no-op) runs a process with glibc's own settings, as
the before/after measurement did.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from collections.abc import Mapping

#: glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 256 << 20
_USER_TUNABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_applied: bool | None = None


def user_malloc_tunables(environ: Mapping[str, str]) -> bool:
    """Whether `environ` sets any of glibc's malloc tunables (then the user's settings rule)."""
    return any(name in environ for name in _USER_TUNABLES) or "glibc.malloc." in environ.get("GLIBC_TUNABLES", "")


def retain_freed_memory() -> bool:
    """Apply the malloc settings of the module docstring to this process (idempotent).

    Returns True when they are in force (now or from an earlier call), False when they were not applied: not
    glibc, mallopt refused, or the user's own malloc tunables are set in the environment.
    """
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if platform.libc_ver()[0] != "glibc" or user_malloc_tunables(os.environ):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # mmap threshold first: setting either one switches off glibc's sliding thresholds, and a trim threshold
    # with the default 128 KiB mmap threshold alone would send every activation buffer to mmap (slower).
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) != 1:
        return False
    _applied = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    return _applied


__all__ = ["MMAP_THRESHOLD_BYTES", "TRIM_THRESHOLD_BYTES", "retain_freed_memory", "user_malloc_tunables"]
