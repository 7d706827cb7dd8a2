"""The one place that configures numba for the search kernels.

Kernels are compiled on first use and cached on disk (`cache=True`), so only the first process after an
install or a code change pays the compile time (a few seconds for all search kernels together).
Kernels keep float32 arithmetic float32 (`f32(...)` on every constant) so that they reproduce the numpy
formulas bit for bit; `fastmath` stays off for the same reason (no reassociation, no fused multiply-add).
`error_model="numpy"`: float division by zero gives inf/nan instead of raising (no check in the hot loops).

`prefetch_line` is an intrinsic (compiled into the kernel that uses it, like an instruction): a hint to start
loading a cache line that a later pass will read or write.

Rule: a kernel calls only kernels and helpers of its OWN module. numba's on-disk cache is invalidated when the
kernel's own source file changes, not when a function it inlined from another file does, so cross-module
calls could run stale code after an edit.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

#: Decorator for the search kernels: nopython, cached on disk, releases the GIL.
kernel = numba.njit(cache=True, nogil=True, error_model="numpy")
#: Decorator for hot kernels that allocate nothing: compiled without numba's reference-counted runtime (NRT), so
#: inlining a helper that takes arrays costs nothing. With the runtime, every array argument of an inlined helper
#: is incref'ed on entry and decref'ed on exit (one call to an atomic counter update each), on every call: in the
#: descent that was 12 or more such calls per node visited, more time than the descent's own work (measured, see
#: BENCHMARKS.md). Such a kernel cannot create arrays (np.empty and the like fail to compile) nor return them:
#: its wrapper passes every buffer in, and views and record views of the arguments stay free. The games' rules
#: use the same setting (shared.games.compiled.borrowing_jit).
borrowing_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
#: Decorator for recursive kernels: not cached on disk (numba segfaults when it loads a cached self-recursive
#: function), so each process compiles them on first use; without the reference-counted runtime, like
#: `borrowing_kernel` (each recursive call would otherwise incref and decref every array it is passed).
recursive_kernel = numba.njit(cache=False, nogil=True, error_model="numpy", _nrt=False)
#: Decorator for small helpers called from kernels: inlined into the caller (no call with a dozen array arguments).
inline = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")

f32 = np.float32



@intrinsic
def prefetch_line(typingctx, array, byte_offset):
    """Ask the processor to start loading the cache line at `array`'s data + byte_offset (int64) into its caches;
    returns at once (a hint: no fault, no result)."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.gep(builder.bitcast(data, ir.IntType(8).as_pointer()), [args[1]])
        i32 = ir.IntType(32)
        # llvm.prefetch(address, read = 0, locality = 3: keep in every cache level, data = 1); typed or opaque pointer
        name = "llvm.prefetch.p0" if getattr(address.type, "is_opaque", False) else "llvm.prefetch.p0i8"
        hint = cgutils.get_or_insert_function(builder.module,
                                              ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]), name)
        builder.call(hint, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(array, types.int64), codegen
