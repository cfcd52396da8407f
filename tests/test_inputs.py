"""Input shapes, bad input and row accounting."""
from __future__ import annotations

import json

import numba
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import uefast
from uefast import InputError
from conftest import letor_table
from uefast.sample import letor_sample, mslr_like


def _letor():
    return pa.table({"qid": [1, 1, 1, 2, 2], "docid": [1, 2, 3, 4, 5], "label": [0, 2, 1, 1, 0],
                     "score": [0.3, 0.2, 0.9, 0.5, 0.1]})


def _values(t):
    return sorted(zip(t["system"].to_pylist(), t["qid"].to_pylist(), t["measure"].to_pylist(),
                      t["value"].to_pylist(), t["reb"].to_pylist()))


@pytest.mark.parametrize("convert", [
    lambda t, tmp: t,
    lambda t, tmp: t.to_batches()[0],
    lambda t, tmp: pa.RecordBatchReader.from_batches(t.schema, t.to_batches()),
    lambda t, tmp: pl.from_arrow(t),
    lambda t, tmp: pl.from_arrow(t).lazy(),
    lambda t, tmp: t.to_pandas(),
    lambda t, tmp: (pq.write_table(t, tmp / "x.parquet"), str(tmp / "x.parquet"))[1],
    lambda t, tmp: t.to_pydict(),
], ids=["arrow", "batch", "reader", "polars", "lazy", "pandas", "parquet", "dict"])
def test_every_input_type_gives_the_same_result(convert, tmp_path):
    t = letor_sample()
    want = _values(uefast.evaluate(t))
    assert _values(uefast.evaluate(convert(t, tmp_path))) == want


def test_multichunk_and_dictionary_columns():
    t = letor_sample()
    want = _values(uefast.evaluate(t))
    chunked = pa.concat_tables([t.slice(0, 500), t.slice(500)])
    assert chunked.column("qid").num_chunks == 2
    assert _values(uefast.evaluate(chunked)) == want
    d = t.set_column(0, "qid", pa.compute.dictionary_encode(t.column("qid")))
    assert _values(uefast.evaluate(d)) == want


