"""The ranking backends behind one seam: ``backend="cpu"`` (Numba threads,
:func:`uefast.kernels.driver.ranking_pass`) and ``backend="cuda"`` (NVIDIA GPUs through
numba.cuda, :mod:`uefast.gpu`). A backend ranks the segments and computes every measure's value;
``cuda`` also groups unclustered rows and runs the judged pass on the GPU (``uefast.engine``
asks for them by backend name). Adding one (another accelerator) is a class with ``name``,
``unavailable_reason()``, ``rank()`` and ``rank_many()`` in :data:`BACKENDS`.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["Backend", "BACKENDS", "get_backend"]


class Backend(Protocol):
    name: str

    def unavailable_reason(self) -> str | None:
        """Why this backend cannot run here (None: it can)."""

    def rank(self, offsets, perm, has_perm, labels, scores, qref, tie_mode, docs, plan, judged,
             ioff, ideal, tabs, doc_rising, knobs) -> tuple[np.ndarray, np.ndarray]:
        """``(values [n_segments, n_measures], NaN-score counts)``."""

    def rank_many(self, offsets, perm, has_perm, labels, scores_list, qref, tie_mode, docs, plan,
                  judged, ioff, ideal, tabs, doc_rising, knobs) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`rank` of each score array of ``scores_list``: several systems on one
        grouping (a backend may overlap their transfers and kernels)."""


class CpuBackend:
    name = "cpu"

    def unavailable_reason(self) -> str | None:
        return None

    def rank(self, offsets, perm, has_perm, labels, scores, qref, tie_mode, docs, plan, judged,
             ioff, ideal, tabs, doc_rising, knobs):
        from uefast.engine import KERNEL_LOCK
        from uefast.kernels.driver import n_chunks, ranking_pass

        nseg = len(offsets) - 1
        out = np.zeros((nseg, len(plan.measures)))
        nch = n_chunks(nseg)
        nan = np.zeros(nch, np.int64)
        with KERNEL_LOCK:
            ranking_pass(offsets, perm, has_perm, labels, scores, scores.view(np.int64), qref,
                         tie_mode, docs.mode, docs.ints, docs.offsets, docs.data, plan.kinds,
                         plan.ks, plan.gtypes, plan.rels, plan.fparams, plan.norms, judged.nrel,
                         judged.idcg, ioff, ideal, tabs, nch, knobs["counting_factor"],
                         knobs["f32"], knobs["sortnet"], knobs["top_k"], doc_rising, out, nan)
        return out, nan

    def rank_many(self, offsets, perm, has_perm, labels, scores_list, *rest):
        """:meth:`rank` of each score array of ``scores_list`` (systems on one grouping)."""
        return _rank_each(self, offsets, perm, has_perm, labels, scores_list, *rest)


class CudaBackend:
    name = "cuda"

    def unavailable_reason(self) -> str | None:
        from uefast.gpu import cuda_unavailable_reason

        return cuda_unavailable_reason()

    def rank(self, offsets, perm, has_perm, labels, scores, qref, tie_mode, docs, plan, judged,
             ioff, ideal, tabs, doc_rising, knobs):
        from uefast.gpu import rank_values_cuda

        return rank_values_cuda(
            offsets, perm, has_perm, labels, scores, qref, tie_mode, docs.mode, docs.ints,
            docs.offsets, docs.data, (plan.kinds, plan.ks, plan.gtypes, plan.rels, plan.fparams,
                                      plan.norms), judged.nrel, judged.idcg, ioff, ideal, tabs)

    def rank_many(self, offsets, perm, has_perm, labels, scores_list, qref, tie_mode, docs, plan,
                  judged, ioff, ideal, tabs, doc_rising, knobs):
        """:meth:`rank` of each score array, the systems pipelined on the GPU
        (:func:`uefast.gpu.ranking.rank_systems_cuda`)."""
        from uefast.gpu.ranking import rank_systems_cuda

        return rank_systems_cuda(
            offsets, perm, has_perm, labels, scores_list, qref, tie_mode, docs.mode, docs.ints,
            docs.offsets, docs.data, (plan.kinds, plan.ks, plan.gtypes, plan.rels, plan.fparams,
                                      plan.norms), judged.nrel, judged.idcg, ioff, ideal, tabs)


def _rank_each(backend, offsets, perm, has_perm, labels, scores_list, *rest):
    return [backend.rank(offsets, perm, has_perm, labels, sc, *rest) for sc in scores_list]


BACKENDS: dict[str, Backend] = {"cpu": CpuBackend(), "cuda": CudaBackend()}


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (:class:`~uefast.errors.InputError` naming the known ones)."""
    from uefast.errors import InputError

    if name not in BACKENDS:
        raise InputError(f"`backend` must be one of {list(BACKENDS)}, got {name!r}")
    return BACKENDS[name]
