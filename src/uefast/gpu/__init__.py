"""Optional NVIDIA GPU backend: ``evaluate(..., backend="cuda")``.

The ranking pass -- sort every (system, query) segment by score with the tie policy, then every
requested measure -- runs on the GPU, one thread per segment, through ``numba-cuda`` (install the
``gpu`` extra). The kernel calls the very ``@njit`` routines the CPU engine uses
(:mod:`uefast.kernels.segment`: the quicksort and tie ordering of
:mod:`uefast.kernels.ordering`, the measures of :mod:`uefast.kernels.metrics`), compiled for the
GPU by Numba, so both backends share one definition of every measure. Grouping, the judged pass
(IUB, REB, Np, IDCG) and the UE scores stay on the CPU: they do not depend on the systems' scores.

Nothing here imports ``numba.cuda`` until the backend is used. With the environment variable
``UEFAST_CUDA_EMULATE=1`` the backend runs the same per-segment body on the CPU (through the same
host code and array layout), which is how the test suite checks it on machines without a GPU.
"""
from __future__ import annotations

from uefast.gpu.ranking import EMULATE_ENV, cuda_available, cuda_unavailable_reason, rank_values_cuda

__all__ = ["EMULATE_ENV", "cuda_available", "cuda_unavailable_reason", "rank_values_cuda"]
