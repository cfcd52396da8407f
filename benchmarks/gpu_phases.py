"""Device check for issue 27: where the time of ``evaluate(..., backend="cuda")`` goes, phase by
phase, next to the CPU engine, in one process on one machine.

    python benchmarks/gpu_phases.py            # MSLR-shaped, 31,531 queries (~3.8 M rows)
    python benchmarks/gpu_phases.py --small    # 300 queries (or UEFAST_BENCH_SMALL=1)

Prints the device name, driver and library versions, then for 1 system and 8 systems:

* end to end from a host Arrow table (best of ``--rounds``): the CPU engine, the old CUDA path
  (``UEFAST_CUDA_KERNEL=sort``: one thread per segment) and the new one (``counting``);
* the new path's phases, each timed on its own (CUDA events for device work, the host clock for
  host work): host prep (keys, tie-break keys, gather into segment order), H2D pageable
  (``numba.cuda.to_device``) vs pinned (CuPy staging when installed, else numba's
  ``pinned_array``), device allocation, the judged pass (GPU, timed inside ``evaluate``), the
  rank+measures kernel (ranking and measures are one kernel), D2H, and the Arrow output
  (``uefast.evaluate._build_table``, timed inside ``evaluate``);
* old path vs new path, pair by pair (:func:`issue27_phases`): grouping of shuffled rows (CPU
  counting sort vs GPU radix sort, and its kernels alone on resident codes), the judged pass
  (CPU vs GPU), the systems one counting call each vs pipelined (system s+1's copy on one stream
  while system s's kernel runs on another), and ``evaluate`` from a host Arrow table vs
  ``evaluate_device`` on columns already in GPU memory (with the CPU engine beside them);
* UE scores and the output table: on the host after copying values, IUB and REB back (the
  old ``evaluate_device``) vs on the GPU (:mod:`uefast.gpu.output`: kernels, one copy back);
* the ``backend="auto"`` crossover (:func:`crossover`): by bisection over sizes of the
  MSLR-shaped table (``--crossover LO HI`` queries), the rows from which ``evaluate`` end to
  end from a host Arrow table is faster on the GPU than on the CPU engine, for 1 and 8
  systems, and the value to commit as ``uefast.gpu.memory.AUTO_MIN_ROWS`` (the larger);
* the ``tukey_hsd`` crossover (:func:`tukey_crossover`): by bisection over the resamples, the
  work (resamples x topics x systems) to commit as ``uefast.gpu.tukey.AUTO_MIN_WORK``;
* GPU resampling: paired bootstrap sums for 28 pairs on the same topics, CPU kernel vs GPU;
  the randomised Tukey HSD null (``--tukey-resamples``, default B = 10,000, 8 systems x the
  table's topics): CPU kernel (wall and process CPU time) vs the GPU kernel alone (CUDA events,
  inputs resident) and with its transfers, ``tukey_hsd`` end to end on both backends, and
  whether the GPU's null sample and p-values equal the CPU's bit for bit.

Exits with status 2 and one line naming the reason where no usable NVIDIA GPU exists. Meant to
finish within 5 minutes on an H100-class machine (most of it numba-cuda's first compilation of
each kernel; every timed call is warmed first); ``--rounds`` trades time for stability. It has
run only in numba's CUDA simulator so far (``tests/test_gpu_phases.py``).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

MEASURES = ["nDCG@10", "AP"]
NO_GPU_STATUS = 2


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "host": platform.node(),
           "cpus": str(os.cpu_count())}
    for p in ("uefast", "numpy", "numba", "numba-cuda", "cupy", "cupy-cuda12x", "cupy-cuda13x",
              "pyarrow", "cuda-bindings"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            pass
    return out


def device_info(cuda) -> dict[str, str]:
    if not hasattr(cuda, "get_current_device"):  # numba's CUDA simulator (the script's smoke test)
        return {"device": "numba CUDA simulator (timings meaningless)"}
    dev = cuda.get_current_device()
    info = {"device": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
            "compute_capability": ".".join(map(str, dev.compute_capability))}
    try:
        info["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
    except Exception as e:  # noqa: BLE001 - a version we cannot read is reported, not fatal
        info["driver"] = f"unknown ({e})"
    try:
        info["runtime"] = ".".join(map(str, cuda.runtime.get_version()))
    except Exception:
        pass
    return info


@contextmanager
def host_timer(acc: dict, key: str):
    t0 = time.perf_counter()
    yield
    acc.setdefault(key, []).append(time.perf_counter() - t0)


def event_time(cuda, fn) -> float:
    """Seconds of device work ``fn`` enqueues, between two CUDA events."""
    a, b = cuda.event(), cuda.event()
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 1e3  # milliseconds between the events


def best(fn, rounds: int) -> float:
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def wrap_timed(module, name: str, acc: dict, key: str):
    """Replace ``module.name`` by a wrapper that adds its wall time to ``acc[key]``."""
    real = getattr(module, name)

    def timed(*a, **k):
        with host_timer(acc, key):
            return real(*a, **k)

    setattr(module, name, timed)
    return real


def phases(cuda, table, rounds: int) -> dict[str, float]:
    """The counting path's phases on ``table`` (median over ``rounds``)."""
    import importlib

    import uefast
    import uefast.gpu.counting as counting
    from uefast.gpu.memory import DeviceMemory, cupy_or_none

    ev = importlib.import_module("uefast.evaluate")  # the module (uefast.evaluate is the function)
    acc: dict[str, list] = {}
    import uefast.gpu.pipeline as pipeline

    calls = []
    real_rvc, real_many = counting.rank_values_counting, pipeline.rank_systems_counting

    def spy(*a):
        calls.append(a[:17])
        return real_rvc(*a)

    def spy_many(*a):  # the systems' pipeline: one call per system, as the plain path makes
        calls.extend(a[:4] + (sc,) + a[5:17] for sc in a[4])
        return real_many(*a)

    counting.rank_values_counting, pipeline.rank_systems_counting = spy, spy_many
    reals = [(ev, "judged_stats", wrap_timed(ev, "judged_stats", acc,
                                             "judged pass (GPU, in evaluate)")),
             (ev, "_build_table", wrap_timed(ev, "_build_table", acc, "Arrow output"))]
    try:
        for _ in range(rounds):
            calls.clear()
            with host_timer(acc, "end to end (counting)"):
                uefast.evaluate(table, measures=MEASURES, backend="cuda")
    finally:
        counting.rank_values_counting, pipeline.rank_systems_counting = real_rvc, real_many
        for mod, name, real in reals:
            setattr(mod, name, real)
    for _ in range(rounds):
        for args in calls:
            (offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int, doc_off,
             doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs) = args
            with host_timer(acc, "host prep"):
                ci = counting.counting_inputs(offsets, perm, has_perm, labels, scores, tie_mode,
                                              doc_mode, doc_int, doc_off, doc_data)
            host = [np.ascontiguousarray(a) for a in (offsets, ci.keys, ci.tb, ci.labs, qref,
                                                      nrel_q, idcg_q, ioff, ideal, tabs)]
            nbytes = sum(a.nbytes for a in host)
            acc.setdefault("H2D bytes", []).append(nbytes)
            acc.setdefault("H2D pageable", []).append(
                event_time(cuda, lambda: [cuda.to_device(a) for a in host]))
            pinned = []
            for a in host:
                p = cuda.pinned_array(a.shape, a.dtype)
                p[...] = a
                pinned.append(p)
            acc.setdefault("H2D pinned (numba)", []).append(
                event_time(cuda, lambda: [cuda.to_device(p) for p in pinned]))
            if cupy_or_none() is not None:
                mem = DeviceMemory()
                with host_timer(acc, "H2D pinned staged (CuPy, incl. staging copy)"):
                    [mem.upload(a) for a in host]
                    mem.sync()
            n = int(offsets[-1])
            nseg = len(offsets) - 1
            acc.setdefault("device allocation", []).append(event_time(cuda, lambda: [
                cuda.device_array(n, np.int64), cuda.device_array(n + nseg + 1, np.int8),
                cuda.device_array((nseg, len(plan_arrays[0])), np.float64)]))
            mem = DeviceMemory()
            d_out = mem.empty((nseg, len(plan_arrays[0])), np.float64)
            seg = np.arange(nseg, dtype=np.int64)
            acc.setdefault("rank+measures kernel (incl. its uploads)", []).append(event_time(
                cuda, lambda: counting.launch_counting(seg, offsets, ci, qref, tie_mode,
                                                       plan_arrays, nrel_q, idcg_q, ioff, ideal,
                                                       tabs, d_out,
                                                       False, mem=mem)))
            acc.setdefault("D2H values", []).append(event_time(cuda, lambda: mem.to_host(d_out)))
    return {k: statistics.median(v) for k, v in acc.items()}


