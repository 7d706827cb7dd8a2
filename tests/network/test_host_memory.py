"""Freed memory kept in the process (shared.network.host_memory): glibc's malloc settings, checked in fresh
processes (the settings are process-wide and cannot be undone) through mallinfo2's count of mmapped blocks."""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

from shared.network.host_memory import user_malloc_tunables

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")

# Allocates 4 MiB with malloc and prints "<applied> <mmapped blocks while it is held>". glibc's default sends a
# block of that size to its own mmap (1 block); under retain_freed_memory it comes from the heap (0 blocks).
_PROBE = textwrap.dedent("""
    import ctypes, sys
    {setup}
    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]
    libc = ctypes.CDLL("libc.so.6")
    if not hasattr(libc, "mallinfo2"):
        print("no-mallinfo2"); sys.exit(0)
    libc.mallinfo2.restype = MallInfo2
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    before = libc.mallinfo2().hblks
    block = libc.malloc(4 << 20)
    held = libc.mallinfo2().hblks - before
    libc.free(block)
    print(applied, held)
""")


def _probe(setup: str, env_extra: dict[str, str] | None = None) -> list[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("MALLOC_") and key != "GLIBC_TUNABLES"}
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", _PROBE.format(setup=setup)], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    if out == ["no-mallinfo2"]:
        pytest.skip("this glibc has no mallinfo2")
    return out


def test_glibc_defaults_send_a_large_block_to_mmap():
    assert _probe("applied = None") == ["None", "1"]


def test_retain_freed_memory_serves_large_blocks_from_the_heap():
    setup = "from shared.network.host_memory import retain_freed_memory; applied = retain_freed_memory()"
    assert _probe(setup) == ["True", "0"]


def test_the_users_malloc_tunables_rule():
    setup = "from shared.network.host_memory import retain_freed_memory; applied = retain_freed_memory()"
    assert _probe(setup, {"GLIBC_TUNABLES": "glibc.malloc.check=0"}) == ["False", "1"]


def test_a_cpu_evaluator_applies_it():
    setup = textwrap.dedent("""
        from shared.games import make_game
        from shared.network import NetworkSpec, TorchEvaluator, create_model
        from shared.network import host_memory
        game = make_game("tictactoe")
        TorchEvaluator(create_model(game, NetworkSpec(1, 8, 8), seed=0), game)
        applied = host_memory._applied          # what the evaluator's own call left (None: never called)
    """)
    assert _probe(setup) == ["True", "0"]


def test_which_environments_count_as_the_users_malloc_tunables():
    assert not user_malloc_tunables({})
    assert not user_malloc_tunables({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"})
    assert user_malloc_tunables({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2:glibc.malloc.trim_threshold=0"})
    assert user_malloc_tunables({"MALLOC_TRIM_THRESHOLD_": "0"})
    assert user_malloc_tunables({"MALLOC_MMAP_THRESHOLD_": "131072"})
