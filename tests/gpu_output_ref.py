"""The checks of the GPU output assembly (:mod:`uefast.gpu.output`), one body for every backend:
``tests/test_gpu_output.py`` runs them emulated and on a GPU where one exists,
``tests/cuda_simulator_output.py`` runs them in numba's CUDA simulator. Each returns a dict of
findings (JSON-able) that the tests assert on."""
from __future__ import annotations

import json

import numpy as np

import uefast
from gpu_device_ref import compare, device_case
from uefast.gpu import evaluate_device
from uefast.gpu import output as O
from uefast.ue import degenerate_mask, ue_scores

MEASURES = ["nDCG@10", "AP", "P@5", "RR"]
POLICIES = ("zero", "nan", "drop")


def assembly_case(seed: int = 0, ns: int = 3, nseg: int = 9, nm: int = 4):
    """Random device-side inputs: values, IUB/REB with degenerate (query, measure) cells
    (IUB = REB, both 0, and IUB - REB within 1e-12 of IUB), a ``keep`` that skips segments."""
    rng = np.random.default_rng(seed)
    iub = rng.random((nseg, nm)) * 3
    reb = iub * rng.random((nseg, nm)) * 0.6
    iub[1] = reb[1] = 0.0  # no relevant document: degenerate for every measure
    reb[2, 1] = iub[2, 1]  # one degenerate cell
    reb[4, 2] = iub[4, 2] * (1 - 1e-13)  # degenerate within the tolerance
    vals = iub[None] * rng.random((ns, nseg, nm))
    vals[0, 3, 0] = 0.0
    vals[1, 5, :] = reb[5]  # A = REB: V2 = 0
    keep = np.array([0, 1, 2, 4, 5, 7, 8], np.int64)  # segments 3 and 6 empty
    nrel = rng.integers(0, 9, (nseg, nm))
    njud = rng.integers(1, 50, nseg)
    sizes = rng.integers(1, 60, nseg)
    return vals, keep, iub, reb, nrel, njud, sizes


def expected_columns(vals, keep, iub, reb, nrel, njud, sizes, degenerate):
    """The CPU's rows (system, kept segment, measure) with NumPy and :func:`uefast.ue.ue_scores`,
    the degenerate ones removed for ``drop``."""
    ns, _, nm = vals.shape
    s, t, m = np.meshgrid(np.arange(ns), np.arange(len(keep)), np.arange(nm), indexing="ij")
    s, q, m = s.reshape(-1), keep[t.reshape(-1)], m.reshape(-1)
    cols = {"value": vals[s, q, m], "iub": iub[q, m], "reb": reb[q, m], "n_docs": sizes[q],
            "n_judged": njud[q], "n_rel": nrel[q, m]}
    cols["ue_v1"], cols["ue_v2"] = ue_scores(cols["value"], cols["iub"], cols["reb"], degenerate)
    rows = np.arange(len(s))
    deg = degenerate_mask(cols["iub"], cols["reb"])
    keep_rows = ~deg if degenerate == "drop" else np.ones(len(s), bool)
    return {k: v[keep_rows] for k, v in cols.items()}, rows[keep_rows], rows[~keep_rows]


def check_assembly(emulate: bool, to_device=None, count_to_host=None) -> dict:
    """:func:`uefast.gpu.output.assemble_columns` against :func:`expected_columns`, every
    policy, with and without UE: columns bitwise equal (NaN patterns included), row indexes and
    dropped rows equal. ``to_device``: how inputs reach the device (None: host arrays);
    ``count_to_host``: a callable returning the device-to-host copies made so far."""
    case = assembly_case()
    out = {}
    for degenerate in POLICIES:
        for ue in (True, False):
            args = case if to_device is None else [
                case[1] if i == 1 else to_device(np.ascontiguousarray(a))
                for i, a in enumerate(case)]
            before = count_to_host() if count_to_host else 0
            got = O.assemble_columns(*args, ue=ue, degenerate=degenerate, emulate=emulate)
            copies = (count_to_host() - before) if count_to_host else None
            exp, rows, dropped = expected_columns(*case, degenerate)
            names = [c for c in exp if ue or not c.startswith("ue_")]
            out[f"{degenerate}/{'ue' if ue else 'no-ue'}"] = {
                "columns_equal": all(
                    np.array_equal(np.asarray(got.cols[c]).view(np.int64),
                                   np.asarray(exp[c], dtype=got.cols[c].dtype).view(np.int64))
                    for c in names),
                "rows_equal": np.array_equal(got.rows, rows),
                "dropped_equal": np.array_equal(got.dropped, dropped),
                "n_dropped": int(len(dropped)),
                "d2h_copies": copies}
    return out


