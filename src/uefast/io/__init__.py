"""Input readers: TREC runs and qrels, LETOR / SVMlight files, trec_eval -q output (re-exports).

The readers are imported on first use (PEP 562): ``uefast trec_eval`` imports this package for
its scanners (``uefast.io._fast``) and needs neither the LETOR reader nor ``pyarrow.compute``,
which the table readers import (~0.05 s of start-up).
"""
from __future__ import annotations

_LAZY = {
    "read_run": "uefast.io.trec",
    "read_qrels": "uefast.io.trec",
    "read_letor": "uefast.io.letor",
    "read_trec_eval_output": "uefast.io.trec_eval_output",
}

__all__ = ["read_run", "read_qrels", "read_letor", "read_trec_eval_output"]


def __getattr__(name):
    """The readers of :data:`_LAZY`, imported from their module on first use (then kept as
    attributes of the package, so this runs once per name)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uefast.io' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