def test_dictionary_listing_a_value_twice_groups_by_value():
    """Arrow allows a dictionary to hold one value at two indices: rows are grouped (and judgments
    checked for duplicates) by the value, not by the index."""
    qid = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 1], pa.int8()), pa.array(["q", "q"]))
    t = pa.table({"qid": qid, "docid": ["a", "b", "c", "d"], "label": [1, 0, 0, 1],
                  "s": [4.0, 3.0, 2.0, 1.0]})
    out = uefast.evaluate(t, measures=["AP"])
    assert out.select(["qid", "value", "n_docs"]).to_pylist() == [
        {"qid": "q", "value": 0.75, "n_docs": 4}]
    run = pa.table({"qid": ["q"] * 4, "docid": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pa.table({"qid": qid, "docid": ["a", "b", "c", "d"], "label": [1, 0, 0, 1]})
    out = uefast.evaluate(run, qrels, ["AP"])
    assert out.select(["value", "n_judged"]).to_pylist() == [{"value": 0.75, "n_judged": 4}]
    dup = qrels.set_column(1, "docid", pa.array(["a", "b", "a", "d"]))
    with pytest.raises(InputError, match="duplicate judgment for qid 'q' docid 'a': rows 0 and 2"):
        uefast.evaluate(run, dup, ["AP"])


def test_keys_beyond_int64_or_of_other_types_are_refused():
    big = pa.array([2**63 + 1] * 2, pa.uint64())
    with pytest.raises(InputError, match=r"column 'qid' has 9223372036854775809 at row 0, beyond "
                                         r"int64.*cast the column to string"):
        uefast.evaluate(pa.table({"qid": big, "label": [1, 0], "s": [0.1, 0.2]}), measures=["P@1"])
    in_dict = pa.DictionaryArray.from_arrays(pa.array([0, 0]), pa.array([2**63 + 1], pa.uint64()))
    with pytest.raises(InputError, match="column 'qid' has 9223372036854775809, beyond int64"):
        uefast.evaluate(pa.table({"qid": in_dict, "label": [1, 0], "s": [0.1, 0.2]}),
                        measures=["P@1"])
    floats = pa.DictionaryArray.from_arrays(pa.array([0, 0]), pa.array([1.5]))
    with pytest.raises(InputError, match="column 'qid' must hold integers or strings, got "
                                         "dictionary<values=double"):
        uefast.evaluate(pa.table({"qid": floats, "label": [1, 0], "s": [0.1, 0.2]}),
                        measures=["P@1"])


def test_long_format_with_system_column_equals_wide_format():
    t = letor_sample()
    systems = ["sys0", "sys1", "sys2"]
    parts = [pa.table({"system": [s] * t.num_rows, "qid": t["qid"], "docid": t["docid"],
                       "label": t["label"], "score": t[s]}) for s in systems]
    long = pa.concat_tables(parts)
    a = uefast.evaluate(long, measures=["nDCG@10", "AP", "ERR@10"])
    b = uefast.evaluate(t, measures=["nDCG@10", "AP", "ERR@10"], score_columns=systems)
    assert _values(a) == _values(b)


def test_output_schema_order_and_metadata():
    t = letor_sample()
    res = uefast.evaluate(t, measures=["AP", "nDCG@10"])
    assert res.column_names == ["system", "qid", "measure", "value", "iub", "reb", "ue_v1",
                                "ue_v2", "n_docs", "n_judged", "n_rel"]
    assert res.schema.field("qid").type == pa.int64()
    assert res["measure"].to_pylist()[:4] == ["AP", "nDCG@10", "AP", "nDCG@10"]
    meta = res.schema.metadata
    assert meta[b"uefast.version"] == uefast.__version__.encode()
    settings = json.loads(meta[b"uefast.settings"])
    assert settings["measures"] == ["AP", "nDCG@10"] and settings["ties"] == "trec_eval"
    info = json.loads(meta[b"uefast.info"])
    assert info["rows_in"] == info["rows_evaluated"] == t.num_rows
    assert res.num_rows == 4 * 60 * 2


def test_string_qids_keep_strings_in_output():
    t = mslr_like(30, 2, seed=1, string_ids=True)
    res = uefast.evaluate(t)
    assert res.schema.field("qid").type == pa.string()
    assert res["qid"][0].as_py() == "q0"


def test_aggregate_is_the_mean_over_queries():
    res = uefast.evaluate(letor_sample(), measures=["AP"])
    agg = uefast.aggregate(res)
    assert agg.column_names == ["system", "measure", "n_queries", "value", "iub", "reb", "ue_v1", "ue_v2"]
    vals = np.array([r["value"] for r in res.to_pylist() if r["system"] == "sys0"])
    row = agg.to_pylist()[0]
    assert row["system"] == "sys0" and row["n_queries"] == 60
    assert row["value"] == pytest.approx(vals.mean(), abs=1e-15)


def test_degenerate_policies():
    t = pa.table({"qid": [1, 1, 2, 2], "label": [0, 0, 1, 0], "score": [1.0, 0.0, 1.0, 0.0]})
    zero = uefast.evaluate(t, measures=["AP"])
    assert zero["ue_v2"].to_pylist() == [0.0, 1.0]
    nan = uefast.evaluate(t, measures=["AP"], degenerate="nan")
    assert np.isnan(nan["ue_v2"][0].as_py()) and np.isnan(nan["ue_v1"][0].as_py())
    assert uefast.aggregate(nan)["ue_v2"][0].as_py() == 1.0  # NaN skipped
    drop = uefast.evaluate(t, measures=["AP"], degenerate="drop")
    assert drop["qid"].to_pylist() == [2]
    assert json.loads(drop.schema.metadata[b"uefast.dropped"]) == [["score", 1, "AP"]]
    off = uefast.evaluate(t, measures=["AP"], ue=False)
    assert off["ue_v1"].null_count == 2


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("mutate,match", [
    (lambda t: t.drop_columns(["qid"]), "missing column 'qid'"),
    (lambda t: t.drop_columns(["label"]), "missing column 'label'"),
    (lambda t: t.set_column(3, "score", pa.array([0.1, np.nan, 0.2, 0.3, 0.4])), "NaN at row 1"),
    (lambda t: t.append_column("s2", pa.array([0.1, 0.5, 0.2, np.nan, np.nan])),
     "score column 's2' has NaN at row 3"),
    (lambda t: t.set_column(2, "label", pa.array([0, 1.5, 1, 1, 0])), r"row 1 has 1\.5"),
    (lambda t: t.set_column(2, "label", pa.array(["a", "b", "c", "d", "e"])), "integer labels"),
    (lambda t: t.set_column(2, "label", pa.array([0, None, 1, 1, 0], pa.int64())), "null value.*first at row 1"),
    (lambda t: t.set_column(1, "docid", pa.array([1, 2, 1, 4, 5])), r"duplicate docid 1 .*rows 0 and 2"),
    (lambda t: t.set_column(0, "qid", pa.array([1.0, 1.0, 1.0, 2.0, 2.0])), "must hold integers or strings"),
    (lambda t: t.slice(0, 0), "no rows"),
    (lambda t: t.drop_columns(["score"]), "no score column found"),
    (lambda t: t.set_column(3, "score", pa.array(["a"] * 5)), "no score column found"),
    # beyond int64: a label that wrapped or saturated counted as non-relevant, silently
    (lambda t: t.set_column(2, "label", pa.array([0, 1e20, 1, 1, 0])), r"label 1e\+20 at row 1, beyond the int64"),
    (lambda t: t.set_column(2, "label", pa.array([0, 1, 2 ** 63 + 5, 1, 0], pa.uint64())),
     "label 9223372036854775813 at row 2, beyond the int64"),
    (lambda t: t.set_column(1, "docid", pa.array([1, 2, 2 ** 63, 4, 5], pa.uint64())),
     "column .docid. has 9223372036854775808 at row 2, beyond int64"),
])
def test_bad_letor_input_names_column_row_and_value(mutate, match):
    with pytest.raises(InputError, match=match):
        uefast.evaluate(mutate(_letor()))


def test_negative_labels_clamp_or_error():
    t = _letor().set_column(2, "label", pa.array([0, 2, -1, 1, 0]))
    clamp = uefast.evaluate(t, measures=["AP"])
    same = uefast.evaluate(_letor().set_column(2, "label", pa.array([0, 2, 0, 1, 0])), measures=["AP"])
    assert clamp["value"].to_pylist() == same["value"].to_pylist()
    with pytest.raises(InputError, match="negative label -1 at row 2"):
        uefast.evaluate(t, measures=["AP"], negative_labels="error")


@pytest.mark.parametrize("kw,match", [
    ({"ties": "random"}, "`ties` must be one of"),
    ({"reb": "mc"}, "`reb` must be one of"),
    ({"degenerate": "skip"}, "`degenerate` must be one of"),
    ({"queries": "run"}, "`queries` must be one of"),
    ({"rel_level": 0}, "`rel_level` must be an integer >= 1, got 0"),
    ({"score_columns": ["nope"]}, "missing score column 'nope'"),
])
def test_bad_settings(kw, match):
    with pytest.raises(InputError, match=match):
        uefast.evaluate(_letor(), **kw)


def test_unsupported_input_type():
    with pytest.raises(InputError, match="unsupported type list"):
        uefast.evaluate([1, 2, 3])
    with pytest.raises(InputError, match="file not found"):
        uefast.evaluate("/nonexistent.parquet")


def _trec():
    run = pa.table({"qid": ["1", "1", "1", "2", "3"], "docid": ["a", "b", "c", "a", "z"],
                    "score": [3.0, 2.0, 1.0, 1.0, 1.0]})
    qrels = pa.table({"qid": ["1", "1", "1", "2"], "docid": ["a", "c", "d", "b"],
                      "label": [1, 0, 2, 1]})
    return run, qrels


def test_trec_row_accounting():
    run, qrels = _trec()
    res = uefast.evaluate(run, qrels, ["AP", "R@10"])
    info = json.loads(res.schema.metadata[b"uefast.info"])
    assert info["rows_in"] == 5
    assert info["rows_evaluated"] + info["run_rows_query_not_in_qrels"] == 5
    assert info["run_queries_not_in_qrels"] == 1
    rows = {(r["qid"], r["measure"]): r for r in res.to_pylist()}
    # query 1: d (label 2) never retrieved still counts in Np and in the ideal ranking
    assert rows[("1", "AP")]["n_rel"] == 2 and rows[("1", "AP")]["value"] == pytest.approx(0.5)
    assert rows[("1", "R@10")]["value"] == pytest.approx(0.5)
    assert rows[("1", "AP")]["n_judged"] == 3 and rows[("1", "AP")]["n_docs"] == 3
    assert rows[("2", "AP")]["value"] == 0.0


@pytest.mark.parametrize("mutate,match", [
    (lambda r, q: (r, q.set_column(0, "qid", pa.array([1, 1, 1, 2]))), "mismatched dtypes.*'qid'"),
    (lambda r, q: (r.set_column(1, "docid", pa.array(["a", "b", "a", "a", "z"])), q),
     r"run: duplicate docid 'a' .*rows 0 and 2"),
    (lambda r, q: (r, q.set_column(1, "docid", pa.array(["a", "a", "d", "b"]))),
     "qrels: duplicate judgment for qid '1' docid 'a'"),
    (lambda r, q: (r.drop_columns(["score"]), q), "run: missing column 'score'"),
    (lambda r, q: (r, q.slice(0, 0)), "qrels: the input has no rows"),
])
def test_bad_trec_input(mutate, match):
    run, qrels = mutate(*_trec())
    with pytest.raises(InputError, match=match):
        uefast.evaluate(run, qrels)


def test_pandas_and_polars_trec_inputs():
    run, qrels = _trec()
    want = _values(uefast.evaluate(run, qrels))
    assert _values(uefast.evaluate(run.to_pandas(), pl.from_arrow(qrels))) == want


@pytest.mark.parametrize("docs", [[5, 10**12, 7, 5 + 0, 9], ["a", "bb", "c", "a", "d"]])
def test_duplicates_found_on_sparse_ints_and_strings(docs):
    """Sparse integer docids take the hashed path, dense ones the direct table: both must find it."""
    t = pa.table({"qid": [1] * 5, "docid": docs, "label": [0, 1, 0, 1, 0],
                  "score": [0.5, 0.4, 0.3, 0.2, 0.1]})
    with pytest.raises(InputError, match=r"duplicate docid .* rows 0 and 3"):
        uefast.evaluate(t)


def test_kernels_compiled_for_canonical_argument_types():
    """Whatever the input's integer widths, writability or docid type, the ranking and judged
    passes get read-only arrays and int8 / int64 labels only, so that they are compiled (~20-40 s
    each) and cached for at most two signatures (one per label type)."""
    from uefast.kernels.dispatch import K_AP, K_NDCG
    from uefast.kernels.driver import chunk_kernels, kernel_set

    base = letor_table([([0, 1, 2, 1], {"s": [0.3, 0.1, 0.2, 0.2]}, [5, 7, 6, 8]),
                        ([3, 0], {"s": [1.0, 1.0]}, [1, 2])])
    variants = [base.set_column(2, "label", base["label"].cast(t))
                for t in (pa.int16(), pa.int32(), pa.uint8(), pa.float64())]
    variants.append(base.set_column(1, "docid", base["docid"].cast(pa.string())))
    variants.append(base.set_column(1, "docid", base["docid"].cast(pa.large_string())))
    variants.append(base.set_column(2, "label", pa.array([0, 1, 200, 1, 3, 0])))  # int64 labels
    for t in variants:
        for ties in ("trec_eval", "input"):
            uefast.evaluate(t, measures=["nDCG@3", "AP"], ties=ties)
    data_args = {"offsets", "perm", "labels", "scores", "score_bits", "qref", "doc_int",
                 "doc_off", "doc_data", "doc_rising", "joff", "jperm", "jlab"}
    for kernel in chunk_kernels(kernel_set([K_NDCG, K_AP])):  # the ones evaluate used
        assert kernel.signatures
        names = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
        assert data_args & set(names)
        for sig in kernel.signatures:
            for name, ty in zip(names, sig):
                if name in data_args:
                    assert not ty.mutable, (kernel.py_func.__name__, name, ty)
            labels = sig[names.index("labels" if "labels" in names else "jlab")]
            assert labels.dtype in (numba.int8, numba.int64), labels


@pytest.mark.parametrize("runs", [0, 1, 3, 63, 64, 200])
def test_output_string_columns_equal_arrow_take(runs):
    """The output's system and measure columns, built from their runs' bytes, equal Arrow's take
    (non-ASCII names, empty names, few and many runs, the take fallback at >= 64 runs)."""
    from uefast._output import _measure_column, _runs_take
    from uefast.measures import parse_measures

    rng = np.random.default_rng(runs)
    names = pa.array(["sys0", "", "système-β", "a" * 40, "x"], pa.string())
    vals = rng.integers(0, len(names), runs)
    idx = np.repeat(vals, rng.integers(1, 50, runs)).astype(np.int64)
    got = _runs_take(names, idx)
    assert got.type == pa.string() and got.equals(names.take(pa.array(idx, pa.int64())))
    mlist = parse_measures(["nDCG@10", "AP", "P(rel=2)@5"])
    col = _measure_column(mlist, runs)
    assert col.to_pylist() == [str(m) for m in mlist] * runs


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.float32,
                                   np.float64, np.bool_])
