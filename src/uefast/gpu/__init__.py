"""Optional NVIDIA GPU backend: ``evaluate(..., backend="cuda")`` (or ``"auto"``), and
:func:`evaluate_device` for columns already in GPU memory.

The ranking pass -- every (system, query) segment ranked with the tie policy, then every
requested measure -- runs on the GPU through ``numba-cuda`` (install the ``gpu`` extra). The
default kernel ranks by counting (:mod:`uefast.gpu.counting`: one thread block per segment, one
launch for all of them; only documents with a positive label get a position); the older sort
kernels (:mod:`uefast.gpu.ranking`, ``UEFAST_CUDA_KERNEL=sort``) remain for comparison and take
the segments too costly to count. Every measure is the CPU engine's own ``@njit`` routine
(:func:`uefast.kernels.segment.segment_measure`) compiled for the GPU by Numba, so both backends
share one definition of every measure. With ``backend="cuda"`` the judged pass (IUB, REB, Np,
IDCG, label histograms: :mod:`uefast.gpu.judged`) and the grouping of unclustered rows (a stable
radix sort: :mod:`uefast.gpu.grouping`) run on the GPU too, and several score columns go through
one pipeline that overlaps each system's upload with the previous system's kernel
(:mod:`uefast.gpu.pipeline`); the UE scores and the output table stay on the CPU there.
:mod:`uefast.gpu.device_input`: CuPy / cuDF / ``__cuda_array_interface__`` / DLPack columns
evaluated without a host round trip, the UE scores and the output's numeric columns computed
on the device too (:mod:`uefast.gpu.output`, one copy back); Dask-cuDF frames joined on the
device (:mod:`uefast.gpu.partitions`). :mod:`uefast.gpu.resample`: the paired bootstrap and
randomisation resamples on the GPU with the CPU's random streams; :mod:`uefast.gpu.tukey`: the
randomised Tukey HSD null and its exceedance counts, likewise (``uefast.stats.tukey_hsd`` /
``all_pairs`` with ``backend="cuda"``). :mod:`uefast.gpu.memory`:
device memory through CuPy when installed, and ``backend="auto"``.

Nothing here imports ``numba.cuda`` or CuPy until the backend is used. With the environment
variable ``UEFAST_CUDA_EMULATE=1`` the backend runs the kernels' per-thread steps on the CPU
(through the same host code and array layout), which is how the test suite checks it on machines
without a GPU; the kernels themselves also run in numba's CUDA simulator in the tests.
"""
from __future__ import annotations

from uefast.gpu.ranking import (
    EMULATE_ENV,
    KERNEL_ENV,
    cuda_available,
    cuda_unavailable_reason,
    kernel_choice,
    rank_values_cuda,
)

__all__ = ["EMULATE_ENV", "KERNEL_ENV", "cuda_available", "cuda_unavailable_reason",
           "evaluate_device", "kernel_choice", "rank_values_cuda"]


def evaluate_device(frame, measures=("nDCG@10", "AP"), **kwargs):
    """:func:`uefast.gpu.device_input.evaluate_device` (columns already in GPU memory)."""
    from uefast.gpu.device_input import evaluate_device as _evaluate_device

    return _evaluate_device(frame, measures, **kwargs)