def check_evaluate_device(columns_to_device) -> dict:
    """``evaluate_device`` against ``uefast.evaluate`` on the host table, every degenerate
    policy with and without UE (two queries with no relevant document, so degenerate rows
    exist): keys and counts equal, values / IUB / REB / V1 / V2 within 1e-12 (NaN where the
    CPU has NaN), the same dropped rows and row count; and V1 / V2 bitwise equal to
    :func:`uefast.ue.ue_scores` of the table's own value, IUB and REB."""
    t, _ = device_case(7, nq=8, max_docs=15)
    cols = {c: t[c].to_numpy().copy() for c in t.column_names}
    cols["label"][np.isin(cols["qid"], [1, 4])] = 0  # degenerate queries
    import pyarrow as pa

    t = pa.table(cols)
    out = {}
    for degenerate in POLICIES:
        for ue in (True, False):
            a = uefast.evaluate(t, measures=MEASURES, ue=ue, degenerate=degenerate)
            b = evaluate_device(columns_to_device(cols), measures=MEASURES, ue=ue,
                                           degenerate=degenerate)
            r = compare(a, b)
            keys = [("system", "ascending"), ("qid", "ascending"), ("measure", "ascending")]
            sa, sb = a.sort_by(keys), b.sort_by(keys)
            for c in ("ue_v1", "ue_v2"):
                x, y = sa[c].to_numpy(zero_copy_only=False), sb[c].to_numpy(zero_copy_only=False)
                if ue:
                    r[c + "_nan_equal"] = bool(np.array_equal(np.isnan(x), np.isnan(y)))
                    ok = ~np.isnan(x)
                    r[c] = float(np.abs(x[ok] - y[ok]).max(initial=0.0))
                else:
                    r[c + "_null"] = sb[c].null_count == len(sb)
            if ue:
                v1, v2 = ue_scores(b["value"].to_numpy(), b["iub"].to_numpy(),
                                   b["reb"].to_numpy(), degenerate)
                r["ue_is_the_formula"] = bool(
                    np.array_equal(v1.view(np.int64), b["ue_v1"].to_numpy().view(np.int64))
                    and np.array_equal(v2.view(np.int64), b["ue_v2"].to_numpy().view(np.int64)))
            da = sorted(map(tuple, json.loads(a.schema.metadata[b"uefast.dropped"])))
            db = sorted(map(tuple, json.loads(b.schema.metadata[b"uefast.dropped"])))
            r["dropped_equal"] = [list(map(str, x)) for x in da] == [list(map(str, x))
                                                                    for x in db]
            r["n_dropped"] = len(db)
            r["rows"] = [a.num_rows, b.num_rows]
            r["schema_equal"] = a.schema.remove_metadata() == b.schema.remove_metadata()
            r["table_equal"] = all(_bitwise_equal(sa[c], sb[c]) for c in sa.column_names)
            out[f"{degenerate}/{'ue' if ue else 'no-ue'}"] = r
    return out


def _bitwise_equal(x, y) -> bool:
    """Two Arrow columns equal bit for bit (NaN equal to the same NaN)."""
    import pyarrow as pa

    if x.type != y.type or x.null_count != y.null_count:
        return False
    if pa.types.is_floating(x.type) and x.null_count == 0:
        return bool(np.array_equal(x.to_numpy().view(np.int64), y.to_numpy().view(np.int64)))
    return x.equals(y)


def assert_assembly(res: dict, want_copies: int | None = None) -> None:
    assert len(res) == 6
    for k, v in res.items():
        assert v["columns_equal"] and v["rows_equal"] and v["dropped_equal"], (k, v)
        # segment 1 (4 measures) and two single cells, in each of 3 systems
        assert v["n_dropped"] == (6 * 3 if k.startswith("drop") else 0), (k, v)
        if want_copies is not None:
            assert v["d2h_copies"] == want_copies, (k, v)