def test_numeric_array_equals_pa_array(dtype):
    from uefast.inputs import numeric_array

    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 8, 9, 1000):
        a = (rng.normal(size=n) * 100).astype(dtype)
        assert numeric_array(a).equals(pa.array(a))
        assert numeric_array(a[::3]).equals(pa.array(a[::3]))  # not contiguous


def test_numpy_view_equals_to_numpy():
    from uefast.inputs import numpy_view

    base = pa.array(np.arange(100, dtype=np.int16))
    cases = [base, base.slice(13, 50), base.slice(100), pa.array(np.arange(5.0)),
             pa.array(np.arange(5, dtype=np.float32)).slice(2),
             pa.chunked_array([base.slice(3, 10)]), pa.chunked_array([base, base.slice(7)]),
             pa.chunked_array([], pa.int64())]
    for arr in cases:
        v = numpy_view(arr)
        ref = arr.to_numpy()
        assert v.dtype == ref.dtype and np.array_equal(v, ref), arr
        assert not v.flags.writeable
    # other types and nulls: pyarrow's own to_numpy, unchanged (a null-holding Array refuses)
    with_null = pa.array([1, None, 3])
    with pytest.raises(pa.ArrowInvalid):
        numpy_view(with_null)
    assert np.allclose(numpy_view(pa.chunked_array([with_null])), [1, np.nan, 3], equal_nan=True)
    # booleans (bit-packed, no view): unpacked, sliced at any bit offset
    bools = pa.array(np.arange(37) % 3 == 0)
    for arr in (bools, bools.slice(5), bools.slice(9, 20), bools.slice(37), pa.chunked_array([bools, bools])):
        v = numpy_view(arr)
        assert v.dtype == bool and np.array_equal(v, arr.to_numpy(zero_copy_only=False)), arr
    with pytest.raises(pa.ArrowInvalid):
        numpy_view(pa.array([True, None]))


