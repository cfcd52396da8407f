"""Device memory and backend choice for ``backend="cuda"`` / ``"auto"``.

* :func:`choose_backend` -- ``"auto"`` resolves to ``"cuda"`` only when CuPy imports, a CUDA
  device is present, the numba-cuda backend can run (:func:`uefast.gpu.ranking.cuda_available`)
  and the input has at least :data:`AUTO_MIN_ROWS` rows; otherwise ``"cpu"``. ``"cpu"`` and
  ``"cuda"`` are returned as given (forced).
* :class:`DeviceMemory` -- how the kernels get their device arrays: through CuPy when it is
  installed (its pooled allocator, so repeated calls reuse device memory instead of a
  ``cudaMalloc`` per array; host arrays copied from a pinned staging buffer, asynchronously on
  one stream, each input uploaded once per call), else numba.cuda's plain ``to_device`` /
  ``device_array``. numba kernels take CuPy arrays directly (``__cuda_array_interface__``).
* :func:`is_device_array` -- an array already in GPU memory (``__cuda_array_interface__``, or
  DLPack with a CUDA device).

CuPy is optional and imported on first use only (``pip install "uefast[gpu]"``).
"""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["AUTO_MIN_ROWS", "BACKENDS", "choose_backend", "cupy_or_none", "DeviceMemory",
           "is_device_array"]

#: Rows from which ``backend="auto"`` picks the GPU. NOT MEASURED: a placeholder (no GPU has
#: run the current path, issue 27). ``benchmarks/gpu_phases.py`` measures it: its crossover
#: search ends with ``AUTO_MIN_ROWS to commit: N`` (the rows of the MSLR-shaped table from
#: which the GPU end to end beats the CPU engine, 1 and 8 systems); commit N here with the
#: device and date in ``benchmarks/RESULTS_gpu.md``.
AUTO_MIN_ROWS = 1_000_000
BACKENDS = ("cpu", "cuda", "auto")


@functools.cache
def cupy_or_none():
    """The ``cupy`` module, or None when it is not installed or finds no CUDA device."""
    try:
        import cupy
    except Exception:
        return None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
    except Exception:
        return None
    return cupy


def choose_backend(backend: str, n_rows: int) -> str:
    """``"cpu"`` or ``"cuda"`` for a requested ``backend`` (one of :data:`BACKENDS`) and an input
    of ``n_rows`` rows (see the module docstring)."""
    if backend != "auto":
        return backend
    if n_rows < AUTO_MIN_ROWS or cupy_or_none() is None:
        return "cpu"
    from uefast.gpu.ranking import _device_reason

    return "cuda" if _device_reason() is None else "cpu"


def is_device_array(obj) -> bool:
    """True for an array in GPU memory: it exposes ``__cuda_array_interface__`` (CuPy, numba,
    PyTorch CUDA tensors, cuDF columns' buffers) or DLPack on a CUDA device (device type 2)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is None:
        return False
    try:
        return int(dev()[0]) in (2, 3)  # kDLCUDA, kDLCUDAHost
    except Exception:
        return False


class DeviceMemory:
    """Device arrays for one call: ``upload(host_array)`` and ``empty(shape, dtype)``; with CuPy,
    from its memory pool, host data staged through pinned memory on one stream (``sync()`` waits
    for it), else through numba.cuda. Device arrays given to ``upload`` pass through untouched."""

    def __init__(self, cupy=None):
        self.cp = cupy_or_none() if cupy is None else cupy
        if self.cp is not None:
            self.stream = self.cp.cuda.Stream(non_blocking=True)
            self._pinned = []  # staging buffers live until sync()
        else:
            from numba import cuda

            self._cuda = cuda

    def upload(self, a):
        if is_device_array(a):
            return a
        a = np.ascontiguousarray(a)
        if self.cp is None:
            return self._cuda.to_device(a)
        mem = self.cp.cuda.alloc_pinned_memory(max(a.nbytes, 1))
        staged = np.frombuffer(mem, a.dtype, a.size).reshape(a.shape)
        staged[...] = a
        out = self.cp.empty(a.shape, a.dtype)
        out.set(staged, stream=self.stream)
        self._pinned.append(mem)
        return out

    def empty(self, shape, dtype):
        if self.cp is None:
            return self._cuda.device_array(shape, dtype)
        return self.cp.empty(shape, dtype)

    def zeros(self, shape, dtype):
        if self.cp is None:
            return self._cuda.to_device(np.zeros(shape, dtype))
        return self.cp.zeros(shape, dtype)

    def to_host(self, d):
        self.sync()
        return d.get() if self.cp is not None else d.copy_to_host()

    def sync(self):
        if self.cp is not None:
            self.stream.synchronize()
            self._pinned.clear()