def assert_evaluate_device(res: dict, exact: bool = True) -> None:
    """``exact``: the whole table equal to the CPU engine's (emulation, the simulator: no
    floating-point contraction); on a GPU, values within 1e-12."""
    assert len(res) == 6
    for k, r in res.items():
        assert r["table_equal"] or not exact, (k, r)
        assert r["keys_equal"] and r["ints_equal"] and r["dropped_equal"], (k, r)
        assert r["schema_equal"] and r["rows"][0] == r["rows"][1], (k, r)
        assert max(r["value"], r["iub"], r["reb"]) <= 1e-12, (k, r)
        if k.endswith("/ue"):
            assert r["ue_is_the_formula"], k
            assert r["ue_v1_nan_equal"] and r["ue_v2_nan_equal"], (k, r)
            assert max(r["ue_v1"], r["ue_v2"]) <= 1e-12, (k, r)
        else:
            assert r["ue_v1_null"] and r["ue_v2_null"], (k, r)
        # at least two queries without a relevant document x 4 measures x 3 systems
        assert (r["n_dropped"] >= 24) if k.startswith("drop") else r["n_dropped"] == 0, (k, r)


class FakePartitioned:
    """A stand-in for a Dask-cuDF DataFrame: ``npartitions`` and ``to_delayed()`` (real
    ``dask.delayed`` objects), each partition a mapping of column name to a device-array
    stand-in."""

    def __init__(self, parts: list[dict]):
        self._parts = parts
        self.npartitions = len(parts)

    def to_delayed(self):
        import dask

        return [dask.delayed(lambda p=p: p)() for p in self._parts]


def check_partitions(to_device) -> dict:
    """``evaluate_device`` of a partitioned frame (4 partitions at uneven cuts, one empty, the
    rows of most queries split across partitions) against ``uefast.evaluate`` on the whole host
    table, every tie policy: the whole table bit for bit (NaN patterns included)."""
    t, _ = device_case(11, nq=9, max_docs=25)
    cols = {c: t[c].to_numpy() for c in t.column_names}
    n = t.num_rows
    cuts = [0, n // 5, n // 5, (3 * n) // 5, n]  # partition 1 empty
    parts = [{c: to_device(np.ascontiguousarray(v[a:b])) for c, v in cols.items()}
             for a, b in zip(cuts[:-1], cuts[1:])]
    frame = FakePartitioned(parts)
    split = len({int(q) for q in cols["qid"][:cuts[2]]} & {int(q) for q in cols["qid"][cuts[2]:]})
    out = {"queries_split": split}
    keys = [("system", "ascending"), ("qid", "ascending"), ("measure", "ascending")]
    for ties in ("input", "expected", "trec_eval"):
        a = uefast.evaluate(t, measures=MEASURES, ties=ties).sort_by(keys)
        b = evaluate_device(frame, measures=MEASURES, ties=ties).sort_by(keys)
        out[ties] = all(_bitwise_equal(a[c], b[c]) for c in a.column_names) and \
            a.num_rows == b.num_rows
    # a partition with other columns, or another dtype, is refused with its index
    bad = [dict(parts[0]), {k: v for k, v in parts[2].items() if k != "s_tied"}]
    out["columns_error"] = _error(lambda: evaluate_device(FakePartitioned(bad), measures=["AP"]))
    bad = [dict(parts[0]), dict(parts[2], label=to_device(cols["label"][cuts[2]:cuts[3]]
                                                        .astype(np.int32)))]
    out["dtype_error"] = _error(lambda: evaluate_device(FakePartitioned(bad), measures=["AP"]))
    return out


def _error(fn) -> str:
    from uefast.errors import InputError

    try:
        fn()
    except InputError as e:
        return str(e)
    return ""


def assert_partitions(res: dict) -> None:
    assert res["queries_split"] >= 2
    assert res["input"] and res["expected"] and res["trec_eval"], res
    assert "partition 1 has columns" in res["columns_error"], res
    assert "column 'label': partition 1 holds int32, partition 0 holds int8" in \
        res["dtype_error"], res
