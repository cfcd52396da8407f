"""Numba kernels: per-metric scalar routines (:mod:`.metrics`), segment ordering with tie policies
(:mod:`.ordering`), grouping by query (:mod:`.grouping`) and the parallel driver (:mod:`.driver`)."""
