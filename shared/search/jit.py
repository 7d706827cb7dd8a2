"""The one place that configures numba for the search kernels.

Kernels are compiled on first use and cached on disk (`cache=True`), so only the first process after an
install or a code change pays the compile time (a few seconds for all search kernels together).
Kernels keep float32 arithmetic float32 (`f32(...)` on every constant) so that they reproduce the numpy
formulas bit for bit; `fastmath` stays off for the same reason (no reassociation, no fused multiply-add).
"""
from __future__ import annotations

import numba
import numpy as np

#: Decorator for the search kernels: nopython, cached on disk, releases the GIL.
kernel = numba.njit(cache=True, nogil=True)

f32 = np.float32
