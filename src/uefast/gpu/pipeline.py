"""Several systems on one grouping, copies overlapped with kernels (numba-cuda streams).

Every system ranked on one grouping shares everything the counting kernel reads except the
score keys: the segment offsets, tie-break keys, labels, the judged pass's Np / IDCG / ideal
rankings, the scratch arrays. :func:`rank_systems_counting` uploads those once, then runs a
two-slot pipeline over the systems:

    host    : keys(s) -> pinned stage[s % 2]          (waits until copy s-2 has left the stage)
    copy    : stage[s % 2] -> device keys[s % 2]      (waits until kernel s-2 has read them)
    compute : kernel(s) on keys[s % 2] -> out[s % 2] -> pinned values(s)   (waits for copy s)

so system s+1's host-to-device copy (copy stream) runs while system s's kernel runs (compute
stream), and system s+2's keys are computed on the host meanwhile. Events order the streams;
only the two key buffers and two output buffers exist on the device, whatever the number of
systems.

The same code runs three ways through a small device interface: :class:`_NumbaDevice` (a GPU, or
numba's CUDA simulator, whose streams and events are synchronous stand-ins: the simulator checks
the values, not the overlap), and :class:`_HostDevice` (``UEFAST_CUDA_EMULATE=1``: host arrays,
the kernel's per-thread steps on the CPU). Segments too costly to count go to the sort kernel
afterwards, per system, as in :func:`uefast.gpu.counting.rank_values_counting`.
"""
from __future__ import annotations

import numpy as np

from uefast.gpu import counting
from uefast.gpu.keys import score_keys

__all__ = ["rank_systems_counting"]


class _HostDevice:
    """Emulation: host arrays, immediate copies, no streams; the kernel's steps on the CPU."""

    def stream(self):
        return None

    def event(self):
        return None

    def pinned(self, shape, dtype):
        return np.empty(shape, dtype)

    def device(self, shape, dtype):
        return np.empty(shape, dtype)

    def upload(self, a):
        return np.ascontiguousarray(a)

    def h2d(self, dst, src, stream):
        dst[...] = src

    def d2h(self, dst, src, stream):
        dst[...] = src

    def record(self, event, stream):
        pass

    def wait(self, event, stream):
        pass

    def host_wait(self, event):
        pass

    def synchronize(self, stream):
        pass

    def launch(self, nblocks, tpb, stream, args):
        counting._emulated(*args)


class _NumbaDevice:
    """numba.cuda streams, events, pinned host arrays and device arrays."""

    def __init__(self):
        from numba import cuda

        self.cuda = cuda

    def stream(self):
        return self.cuda.stream()

    def event(self):
        return self.cuda.event()

    def pinned(self, shape, dtype):
        return self.cuda.pinned_array(shape, dtype)

    def device(self, shape, dtype):
        return self.cuda.device_array(shape, dtype)

    def upload(self, a):
        return self.cuda.to_device(np.ascontiguousarray(a))

    def h2d(self, dst, src, stream):
        dst.copy_to_device(src, stream=stream)

    def d2h(self, dst, src, stream):
        src.copy_to_host(dst, stream=stream)

    def record(self, event, stream):
        event.record(stream)

    def wait(self, event, stream):
        event.wait(stream)

    def host_wait(self, event):
        event.synchronize()

    def synchronize(self, stream):
        stream.synchronize()

    def launch(self, nblocks, tpb, stream, args):
        if nblocks:
            counting._kernel()[nblocks, tpb, stream](*args)


def rank_systems_counting(offsets, perm, has_perm, labels, scores_list, qref, tie_mode, doc_mode,
                          doc_int, doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal,
                          tabs, emulate: bool, sort_segments) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(values, nan), ...]`` per score array of ``scores_list``, each what
    :func:`uefast.gpu.counting.rank_values_counting` returns for it, computed by the pipeline of
    the module docstring. ``sort_segments(ids, scores, out)`` ranks one system's segments too
    costly to count into its ``out``. A system with a NaN score is not ranked (values
    unspecified, ``nan`` counts them), as on the CPU."""
    offsets = np.asarray(offsets, np.int64)
    nseg = len(offsets) - 1
    nm = len(plan_arrays[0])
    rows, tb, labs, npos = counting.system_invariants(offsets, perm, has_perm, labels, tie_mode,
                                                      doc_mode, doc_int, doc_off, doc_data)
    counted, sorted_ = counting.split_segments(offsets, npos)
    dev = _HostDevice() if emulate else _NumbaDevice()
    up = [dev.upload(a) if isinstance(a, np.ndarray) else a for a in
          (counted, offsets, tb, labs, qref, int(tie_mode), *plan_arrays, nrel_q, idcg_q, ioff,
           ideal, tabs)]
    slots, scratch = counting.counting_scratch(offsets, plan_arrays[0], tie_mode, dev.device)
    slots = dev.upload(slots)
    tpb = counting._threads_per_block(np.diff(offsets))
    n = len(rows)
    copy_s, comp_s = dev.stream(), dev.stream()
    copied = [dev.event(), dev.event()]
    consumed = [dev.event(), dev.event()]
    stage: dict = {}
    dkeys: dict = {}
    dout = [dev.device((nseg, nm), np.float64) for _ in range(2)]
    scores_list = list(scores_list)
    host_vals = dev.pinned((len(scores_list), nseg, nm), np.float64)
    results = []
    for s, scores in enumerate(scores_list):
        sc = np.asarray(scores, np.float64)
        isnan = np.isnan(sc[rows])
        nan_c = np.concatenate(([0], np.cumsum(isnan, dtype=np.int64)))
        nan = nan_c[offsets[1:]] - nan_c[offsets[:-1]]
        if nan.any():
            results.append((np.zeros((nseg, nm)), nan, None))
            continue
        keys = score_keys(sc, rows)  # host prep of system s (overlaps the device's work on s-1)
        b = s % 2
        kb = (b, keys.dtype.str)
        if kb not in stage:
            stage[kb] = dev.pinned(max(n, 1), keys.dtype)
            dkeys[kb] = dev.device(max(n, 1), keys.dtype)
        elif s >= 2:
            dev.host_wait(copied[b])  # copy s-2 has left this stage
        stage[kb][:n] = keys
        if s >= 2:
            dev.wait(consumed[b], copy_s)  # kernel s-2 has read this key buffer
        dev.h2d(dkeys[kb], stage[kb], copy_s)
        dev.record(copied[b], copy_s)
        dev.wait(copied[b], comp_s)
        args = (up[0], up[1], dkeys[kb], *up[2:5], up[5], *up[6:], slots, *scratch, dout[b])
        dev.launch(len(counted), tpb, comp_s, args)
        dev.record(consumed[b], comp_s)
        dev.d2h(host_vals[s], dout[b], comp_s)
        results.append((host_vals[s], nan, sc))
    dev.synchronize(comp_s)
    out = []
    for values, nan, sc in results:
        values = np.array(values)  # off the pinned buffer
        if sc is not None and len(sorted_):
            sort_segments(sorted_, sc, values)
        out.append((values, nan))
    return out
