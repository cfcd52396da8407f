"""What the first-ever command compiles (benchmarks/RESULTS_startup.md): guards against changes
that silently make a cold ``uefast evaluate`` / ``uefast trec_eval`` compile much more.

* The chunk kernels are built for the requested measure families only: every family-guarded
  dispatch function a kernel's inlined helpers call must be rebound to the pruned copy
  (:func:`uefast.kernels.driver._rebound` refuses otherwise). A helper that called the module's
  dispatch directly made the first ``uefast evaluate`` compile every family (35 s of CPU
  instead of ~19 s) while giving the same numbers, so no value test could see it.
* The kernels of the two first commands copy arrays with loops, not by slice assignment from an
  array (:mod:`uefast.kernels`' docstring: Numba compiles a string-formatting error path for
  those, ~1.7 s of CPU per process). Checked on the source (AST), since a cold compile is too
  slow for the default suite.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import uefast
from uefast.kernels import dispatch, driver, segment

SRC = Path(uefast.__file__).resolve().parent

#: Modules whose kernels a first ``uefast evaluate`` (nDCG@10 + AP) or ``uefast trec_eval``
#: (official measures) compiles.
FIRST_COMMAND_MODULES = [
    "kernels/driver.py", "kernels/counting.py", "kernels/ordering.py", "kernels/sortnet.py",
    "kernels/grouping.py", "kernels/metrics.py", "kernels/segment.py", "kernels/routines.py",
    "kernels/threads.py", "ue.py", "io/_fused.py", "io/_topics.py", "io/_words.py",
    "io/_hashtab.py", "io/_fast.py", "io/_floatparse.py", "trec_eval/kernels_basic.py",
    "trec_eval/kernels_cut.py",
]


def test_unbound_dispatch_refused():
    with pytest.raises(RuntimeError, match="segment_measures calls measure_(plain|tied)"):
        driver._rebound(segment.segment_measures.py_func, {})
    names = {"measure_plain": dispatch.measure_plain, "measure_tied": dispatch.measure_tied}
    driver._rebound(segment.segment_measures.py_func, names)  # rebound (here to themselves)


def test_kernels_build_with_every_dispatch_rebound():
    driver.chunk_kernels.cache_clear()  # build anew (no compilation: Numba compiles on call)
    judged, ranking = driver.chunk_kernels(dispatch.F_NDCG | dispatch.F_AP)
    assert judged.py_func.__globals__["measure_iub"] is not dispatch.measure_iub
    seg = ranking.py_func.__globals__["segment_measures"].py_func
    assert seg.__globals__["measure_tied"] is not dispatch.measure_tied
    assert seg.__globals__["measure_plain"] is not dispatch.measure_plain


def _array_names(fn: ast.FunctionDef) -> set[str]:
    """Names assigned from a NumPy call, a slice or ``.copy()`` in ``fn``: arrays."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and _arrayish(node.value, set()):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _arrayish(value, arrays) -> bool:
    if isinstance(value, ast.Name):
        return value.id in arrays
    if isinstance(value, ast.Subscript):
        parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        return any(isinstance(p, ast.Slice) for p in parts)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        f = value.func
        return f.attr == "copy" or (isinstance(f.value, ast.Name) and f.value.id == "np"
                                    and f.attr in {"empty", "zeros", "full", "ones", "arange"})
    return False


def _slice_copies(path: Path, label: str):
    tree = ast.parse(path.read_text())
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        arrays = _array_names(fn)
        for node in ast.walk(fn):
            if not isinstance(node, ast.Assign):
                continue
            for t in node.targets:
                if isinstance(t, ast.Subscript) and _arrayish(t, set()) and _arrayish(node.value, arrays):
                    yield f"{label}:{node.lineno} {ast.unparse(node)}"


def test_first_command_kernels_copy_without_slice_assignment():
    found = sorted({hit for m in FIRST_COMMAND_MODULES for hit in _slice_copies(SRC / m, m)})
    assert found == [], "slice assignment from an array in a first-command kernel: " + "; ".join(found)


def test_slice_copy_detector_finds_one(tmp_path):
    p = tmp_path / "k.py"
    p.write_text("def f(a, n):\n    b = np.empty(n)\n    c = np.empty(n)\n    b[:n] = a[:n]\n"
                 "    c[1:] = b\n    b[:n] = 0\n")
    assert list(_slice_copies(p, "k.py")) == ["k.py:4 b[:n] = a[:n]", "k.py:5 c[1:] = b"]
