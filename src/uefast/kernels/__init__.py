"""Numba kernels: per-metric scalar routines (:mod:`.metrics`; ERR's in :mod:`.err`), segment
ordering with tie policies (:mod:`.ordering`), grouping by query (:mod:`.grouping`) and the
parallel driver (:mod:`.driver`).

Compile-time note (benchmarks/RESULTS_startup.md): the kernels of the first commands copy arrays
with explicit loops, never by slice assignment from an array (``a[i:j] = b[k:l]``). Numba types
such an assignment with a shape check whose error message is formatted in compiled code
(``numba.np.arrayobj.raise_with_shape_context``: ``str``/``repr`` of integers, string
concatenation), which costs ~1.7 s of CPU once per process on a cold cache; a loop compiles to
the same copy. Assigning a scalar to a slice (``a[i:j] = 0``) is fine.
"""