def issue27_phases(cuda, table, rounds: int) -> list[tuple[str, float, float | None]]:
    """Old path vs new path, each pair in the same process (best of ``rounds``; every new
    function is called once before it is timed, so compilation is not counted): grouping of
    unclustered rows, the judged pass, systems one call each vs pipelined, host Arrow input vs
    columns already on the device. ``(label, seconds, old/new ratio or None)`` rows."""
    import uefast
    import uefast.gpu.pipeline as pipeline
    import uefast.gpu.ranking as ranking
    from uefast.engine import judged_stats, plan_measures
    from uefast.gpu.device_input import evaluate_device
    from uefast.gpu.grouping import counting_sort_cuda
    from uefast.kernels.grouping import counting_sort
    from uefast.measures import parse_measures

    out = []

    def pair(label_old, old, label_new, new):
        old(), new()  # compile / warm up
        t_old, t_new = best(old, rounds), best(new, rounds)
        out.extend([(label_old, t_old, None), (label_new, t_new, t_old / t_new)])

    qid = np.ascontiguousarray(table["qid"].to_numpy())
    labels = np.ascontiguousarray(table["label"].to_numpy())
    n, nq = len(qid), int(qid.max()) + 1
    shuffle = np.random.default_rng(0).permutation(n)
    codes, lab_sh = qid[shuffle], labels[shuffle]
    pair("grouping CPU (counting sort, shuffled rows)", lambda: counting_sort(codes, nq),
         "grouping GPU (radix sort, incl. H2D codes + D2H)",
         lambda: counting_sort_cuda(codes, nq, False))
    d_codes = cuda.to_device(codes)
    counting_sort_cuda(d_codes, nq, False, to_host=False)
    out.append(("grouping GPU kernels only (codes resident, events)", min(
        event_time(cuda, lambda: counting_sort_cuda(d_codes, nq, False, to_host=False))
        for _ in range(rounds)), None))
    offsets, perm = counting_sort(codes, nq)
    max_label = int(labels.max())
    plan = plan_measures(parse_measures(MEASURES), max_label=max_label)
    pair("judged pass CPU", lambda: judged_stats(offsets, perm, True, lab_sh, plan, max_label),
         "judged pass GPU (incl. transfers)",
         lambda: judged_stats(offsets, perm, True, lab_sh, plan, max_label, backend="cuda"))
    score_cols = [c for c in table.column_names if c.startswith("sys")]
    if len(score_cols) > 1:
        calls = []
        real = pipeline.rank_systems_counting
        pipeline.rank_systems_counting = lambda *a: calls.append(a[:17]) or real(*a)
        try:
            uefast.evaluate(table, measures=MEASURES, backend="cuda")
        finally:
            pipeline.rank_systems_counting = real
        a = calls[0]
        pair(f"{len(a[4])} systems, one counting call each",
             lambda: [ranking.rank_values_cuda(*a[:4], sc, *a[5:]) for sc in a[4]],
             f"{len(a[4])} systems pipelined (copy s+1 || kernel s)",
             lambda: ranking.rank_systems_cuda(*a))
    cols = {"qid": qid, "label": labels, **{c: table[c].to_numpy() for c in score_cols}}
    dev = {k: cuda.to_device(np.ascontiguousarray(v)) for k, v in cols.items()}
    out.append(("evaluate CPU engine, host Arrow (ties=input)", best(
        lambda: uefast.evaluate(table, measures=MEASURES, ties="input"), rounds), None))
    pair("evaluate GPU from host Arrow (ties=input)",
         lambda: uefast.evaluate(table, measures=MEASURES, ties="input", backend="cuda"),
         "evaluate_device, columns already on the GPU",
         lambda: evaluate_device(dev, measures=MEASURES, ties="input"))
    return out


