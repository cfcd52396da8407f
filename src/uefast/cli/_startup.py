"""Start-up of a ``uefast`` command process: what it need not import.

Numba's CPU target, the first time a jitted function is compiled or loaded from the cache,
imports ``numba.np.arraymath``, whose module body probes for BLAS with
``import scipy.linalg.cython_blas`` (``numba.np.arraymath._check_blas``). Importing SciPy's
``linalg`` costs ~0.15 s of CPU (it pulls in ``array_api_compat`` and ``numpy.f2py``), a third of
a warm ``uefast trec_eval``, and no uefast kernel uses BLAS. :func:`defer_numba_blas_probe` runs
that import with SciPy hidden, then records the answer the probe would have given from SciPy's
presence alone; Numba's BLAS users (``np.dot``, ``np.linalg``, ...) call ``ensure_blas()`` again
when they are typed, which then imports SciPy, so they work as before, only later. Measured in
``benchmarks/RESULTS_startup.md``.
"""
from __future__ import annotations

import importlib.util
import sys

__all__ = ["defer_numba_blas_probe"]


def defer_numba_blas_probe() -> bool:
    """Import ``numba.np.arraymath`` without importing SciPy (see the module docstring); its
    ``_HAVE_BLAS`` flag is then set to whether SciPy is installed, the value the probe gives when
    SciPy imports. Does nothing (returns False) when that module or ``scipy.linalg`` is imported
    already. It changes when SciPy is imported, not what Numba compiles (Numba's check that an
    imported SciPy is >= 1.0 is skipped when SciPy was hidden). Meant for the command-line
    process, before the first jitted call; returns True when it deferred the import."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return False
    # hide all of SciPy if it is not imported yet (Numba's own ``import scipy``, a version check
    # at ``import numba``, then finds none: ~0.02 s less), else only its ``linalg``
    hidden = "scipy.linalg" if "scipy" in sys.modules else "scipy"
    have_scipy = importlib.util.find_spec("scipy") is not None
    sys.modules[hidden] = None  # `import scipy.linalg...` raises ImportError (no BLAS)
    try:
        import numba.np.arraymath as arraymath
    finally:
        if hidden in sys.modules and sys.modules[hidden] is None:
            del sys.modules[hidden]
    if not hasattr(arraymath, "_HAVE_BLAS"):  # a Numba without the probe: nothing to restore
        return False
    arraymath._HAVE_BLAS = have_scipy
    return True