def test_text_array_equals_pa_array():
    from uefast.inputs import text_array

    for vals in ([], ["run"], ["sys0", "", "nDCG(gain=exp)@10", "é✓"]):
        assert text_array(vals).equals(pa.array(vals, pa.string()))


@pytest.mark.parametrize("argv", [
    ["evaluate", "--per-query"],
    ["compare", "PQ", "--measure", "AP", "--method", "bootstrap", "--correction", "holm"],
    ["compare", "PQ", "--measure", "AP", "--method", "tukey_hsd"],
    ["trec_eval", "-q", "--ue", "--format", "tsv", "QRELS", "RUN"],
])
def test_commands_do_not_import_pandas(argv, tmp_path):
    """pyarrow imports pandas (where installed) from ``pa.array(ndarray or list)``,
    ``to_numpy()``, ``pa.scalar()`` and ``import pyarrow.dataset``: ~0.3-0.4 s of every command.
    The evaluate, compare and trec_eval (--ue) paths avoid them."""
    import subprocess
    import sys

    pytest.importorskip("pandas")
    pq_path = tmp_path / "pq.parquet"
    pq.write_table(uefast.evaluate(letor_sample(), measures=["AP"]), pq_path)
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 d{d} {(q + d) % 3}\n" for q in range(1, 4)
                                            for d in range(6)))
    (tmp_path / "r.txt").write_text("".join(f"{q} Q0 d{d} {d} {10 - d}.5 sys\n" for q in range(1, 4)
                                            for d in range(8)))
    files = {"PQ": pq_path, "QRELS": tmp_path / "q.txt", "RUN": tmp_path / "r.txt"}
    argv = [str(files[a]) if a in files else a for a in argv]
    code = ("import sys, io, contextlib\nfrom uefast.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({argv!r}) == 0\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_numpy_view_null_value():
    from uefast.inputs import numpy_view

    arr = pa.array([5, None, 7, None, 9, 10, None, 12, 13, None], pa.int32())
    for a in (arr, arr.slice(1), arr.slice(3, 5), pa.chunked_array([arr.slice(0, 4), arr.slice(4)])):
        ref = np.array([-1 if x is None else x for x in a.to_pylist()], np.int32)
        v = numpy_view(a, null_value=-1)
        assert v.dtype == np.int32 and np.array_equal(v, ref)


def test_score_columns_empty_or_repeated():
    for cols, match in (([], "`score_columns` is empty"), (["score", "score"], "names a column twice")):
        with pytest.raises(InputError, match=match):
            uefast.evaluate(_letor(), measures=["AP"], score_columns=cols)


def test_measure_objects_and_err_lmax_checked_against_the_data():
    from uefast.measures import Measure

    t = _letor()  # labels up to 2
    with pytest.raises(uefast.MeasureParseError, match=r"measure 'P@5': `rel` must be an integer >= 1, got 0"):
        uefast.evaluate(t, measures=[Measure("P", 5, (("rel", 0),))])
    with pytest.raises(InputError, match=r"'ERR\(lmax=1\)@3': the data has label 2, above lmax=1"):
        uefast.evaluate(t, measures=["ERR(lmax=1)@3"])
    assert uefast.evaluate(t, measures=["ERR(lmax=2)@3"]).equals(uefast.evaluate(t, measures=["ERR@3"])
                                                                 .set_column(2, "measure", pa.array(["ERR(lmax=2)@3"] * 2)))


def test_string_view_keys_equal_string_keys():
    """string_view columns (Polars' newest Arrow export, DuckDB) were refused."""
    t = _letor().set_column(1, "docid", pa.array(["d1", "d2", "d3", "d4", "d5"]))
    t = t.set_column(0, "qid", t["qid"].cast(pa.string()))
    sv = t.set_column(0, "qid", t["qid"].cast(pa.string_view())).set_column(
        1, "docid", t["docid"].cast(pa.string_view()))
    assert uefast.evaluate(sv, measures=["AP", "nDCG@3"]).equals(uefast.evaluate(t, measures=["AP", "nDCG@3"]))
    run, qrels = sv.drop_columns(["label"]), sv.drop_columns(["score"])
    assert uefast.evaluate(run, qrels, measures=["AP"]).equals(
        uefast.evaluate(t.drop_columns(["label"]), t.drop_columns(["score"]), measures=["AP"]))


def test_exponential_gains_beyond_float64_refused():
    """ERR and exponential-gain DCG need 2^label: beyond label 1023 it is not finite (ERR gave
    value 0, IUB 0, REB NaN silently). nDCG's exponential gains are scaled (a ratio of gain
    sums: exact at any scale), so it takes any label; raw DCG refuses labels above 960."""
    t = _letor().set_column(2, "label", pa.array([0, 1024, 1, 1, 0]))
    for m, match in (("ERR@3", "the data has label 1024 \\(lmax\\): 2\\^lmax is not finite"),
                     ("ERR(lmax=2000)@3", "lmax=2000: 2\\^lmax is not finite"),
                     ("DCG(gain=exp)@3", "label 1024; sums of the gains 2\\^label - 1")):
        with pytest.raises(InputError, match=match):
            uefast.evaluate(t, measures=[m])
    ok = uefast.evaluate(t.set_column(2, "label", pa.array([0, 1023, 1, 1, 0])), measures=["ERR@3", "nDCG(gain=exp)@3"])
    assert all(np.isfinite(ok[c].to_numpy()).all() for c in ("value", "iub", "reb"))
    big = uefast.evaluate(t, measures=["nDCG(gain=exp)@3"])
    assert all(np.isfinite(big[c].to_numpy()).all() for c in ("value", "iub", "reb"))
    assert uefast.evaluate(t, measures=["nDCG@3", "AP"])["value"].null_count == 0  # linear: fine


def test_score_columns_are_never_ignored():
    """With a system column each row is one system's score: one score column, not several (the
    first was used while the metadata listed all); a TREC-style run takes score=, and
    score_columns there was silently ignored."""
    t = pa.table({"system": ["A", "A"], "qid": ["q", "q"], "docid": ["1", "2"], "label": [1, 0],
                  "s1": [1.0, 2.0], "s2": [2.0, 1.0]})
    with pytest.raises(InputError, match=r"`score_columns`=\['s1', 's2'\]: with a 'system' column"):
        uefast.evaluate(t, measures=["P@1"], score_columns=["s1", "s2"])
    out = uefast.evaluate(t, measures=["P@1"], score_columns=["s2"])
    assert out["value"].to_pylist() == [1.0]
    run = pa.table({"qid": ["q", "q"], "docid": ["1", "2"], "score": [1.0, 2.0],
                    "other": [2.0, 1.0]})
    qrels = pa.table({"qid": ["q"], "docid": ["1"], "label": [1]})
    for src in (run, run.to_reader()):
        with pytest.raises(InputError, match="applies to LETOR-style input"):
            uefast.evaluate(src, qrels, ["P@1"], score_columns=["other"])
    assert uefast.evaluate(run, qrels, ["P@1"], score="other")["value"].to_pylist() == [1.0]


def test_duplicate_column_names_and_mixed_pandas_columns_are_input_errors():
    """Were a KeyError / an ArrowTypeError from pyarrow."""
    import pandas as pd

    t = pa.Table.from_arrays([pa.array([1, 1]), pa.array([1, 0]), pa.array([0.1, 0.2]),
                              pa.array([0.3, 0.4])], names=["qid", "label", "s", "s"])
    with pytest.raises(InputError, match="run: 2 columns are named 's'"):
        uefast.evaluate(t, measures=["P@1"])
    mixed = pd.DataFrame({"qid": [1, "a"], "label": [1, 0], "s": [0.1, 0.2]})
    with pytest.raises(InputError, match="run: cannot convert the pandas DataFrame.*column qid"):
        uefast.evaluate(mixed, measures=["P@1"])