def resampling(cuda, n_topics: int, n_resamples: int, rounds: int) -> dict[str, float]:
    from uefast.gpu.resample import bootstrap_sums_cuda
    from uefast.stats import _kernels as K

    rng = np.random.default_rng(0)
    vt = rng.normal(size=(36, n_topics))  # 8 systems + 28 pairs' squared differences
    out = np.empty((max(4, n_resamples // 4 * 4), 36))
    proto = np.empty(0, np.uint16 if n_topics < 65536 else np.int32)
    K.bootstrap_sums(vt, np.uint64(1), 1, 0, out[:4], proto)
    bootstrap_sums_cuda(vt, np.uint64(1), 1, 0, out[:4], emulate=False)
    return {f"bootstrap {n_resamples} resamples x 36 columns, CPU": best(
                lambda: K.bootstrap_sums(vt, np.uint64(1), 1, 0, out, proto), rounds),
            f"bootstrap {n_resamples} resamples x 36 columns, GPU": best(
                lambda: bootstrap_sums_cuda(vt, np.uint64(1), 1, 0, out, emulate=False), rounds)}


def tukey_phase(cuda, n_topics: int, n_resamples: int, rounds: int) -> list[tuple[str, object]]:
    """Randomised Tukey HSD, 8 systems x ``n_topics``, ``n_resamples`` resamples: CPU vs GPU."""
    import uefast.gpu.tukey as T
    from uefast.stats import _kernels as K
    from uefast.stats import resampling as R
    from uefast.stats import tukey_hsd

    rng = np.random.default_rng(1)
    x = rng.beta(2.0, 5.0, size=(n_topics, 8)) + np.linspace(0.0, 0.01, 8)  # nDCG-like scores
    perms = R._permutation_table(8)
    q_cpu, q_gpu = np.empty(n_resamples), np.empty(n_resamples)
    seed = np.uint64(7)

    def cpu():
        K.tukey_ranges(x, perms, seed, 3, 0, q_cpu)

    cpu()  # compile / warm up
    c0 = time.process_time()
    wall = best(cpu, rounds)
    cpu_s = (time.process_time() - c0) / rounds
    T.tukey_ranges_cuda(x, perms, seed, 3, 0, q_gpu, emulate=False)  # compile / warm up
    kernel = T._kernels()
    d_x, d_perms, d_thr = cuda.to_device(x), cuda.to_device(perms), cuda.to_device(np.zeros(28))
    d_counts = cuda.to_device(np.zeros(28, np.int64))
    d_acc, d_p = cuda.device_array((1, 1)), cuda.device_array((1, 1), np.int64)
    d_out = cuda.device_array(n_resamples)
    base = np.uint64(T.stream_base(seed, 3))
    grid = -(-n_resamples // T.THREADS)
    launch = lambda: kernel[grid, T.THREADS](d_x, d_perms, base, np.int64(0),  # noqa: E731
                                              n_resamples, d_thr, d_acc, d_p, d_out, d_counts)
    launch()
    ev = min(event_time(cuda, launch) for _ in range(rounds))
    ev_all = min(event_time(cuda, lambda: T.tukey_ranges_cuda(x, perms, seed, 3, 0, q_gpu,
                                                               np.zeros(28), emulate=False))
                 for _ in range(rounds))
    hsd = {b: (lambda b=b: tukey_hsd(x, n_resamples=n_resamples, seed=7, backend=b))
           for b in ("cpu", "cuda")}
    tabs = {b: f() for b, f in hsd.items()}
    ends = {b: best(f, rounds) for b, f in hsd.items()}
    same_p = tabs["cpu"]["pvalue"].equals(tabs["cuda"]["pvalue"])
    tag = f"tukey B={n_resamples:,} x 8 systems x {n_topics:,} topics"
    return [(f"{tag}, CPU kernel (wall)", wall), (f"{tag}, CPU kernel (process CPU)", cpu_s),
            (f"{tag}, GPU kernel (events, inputs resident)", ev),
            (f"{tag}, GPU incl. H2D x + D2H q* (events)", ev_all),
            (f"{tag}, tukey_hsd end to end, CPU", ends["cpu"]),
            (f"{tag}, tukey_hsd end to end, GPU", ends["cuda"]),
            (f"{tag}, null sample identical", bool(np.array_equal(q_cpu, q_gpu))),
            (f"{tag}, p-values identical", bool(same_p))]


def output_phase(cuda, table, rounds: int) -> list[tuple[str, float, float | None]]:
    """UE scores and the output table, old vs new, on the values, IUB and REB of ``table``
    already in GPU memory (as ``evaluate_device`` holds them): old, copy them to the host, UE
    (``ue_scores``) and the table there (``_build_table``); new, the UE + assembly kernels
    (:mod:`uefast.gpu.output`), one device-to-host copy, the Arrow table
    (``_assemble_table``). Plus the new path's kernels alone (CUDA events). ``(label,
    seconds, old/new ratio or None)`` rows; the two tables are checked equal."""
    import pyarrow as pa

    import uefast
    from uefast._output import _assemble_table, _build_table, _Result
    from uefast.gpu.memory import DeviceMemory
    from uefast.gpu.output import assemble_columns
    from uefast.inputs import text_array
    from uefast.measures import parse_measures

    mlist = parse_measures(MEASURES)
    cpu = uefast.evaluate(table, measures=MEASURES)  # rows: system, query, measure
    score_cols = [c for c in table.column_names if c.startswith("sys")]
    ns, nm = len(score_cols), len(mlist)
    nq = cpu.num_rows // (ns * nm)
    col = lambda c, dt=np.float64: cpu[c].to_numpy().astype(dt).reshape(ns, nq, nm)  # noqa: E731
    mem = DeviceMemory()
    d = [mem.upload(np.ascontiguousarray(a)) for a in (
        col("value"), col("iub")[0], col("reb")[0], col("n_rel", np.int64)[0],
        col("n_judged", np.int64)[0, :, 0], col("n_docs", np.int64)[0, :, 0])]
    mem.sync()
    keep = np.arange(nq, dtype=np.int64)
    systems, qids = text_array(score_cols), pa.array(keep)

    def old():
        v, iub, reb, nrel, nj, nd = (mem.to_host(x) for x in d)
        res = _Result(systems, qids, np.repeat(np.arange(ns), nq), np.tile(keep, ns),
                      v.reshape(ns * nq, nm), np.tile(iub, (ns, 1)), np.tile(reb, (ns, 1)),
                      np.tile(nd, ns), np.tile(nj, ns), np.tile(nrel, (ns, 1)), {})
        return _build_table(res, mlist, True, "zero", {})

    def new():
        out = assemble_columns(d[0], keep, *d[1:], ue=True, degenerate="zero", emulate=False,
                               mem=mem)
        seg = out.rows // nm
        return _assemble_table(systems, qids, seg // nq, seg % nq, None, mlist, ns * nq,
                               dict(out.cols), [], {}, {})

    a, b = old(), new()
    same = all(np.array_equal(a[c].to_numpy(), b[c].to_numpy()) for c in ("value", "ue_v1",
                                                                          "ue_v2", "n_rel"))
    t_old, t_new = best(old, rounds), best(new, rounds)
    kern = min(event_time(cuda, lambda: assemble_columns(
        d[0], keep, *d[1:], ue=True, degenerate="zero", emulate=False, mem=mem))
        for _ in range(rounds))
    return [(f"UE + output on the host ({ns * nq * nm:,} rows: D2H, ue_scores, _build_table)",
             t_old, None),
            ("UE + output on the GPU (kernels, one D2H, Arrow)", t_new, t_old / t_new),
            ("UE + output GPU kernels + the D2H alone (events)", kern, None),
            ("UE + output: GPU table equal to the host's", same, None)]


def crossover(cuda, n_systems: int, q_lo: int, q_hi: int, rounds: int, log=print):
    """Rows of the MSLR-shaped table (``n_systems`` score columns) from which
    ``evaluate(..., backend="cuda")`` end to end from the host Arrow table beats the CPU engine:
    bisection on a log scale over ``q_lo .. q_hi`` queries, each size timed best of ``rounds``
    (both warmed first). Returns ``(rows, queries)`` of the smallest size seen where the GPU
    won with every size above it also won, or None when it lost at ``q_hi``. The GPU's and the
    CPU's times are printed for every size tried (``log``)."""
    import uefast
    from _data import mslr_table

    cols = ["qid", "docid", "label", *[f"sys{j}" for j in range(n_systems)]]

    def probe(nq):
        t = mslr_table(nq).select(cols)
        fns = {b: (lambda b=b: uefast.evaluate(t, measures=MEASURES, backend=b))
               for b in ("cpu", "cuda")}
        for f in fns.values():
            f()
        cpu, gpu = best(fns["cpu"], rounds), best(fns["cuda"], rounds)
        log(f"  {n_systems} system(s), {nq:6d} queries, {t.num_rows:10,d} rows: CPU "
            f"{cpu * 1e3:9.2f} ms, GPU {gpu * 1e3:9.2f} ms -> {'GPU' if gpu < cpu else 'CPU'}")
        return gpu < cpu, t.num_rows

    return bisect_crossover(probe, q_lo, q_hi)


def bisect_crossover(probe, q_lo: int, q_hi: int):
    """The search of :func:`crossover`: ``probe(nq) -> (gpu_won, rows)``. None when the GPU
    loses at ``q_hi``; ``q_lo``'s ``(rows, q_lo)`` when it already wins there; else bisection
    on a log scale (geometric midpoints) until the bracket is within 15% (or adjacent), and
    the upper end's ``(rows, queries)``: the GPU won there, and lost at the lower end."""
    won, rows_hi = probe(q_hi)
    if not won:
        return None
    won, rows_lo = probe(q_lo)
    if won:
        return rows_lo, q_lo
    lo, hi = q_lo, q_hi
    while hi - lo > 1 and hi > 1.15 * lo:
        mid = min(max(int(round((lo * hi) ** 0.5)), lo + 1), hi - 1)
        won, rows = probe(mid)
        if won:
            hi, rows_hi = mid, rows
        else:
            lo = mid
    return rows_hi, hi


def tukey_crossover(n_topics: int, b_lo: int, b_hi: int, rounds: int, log=print):
    """Work (resamples x topics x systems) from which ``tukey_hsd(..., backend="cuda")`` end
    to end beats the CPU: 8 systems x ``n_topics`` topics, bisection (:func:`bisect_crossover`)
    over ``b_lo .. b_hi`` resamples, both backends best of ``rounds`` (warmed first). Returns
    ``(work, resamples)`` or None (the GPU lost at ``b_hi``)."""
    from uefast.stats import tukey_hsd

    x = np.random.default_rng(1).beta(2.0, 5.0, size=(n_topics, 8))

    def probe(b):
        fns = {be: (lambda be=be: tukey_hsd(x, n_resamples=b, seed=7, backend=be))
               for be in ("cpu", "cuda")}
        for f in fns.values():
            f()
        cpu, gpu = best(fns["cpu"], rounds), best(fns["cuda"], rounds)
        log(f"  tukey_hsd 8 systems x {n_topics:,} topics, B = {b:6d}: CPU {cpu * 1e3:9.2f} ms, "
            f"GPU {gpu * 1e3:9.2f} ms -> {'GPU' if gpu < cpu else 'CPU'}")
        return gpu < cpu, b * n_topics * 8

    return bisect_crossover(probe, b_lo, b_hi)


def print_crossover(cuda, q_lo: int, q_hi: int, rounds: int) -> None:
    """The ``backend="auto"`` threshold to commit (:data:`uefast.gpu.memory.AUTO_MIN_ROWS`):
    the crossover for 1 and 8 systems, and the larger of the two."""
    print(f"\n== backend='auto' crossover (MSLR-shaped, {q_lo}..{q_hi} queries, bisection) ==")
    found = {}
    for ns in (1, 8):
        r = crossover(cuda, ns, q_lo, q_hi, rounds)
        found[ns] = r
        print(f"crossover, {ns} system(s): " + (
            f"GPU faster from {r[0]:,} rows ({r[1]} queries)" if r else
            f"GPU not faster up to {q_hi} queries"))
    if all(found.values()):
        print(f"AUTO_MIN_ROWS to commit: {max(r[0] for r in found.values()):,}")
    else:
        print("AUTO_MIN_ROWS to commit: none (the GPU did not win at the largest size)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true",
                    default=os.environ.get("UEFAST_BENCH_SMALL") == "1")
    ap.add_argument("--queries", type=int, default=None,
                    help="queries of the table (default 31,531; --small: 300)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (mult. of 4)")
    ap.add_argument("--tukey-resamples", type=int, default=10_000,
                    help="randomised Tukey HSD resamples")
    ap.add_argument("--crossover", type=int, nargs=2, metavar=("LO", "HI"), default=None,
                    help="queries bracketing the backend='auto' crossover search (default: "
                         "50 .. the table's queries; --small: 20 ..)")
    ap.add_argument("--no-crossover", action="store_true", help="skip the crossover search")
    args = ap.parse_args(argv)
    os.environ.pop("UEFAST_CUDA_EMULATE", None)
    from uefast.gpu.ranking import _device_reason

    reason = _device_reason()
    if reason is not None:
        print(f"gpu_phases: no usable NVIDIA GPU here, nothing was timed: {reason}",
              file=sys.stderr)
        return NO_GPU_STATUS
    from numba import cuda

    import uefast
    from _data import mslr_table

    for k, v in {**versions(), **device_info(cuda)}.items():
        print(f"{k}: {v}")
    nq = args.queries or (300 if args.small else 31_531)
    t8 = mslr_table(nq)
    tables = {"1 system": t8.select(["qid", "docid", "label", "sys0"]), "8 systems": t8}
    print(f"rows: {t8.num_rows:,}, measures: {MEASURES}, rounds: {args.rounds}")
    for which, t in tables.items():
        print(f"\n== {which} ==")
        ends = {}
        for name, backend, kernel in (("CPU engine", "cpu", None), ("CUDA old (sort)", "cuda",
                                      "sort"), ("CUDA new (counting)", "cuda", "counting")):
            if kernel:
                os.environ["UEFAST_CUDA_KERNEL"] = kernel
            fn = lambda b=backend: uefast.evaluate(t, measures=MEASURES, backend=b)  # noqa: E731
            fn()  # compile / warm up
            ends[name] = best(fn, args.rounds)
            print(f"end to end, {name:22s} {ends[name] * 1e3:10.2f} ms")
        os.environ["UEFAST_CUDA_KERNEL"] = "counting"
        for name in ("CUDA old (sort)", "CUDA new (counting)"):
            print(f"CPU / {name}: {ends['CPU engine'] / ends[name]:.2f}x")
        print("phases of the counting path (per kernel call = per system, median):")
        for k, v in phases(cuda, t, args.rounds).items():
            print(f"  {k:48s} {v:,.0f} B" if k == "H2D bytes" else f"  {k:48s} {v * 1e3:10.3f} ms")
        print("issue 27 phases, old path then new path (best of rounds):")
        for k, v, ratio in issue27_phases(cuda, t, args.rounds) + output_phase(cuda, t,
                                                                                args.rounds):
            tail = "" if ratio is None else f"   old/new {ratio:.2f}x"
            print(f"  {k:52s} {v}" if isinstance(v, bool) else
                  f"  {k:52s} {v * 1e3:10.3f} ms{tail}")
    if not args.no_crossover:
        lo, hi = args.crossover or (20 if args.small else 50, nq)
        print_crossover(cuda, min(lo, hi), hi, args.rounds)
        b_hi = args.tukey_resamples
        print(f"\n== tukey_hsd backend='auto' crossover ({max(1, b_hi // 256)}..{b_hi} "
              "resamples, bisection) ==")
        r = tukey_crossover(nq, max(1, b_hi // 256), b_hi, args.rounds)
        print("AUTO_MIN_WORK to commit: " + (
            f"{r[0]:,} (B = {r[1]} x 8 systems x {nq:,} topics)" if r else
            f"none (the GPU did not win at B = {b_hi})"))
    for k, v in resampling(cuda, nq, args.resamples, args.rounds).items():
        print(f"{k:48s} {v * 1e3:10.2f} ms")
    for k, v in tukey_phase(cuda, nq, args.tukey_resamples, args.rounds):
        print(f"{k:70s} {v}" if isinstance(v, bool) else f"{k:70s} {v * 1e3:10.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
