"""The one place that configures numba for the games' compiled rules (line checks, move outcomes, playouts).

`borrowing_jit`: nopython, cached on disk, releases the GIL, and without numba's reference-counted runtime (NRT),
like `shared.search.jit.borrowing_kernel` for the search. These kernels and their helpers take arrays (boards,
rows, scratch) at every call; with the runtime each of those arguments costs an atomic reference-count update on
entry and exit, more than the work of a small helper (BENCHMARKS.md, "Search kernels without reference
counting"). Such a function cannot make or return an array: its Python wrapper passes every buffer in.
"""
from __future__ import annotations

import numba

#: Decorator for the games' compiled kernels and helpers that allocate nothing (module docstring).
borrowing_jit = numba.njit(cache=True, nogil=True, _nrt=False)
