"""Before/after benchmark of the IA family pass: the kernel (`ia_scores`) and `evaluate` end to
end with the Numba kernel (`_ia_kernels.ia_batch`) and `compile_qrels` of a base commit against
the working tree's, interleaved in one process (old, new, old, new, ...), CPU
(`time.process_time`) and wall time, on the MSLR-shaped table of
`benchmarks/test_bench_diversity_ia.py` (5 aspects, six measures with IUB and exact REB). Also
checks that both give the same `evaluate` table (largest absolute difference printed).

The base's kernel modules (``src/uefast/diversity/_ia_*.py`` at BASE_COMMIT) are loaded as a
package of their own, their imports of one another pointed at it, so base and working tree run
side by side whatever the split into modules.

Run: ``python benchmarks/compare_diversity_ia.py BASE_COMMIT [n_queries [n_systems [threads]]]``
(default 3,000 queries x 1 system; ``UEFAST_BENCH_SMALL=1``: 200 queries, 2 repetitions).
``--per-measure`` as last argument: the kernel per measure instead (one thread recommended);
``--kernel-only``: the kernel alone (no `evaluate`, whose base run would take minutes on the
issue-sized table of 31,531 queries).
Figures: ``benchmarks/RESULTS_diversity.md``.
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_diversity_ia import MEASURES, SMALL, kernel, make_data, prepare


def _load(rev: str, path: str, name: str, tmp: str):
    """The module at ``path`` as of commit ``rev`` (imported under ``name``)."""
    src = subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True,
                         cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    f = os.path.join(tmp, name + ".py")
    with open(f, "wb") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _t(fn, *a):
    w0, c0 = time.perf_counter(), time.process_time()
    fn(*a)
    return time.perf_counter() - w0, time.process_time() - c0


def _load_kernels(rev: str, tmp: str):
    """The base's ``_ia_*`` modules as the package ``old_ia_pkg``; returns its ``_ia_kernels``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names = subprocess.run(["git", "ls-tree", "--name-only", rev, "src/uefast/diversity/"],
                           check=True, capture_output=True, cwd=root, text=True).stdout.split()
    pkg = os.path.join(tmp, "old_ia_pkg")
    os.makedirs(pkg, exist_ok=True)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    for path in names:
        base = os.path.basename(path)
        if base.startswith("_ia_") and base.endswith(".py"):
            src = subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True,
                                 cwd=root, text=True).stdout
            with open(os.path.join(pkg, base), "w") as fh:
                fh.write(src.replace("uefast.diversity._ia_", "old_ia_pkg._ia_"))
    sys.path.insert(0, tmp)
    return importlib.import_module("old_ia_pkg._ia_kernels")


def main(rev: str, nq: int, ns: int, per_measure: bool, kernel_only: bool = False) -> None:
    import uefast.diversity.evaluation as E
    import uefast.diversity.ia_fast as F
    from uefast.diversity import evaluate, parse_measures

    tmp = tempfile.mkdtemp()
    old_k = _load_kernels(rev, tmp)
    old_q = _load(rev, "src/uefast/diversity/qrels.py", "old_div_qrels", tmp)
    n_old = old_k.ia_batch.py_func.__code__.co_argcount

    def old_batch(*a):  # the base's signature (the thread count came later)
        return old_k.ia_batch(*a[:n_old])

    impl = {"old": (old_batch, old_q.compile_qrels), "new": (F.ia_batch, E.compile_qrels)}

    def use(k):
        F.ia_batch, E.compile_qrels = impl[k]

    run, qrels = make_data(nq, ns)
    rows = run.num_rows
    batch, mlist = prepare(run, qrels)
    reps = 2 if SMALL else 5
    if per_measure:
        res = {}
        for _ in range(reps):
            for name in MEASURES + ["all six"]:
                ml = mlist if name == "all six" else parse_measures([name])
                for k in impl:
                    use(k)
                    F.ia_scores(batch, ml)
                    res.setdefault((name, k), []).append(_t(F.ia_scores, batch, ml)[1])
        print(f"kernel CPU per measure, {nq} queries x {ns} systems, load {os.getloadavg()[0]:.1f}")
        for name in MEASURES + ["all six"]:
            o, n = min(res[(name, "old")]), min(res[(name, "new")])
            print(f"{name:12s} old {o * 1e3:7.1f} ms  new {n * 1e3:7.1f} ms  old/new {o / n:5.2f}")
        return
    outs = {}
    for k in ([] if kernel_only else impl):
        use(k)
        kernel(batch, mlist)
        outs[k] = evaluate(run, qrels, MEASURES).to_pandas()
    if kernel_only:
        ko = []
        for k in impl:
            use(k)
            ko.append(kernel(batch, mlist))
        diff = max(float(np.max(np.abs(x.astype(float) - y.astype(float)) / np.maximum(1, np.abs(x))))
                   for x, y in zip(*ko))
        print(f"kernel outputs: largest relative difference {diff:.3g}")
    else:
        a, b = outs["old"], outs["new"]
        num = [c for c in a.columns if a[c].dtype.kind == "f"]
        same = all(a[c].equals(b[c]) for c in a.columns if c not in num)
        diff = max(float(np.nanmax(np.abs(a[c] - b[c]))) for c in num)
        print(f"evaluate tables: same keys/flags {same}, largest absolute difference {diff:.3g}")
    res = {}
    for _ in range(reps):
        for k in impl:
            use(k)
            res.setdefault(("kernel", k), []).append(_t(kernel, batch, mlist))
            if not kernel_only:
                res.setdefault(("evaluate", k), []).append(_t(evaluate, run, qrels, MEASURES))
    import numba

    print(f"{rows:,} run rows, {nq} queries x {ns} systems, load {os.getloadavg()[0]:.1f}, "
          f"{numba.get_num_threads()} threads")
    for what in ("kernel",) if kernel_only else ("kernel", "evaluate"):
        for k in impl:
            v = res[(what, k)]
            c, w = [x[1] for x in v], [x[0] for x in v]
            print(f"{what:9s} {k}: CPU {rows / min(c) / 1e6:7.3f} M rows/s (median "
                  f"{rows / statistics.median(c) / 1e6:.3f}), wall {rows / min(w) / 1e6:7.3f} M "
                  f"(median {rows / statistics.median(w) / 1e6:.3f})")
        o, n = res[(what, "old")], res[(what, "new")]
        print(f"  {what} old/new: CPU {min(x[1] for x in o) / min(x[1] for x in n):.2f}x, "
              f"wall {min(x[0] for x in o) / min(x[0] for x in n):.2f}x")


if __name__ == "__main__":
    args = sys.argv[1:]
    pm = "--per-measure" in args
    ko = "--kernel-only" in args
    args = [a for a in args if a not in ("--per-measure", "--kernel-only")]
    if not args:
        sys.exit(__doc__)
    nums = [int(x) for x in args[1:4]]
    if len(nums) > 2:
        import numba
        numba.set_num_threads(nums[2])
    main(args[0], 200 if SMALL else (nums[0] if nums else 3000), nums[1] if len(nums) > 1 else 1, pm, ko)
