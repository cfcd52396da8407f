"""Shared set-up of the CUDA simulator scripts (``tests/cuda_simulator_*.py``): the simulator
hands kernels array proxies that compiled CPU functions cannot take, so every ``@njit`` routine a
kernel may call runs as the Python function it compiles from (``.py_func``): the same source."""
from __future__ import annotations

from numba.core.registry import CPUDispatcher

import uefast.kernels.dispatch as dispatch
import uefast.kernels.driver as driver
import uefast.kernels.err as err
import uefast.kernels.metrics as metrics
import uefast.kernels.ordering as ordering
import uefast.kernels.routines as routines
import uefast.kernels.sakai as sakai
import uefast.kernels.segment as segment
import uefast.kernels.tbg as tbg


def python_routines(*extra) -> None:
    """Replace the compiled routines of the measure modules (and of the ``extra`` modules) by
    their Python source functions, in place (the CPU driver's chunk kernels, which the CPU oracle
    runs, stay compiled)."""
    for mod in (segment, metrics, err, routines, sakai, tbg, dispatch, driver, ordering, *extra):
        for name, obj in list(vars(mod).items()):
            # the CPU driver's own chunk kernels stay compiled: the CPU oracle runs them
            if isinstance(obj, CPUDispatcher) and not (mod is driver and name.startswith("_")):
                setattr(mod, name, obj.py_func)
