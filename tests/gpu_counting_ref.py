"""Helpers of the rank-by-counting tests (``tests/test_gpu_counting.py`` and the CUDA simulator
script ``tests/cuda_simulator_counting.py``): capture the arguments the CUDA backend receives
from ``uefast.evaluate``, and the CPU engine's ranked labels to compare rank by rank."""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyarrow as pa

import uefast
import uefast.gpu.counting as counting
from uefast.kernels.ordering import TIE_EXPECTED
from uefast.kernels.segment import STACK_LEN, rank_by_sorting

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@10", "AP", "AP@10", "P@5", "R@10",
            "Rprec", "RR", "RR@3", "ERR@20", "RBP(p=0.8)", "SP@10", "Success@5", "Q@10", "nERR@10",
            "Pplus", "O", "RBP(p=0.8,gain=lin)", "F@5", "TBG@10"]


def small_table(seed: int, nq: int = 12, max_docs: int = 40, docids: str = "int") -> pa.Table:
    """Segments of 0 .. max_docs documents, labels -1..4, three score columns: distinct, rounded
    to one decimal (many ties) and only +0.0 / -0.0 (one tie group); string, int or no docids
    (int docids of different widths and signs, so trec_eval's strcmp order is not numeric)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, max_docs, nq)
    lens[0], lens[1] = 1, max_docs
    qid = np.repeat(np.arange(nq), lens)
    n = len(qid)
    cols = {"qid": pa.array(np.char.add("q", qid.astype(str)))}
    if docids == "string":
        cols["docid"] = pa.array([f"d{x}" for x in rng.permutation(n) * 37 % 100003])
    elif docids == "int":
        cols["docid"] = pa.array(rng.permutation(n).astype(np.int64) * 7 - 3 * n)
    cols["label"] = pa.array(rng.integers(-1, 5, n).astype(np.int8))
    cols["s_distinct"] = pa.array(rng.normal(size=n))
    cols["s_tied"] = pa.array(np.round(rng.normal(size=n), 1))
    cols["s_zero"] = pa.array(np.where(rng.random(n) < 0.5, 0.0, -0.0))
    return pa.table(cols)


@contextmanager
def spying(calls: list):
    """Within the block, every counting-kernel call of the CUDA backend appends its
    per-system argument tuple (what ``rank_values_counting`` takes, less its last two) to
    ``calls``: one call per system, through ``rank_values_counting`` or the systems' pipeline
    (:func:`uefast.gpu.pipeline.rank_systems_counting`); the calls themselves still run."""
    import uefast.gpu.pipeline as pipeline

    real, real_many = counting.rank_values_counting, pipeline.rank_systems_counting

    def spy(*args):
        calls.append(args[:17])
        return real(*args)

    def spy_many(*args):
        for sc in args[4]:
            calls.append(args[:4] + (sc,) + args[5:17])
        return real_many(*args)

    counting.rank_values_counting, pipeline.rank_systems_counting = spy, spy_many
    try:
        yield calls
    finally:
        counting.rank_values_counting, pipeline.rank_systems_counting = real, real_many


def capture_calls(table: pa.Table, ties: str, measures=MEASURES) -> list[tuple]:
    """The argument tuples of every counting-kernel call (one per score column) made by
    ``evaluate(table, backend="cuda")`` (:func:`spying`)."""
    calls = []
    with spying(calls):
        uefast.evaluate(table, measures=measures, ties=ties, backend="cuda")
    return calls


def cpu_ranked_labels(args: tuple) -> np.ndarray:
    """The CPU engine's ranked labels (its exact sort, :func:`rank_by_sorting`) in segment order."""
    (offsets, perm, has_perm, labels, scores, _q, tie_mode, doc_mode, doc_int, doc_off,
     doc_data) = args[:11]
    n = int(offsets[-1])
    lab = np.zeros(max(n, 1), np.int64)
    keys = np.empty(max(n, 1))
    perm = perm if has_perm else np.zeros(1, np.int64)
    for g in range(len(offsets) - 1):
        b, e = int(offsets[g]), int(offsets[g + 1])
        m = e - b
        sc = (np.empty(max(m, 1)), np.empty(max(m, 1), np.int64), np.empty(max(m, 1)),
              np.empty(max(m, 1), np.int64), np.empty(max(m, 1), np.int64),
              np.empty(STACK_LEN, np.int64))
        assert rank_by_sorting(perm, has_perm, b, m, labels, scores, tie_mode, doc_mode, doc_int,
                               doc_off, doc_data, sc[0], sc[1], sc[2], sc[3], sc[4], sc[5],
                               lab[b:e]) == 0
        keys[b:e] = sc[0][:m]
    return lab[:n], keys[:n]


def rank_mismatches(args: tuple, lab: np.ndarray) -> int:
    """Positions where the counted ranked labels differ from the CPU's. With ``ties="expected"``
    the order inside a tie group is free: there each CPU tie group's labels are compared as a
    multiset."""
    ref, keys = cpu_ranked_labels(args)
    lab = np.asarray(lab)[:len(ref)]
    if args[6] != TIE_EXPECTED:
        return int(np.sum(lab != ref))
    offsets = args[0]
    bad = 0
    for g in range(len(offsets) - 1):
        b, e = int(offsets[g]), int(offsets[g + 1])
        k = keys[b:e]
        cuts = np.flatnonzero(np.diff(k) != 0) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, e - b]):
            bad += int(np.any(np.sort(lab[b + lo:b + hi]) != np.sort(ref[b + lo:b + hi])))
    return bad
