"""Shared test helpers: tiny LETOR/TREC tables and the bridge from Measure objects to tests/naive.py."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import naive  # noqa: E402

# the CPU driver compiles only the measure families a call asks for (one compilation per family
# set); the default run asks for 55 sets (benchmarks/RESULTS_tests.md), so it compiles every
# family once instead (tests/test_kernel_families.py checks the per-set kernels)
os.environ.setdefault("UEFAST_KERNEL_FAMILIES", "all")

SHARED_DATA = Path(os.environ.get("UEFAST_SHARED_DATA",
                                  Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def pytest_configure(config):
    """Under pytest-xdist the workers share one Numba cache: serialise its writes (_prewarm.py)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import _prewarm

        _prewarm.lock_numba_cache()


def pytest_collection_finish(session):
    """Under pytest-xdist, each worker compiles its share of the big kernels first (_prewarm.py)."""
    import _prewarm

    _prewarm.prewarm(session)


def pytest_sessionfinish(session, exitstatus):
    import _prewarm

    _prewarm.cleanup(session)


def pytest_collection_modifyitems(config, items):
    """Tests that read the real data (the ``shared_data`` fixture) are data-heavy: marked
    ``slow``, so the default run (``-m 'not slow'`` in pyproject) leaves them to ``-m slow``
    (.ci/run runs both)."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set UEFAST_SHARED_DATA)")
    return SHARED_DATA


def trec_eval_mismatches(res, reference, tol=1e-9):
    """Every per-topic float value of an ``evaluate_trec`` result against pytrec_eval's
    ``{qid: {measure: value}}`` for the measures it reports: (values compared, mismatches as
    (measure, qid, ours, theirs)); a NaN is a mismatch."""
    row = {q: i for i, q in enumerate(res.qids)}
    checked, bad = 0, []
    for slot in res.slots:
        if slot.fmt != "float" or slot.per_query is None:
            continue
        for qid, vals in reference.items():
            if slot.name in vals:
                got = float(slot.per_query[row[qid]])
                checked += 1
                if not abs(got - vals[slot.name]) <= tol:
                    bad.append((slot.name, qid, got, vals[slot.name]))
    return checked, bad


def letor_table(queries, systems=("s",)):
    """queries: list of (labels, {system: scores}, docids or None)."""
    cols = {"qid": [], "docid": [], "label": []}
    for s in systems:
        cols[s] = []
    for qi, (labels, scores, docids) in enumerate(queries):
        n = len(labels)
        cols["qid"] += [qi + 1] * n
        cols["docid"] += list(docids) if docids is not None else list(range(n))
        cols["label"] += list(labels)
        for s in systems:
            cols[s] += [float(x) for x in scores[s]]
    return pa.table(cols)


def naive_value(m, ranked_labels, judged, lmax):
    """Reference value of Measure ``m`` on a ranked label list."""
    d = m.definition.params
    kw = dict(k=m.cutoff)
    if "rel" in d:
        kw["rel"] = m.param("rel") or 1
    if "gain" in d:
        kw["gtype"] = m.param("gain")
    if "norm" in d:
        kw["norm"] = m.param("norm")
    if "p" in d:
        kw["p"] = m.param("p")
    if "beta" in d:
        kw["beta"] = m.param("beta")
    if "lmax" in d:
        kw["lmax"] = m.param("lmax") if m.param("lmax") is not None else max(lmax, 1)
    # TBG; JKnDCG, NCU, NCUrb
    for key in ("h", "ts", "alpha", "pc1", "pc0", "ps1", "length", "logb", "nu", "gamma"):
        if key in d:
            kw[key] = m.param(key)
    return naive.measure(m.name, ranked_labels, judged, **kw)


@pytest.fixture(params=["sortnet", "counting32", "counting", "sorting"])
def ranking_path(request, monkeypatch):
    """Run a test once with each ranking path of the kernel (they must agree exactly): the
    bitonic sorting network on every segment it takes (float32 counting where it declines),
    float32 counting alone (falling back to float64 counting where it declines), float64
    counting, sorting."""
    from uefast import engine

    monkeypatch.setattr(engine, "COUNTING_FACTOR", 0.0 if request.param == "sorting" else float("inf"))
    monkeypatch.setattr(engine, "COUNTING_F32", request.param in ("sortnet", "counting32"))
    monkeypatch.setattr(engine, "SORT_NETWORK", 2 if request.param == "sortnet" else 0)
    return request.param
