"""Cases and the comparison of the GPU judged-pass tests (``tests/test_gpu_judged.py`` and the
CUDA simulator script ``tests/cuda_simulator_judged.py``): the CPU pass
(:func:`uefast.engine.judged_stats`, backend ``cpu``) against the GPU's (``cuda``), and the label
histograms against ``np.bincount``."""
from __future__ import annotations

import numpy as np

from uefast.engine import judged_stats, plan_measures
from uefast.measures import parse_measures

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@10", "AP", "AP@10", "P@5", "R@10",
            "Rprec", "RR", "ERR@20", "RBP(p=0.8)", "SP@10", "Success@5", "Q@10", "nERR@10",
            "Pplus", "O", "F@5"]
#: Closed-form REB families, for REB over a collection (``collection_size``).
CLOSED = ["P@5", "R@10", "DCG@5", "nDCG@10", "AP", "RR"]


def cases(seed: int, nq: int = 14, max_docs: int = 50):
    """``(name, joff, jperm, has_jperm, jlab, measures, reb, max_label, collection_size)``:
    queries of 0 .. max_docs judged rows, clustered and through a permutation, labels -1..4
    (the shared histogram) and -1..200 (too wide: the serial sort), exact and paper REB, REB over
    the judged documents and over a collection."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, max_docs, nq)
    lens[0], lens[1] = 0, max_docs
    joff = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    n = int(joff[-1])
    perm = rng.permutation(n).astype(np.int64)
    small = rng.integers(-1, 5, n).astype(np.int8)
    wide = rng.integers(-1, 201, n).astype(np.int64)
    zero = np.zeros(1, np.int64)
    for a in (joff, perm, small, wide, zero):
        # read-only, as evaluate() hands them on: the compiled passes see the one signature
        # the rest of the suite compiles (a writable one is another ~1-10 s compilation)
        a.flags.writeable = False
    out = []
    for has_perm in (False, True):
        p = perm if has_perm else zero
        out.append((f"small perm={has_perm}", joff, p, has_perm, small, MEASURES, "exact", 4, 0))
        out.append((f"small paper perm={has_perm}", joff, p, has_perm, small, MEASURES, "paper",
                    4, 0))
        out.append((f"wide perm={has_perm}", joff, p, has_perm, wide, MEASURES, "exact", 200, 0))
        out.append((f"collection perm={has_perm}", joff, p, has_perm, small, CLOSED, "exact", 4,
                    3 * max_docs))
    return out


def cpu_side(case):
    """``(plan, CPU JudgedStats)`` of a case (the simulator script computes these before it
    swaps the compiled routines for their Python source)."""
    name, joff, jperm, has_jperm, jlab, measures, reb, max_label, coll = case
    plan = plan_measures(parse_measures(measures), reb=reb, max_label=max_label)
    return plan, judged_stats(joff, jperm, has_jperm, jlab, plan, max_label, coll, backend="cpu")


def compare(case, cpu=None) -> dict:
    """Largest differences of the GPU judged pass from the CPU's on one case (values: absolute,
    relative to max(1, |cpu|)), and the count of exact mismatches of the integer outputs (Np,
    judged counts, sorted labels, histograms vs ``np.bincount``)."""
    from uefast.gpu.judged import judged_pass_cuda
    from uefast.gpu.ranking import _emulating

    name, joff, jperm, has_jperm, jlab, measures, reb, max_label, coll = case
    plan, a = cpu_side(case) if cpu is None else cpu
    b = judged_stats(joff, jperm, has_jperm, jlab, plan, max_label, coll, backend="cuda")
    res = {}
    for f in ("iub", "reb", "idcg"):
        x, y = getattr(a, f), getattr(b, f)
        res[f] = float((np.abs(x - y) / np.maximum(1.0, np.abs(x))).max(initial=0.0))
    bad = int((a.nrel != b.nrel).sum()) + int((a.n_judged != b.n_judged).sum())
    bad += int(len(a.ideal) != len(b.ideal)) + int((a.ideal != b.ideal).sum())
    # the sorted labels (every position) and histograms straight from the GPU pass
    from uefast.engine import tables
    tabs = tables(int(np.diff(joff).max()) + 1)
    normed = plan.normed
    r = judged_pass_cuda(joff, jperm, has_jperm, jlab, max_label, plan.kinds, plan.ks,
                         plan.gtypes, plan.rels, plan.fparams, plan.norms, plan.paper, normed,
                         -1, plan.exp_gtype, 0, tabs, _emulating())
    rows = jperm[:joff[-1]] if has_jperm else np.arange(joff[-1])
    lab = np.maximum(np.asarray(jlab, np.int64)[rows], 0)
    for q in range(len(joff) - 1):
        seg = lab[joff[q]:joff[q + 1]]
        bad += int((np.sort(seg)[::-1] != r.ideal[joff[q]:joff[q + 1]]).sum())
        if max_label + 2 <= r.hist.shape[1]:
            bad += int((np.bincount(seg, minlength=r.hist.shape[1]) != r.hist[q]).sum())
    res["int_mismatches"] = bad
    res["hist_checked"] = bool(max_label + 2 <= r.hist.shape[1])
    return res
