"""The weighted intent-aware families through one Numba call (:mod:`uefast.diversity._ia_kernels`):
values, IUB, exact REB of every segment at once, for :func:`uefast.diversity.evaluate`.

The families of :data:`FAST` (RBU, gERR-IA, RBP-IA, nDCG-IA, RR-IA, AP-IA) are scored here; their
NumPy definitions in :mod:`uefast.diversity.families_ia` stay the reference (the tests compare
the two on random data and on TREC 2012). ``reb_universe``: ``"judged"`` (a random order of the
topic's judged documents, SPEC_diversity §1), ``"retrieved"`` (a random order of each run's own
ranked documents, unjudged ones non-relevant; IUB and the normalisers IDCG_t, R_t still from the
qrels) or ``"collection"`` (a random order of ``collection_size`` documents, the unjudged ones
non-relevant; needs a closed form in N: refused for RR-IA, and RBU without a cutoff or as
``variant=java``, whose sums run over all N ranks).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.diversity._ia_kernels import AP, GERR, NDCG, RBP, RBU, RR, ia_batch
from uefast.errors import InputError

__all__ = ["FAST", "UNIVERSES", "flat_topics", "ia_scores", "check_universe", "relevant_docs"]

FAST = {"RBU": RBU, "gERR-IA": GERR, "RBP-IA": RBP, "nDCG-IA": NDCG, "RR-IA": RR, "AP-IA": AP}
UNIVERSES = ("judged", "retrieved", "collection")


def flat_topics(topics) -> tuple:
    """(toff, aoff, goff, G, W, NR) of a list of :class:`~uefast.diversity.Topic` (module
    docstring of :mod:`uefast.diversity._ia_kernels`)."""
    n = np.array([t.n for t in topics], np.int64)
    m = np.array([t.m for t in topics], np.int64)
    toff = np.r_[0, np.cumsum(n)].astype(np.int64)
    aoff = np.r_[0, np.cumsum(m)].astype(np.int64)
    goff = np.r_[0, np.cumsum(n * m)].astype(np.int64)
    cat = lambda xs, dt: (np.concatenate(xs).astype(dt, copy=False) if xs else np.zeros(0, dt))  # noqa: E731
    G = _shared_grades(topics, goff)
    if G is None:
        G = cat([t.grades.reshape(-1) for t in topics], np.int64)
    W = cat([t.weights for t in topics], np.float64)
    NR = cat([t.n_rel_pairs for t in topics], np.int64)
    return toff, aoff, goff, np.ascontiguousarray(G), W, NR


@nb.njit(cache=True, nogil=True)
def _relevant_docs(toff, aoff, goff, G):
    out = np.zeros(toff.size - 1, np.int64)
    for t in range(toff.size - 1):
        m = aoff[t + 1] - aoff[t]
        for d in range(toff[t + 1] - toff[t]):
            r = 0
            for a in range(m):
                r |= G[goff[t] + d * m + a] >= 1
            out[t] += r
    return out


def relevant_docs(batch) -> np.ndarray:
    """Per topic of ``batch``, its judged documents relevant to at least one aspect (grade >= 1),
    from the flattened topics (:func:`flat_topics`, cached in ``batch.cache``)."""
    toff, aoff, goff, G, _, _ = _flat(batch)
    return _relevant_docs(toff, aoff, goff, G)


def _flat(batch):
    if batch.flat is not None:  # compile_qrels' own arrays
        return batch.flat
    key = ("flat_topics", id(batch.topics))
    if key not in batch.cache:
        batch.cache[key] = flat_topics(batch.topics)
    return batch.cache[key]


def _shared_grades(topics, goff):
    """The topics' grades as one view, without a copy, where they are consecutive blocks of one
    int64 array (as :func:`uefast.diversity.compile_qrels` builds them, in its topic order);
    else None."""
    if not topics:
        return None
    b = topics[0].grades.base
    if b is None or b.dtype != np.int64 or b.ndim != 1 or not b.flags.c_contiguous:
        return None
    if not all(t.grades.base is b and t.grades.flags.c_contiguous for t in topics):
        return None
    p0 = b.__array_interface__["data"][0]
    offs = np.fromiter((t.grades.__array_interface__["data"][0] for t in topics), np.int64,
                       len(topics))
    s0 = int(offs[0] - p0) // 8
    if not np.array_equal(offs - p0, 8 * (s0 + goff[:-1])):
        return None
    return b[s0:s0 + int(goff[-1])]


def _spec(mlist):
    spec = np.zeros((len(mlist), 5), np.int64)
    fpar = np.zeros((len(mlist), 2), np.float64)
    seen: dict = {}
    for j, m in enumerate(mlist):
        prm = m.params
        code, java = FAST[m.fam.name], prm.get("variant") == "java"
        k = -1 if m.k is None else m.k
        share = -1
        if code in (RBU, GERR):  # same cascade map and depth: same greedy ideal and E[S_c]
            key = (prm.get("gmax"), -1 if java else k)
            share = seen.setdefault(key, j)
            share = -1 if share == j else share
        spec[j] = (code, k, java, prm.get("gmax") == "topic", share)
        fpar[j] = (prm.get("p", 0.0), prm.get("e", 0.0))
    return spec, fpar


def check_universe(reb_universe: str, collection_size, mlist) -> int:
    """Validate ``reb_universe``/``collection_size`` for the measures ``mlist``; returns N (0
    unless ``"collection"``). Measures outside :data:`FAST` and ndeval's names
    (:mod:`uefast.diversity.universe_ndeval`) take the judged universe only."""
    from uefast.diversity.universe_ndeval import NDEVAL_UNIVERSE, NO_COLLECTION

    if reb_universe not in UNIVERSES:
        raise InputError(f"`reb_universe` must be one of {list(UNIVERSES)}, got {reb_universe!r}")
    if reb_universe == "judged":
        if collection_size is not None:
            raise InputError("`collection_size` is for reb_universe='collection', got "
                             "reb_universe='judged'")
        return 0
    for m in mlist:
        if m.fam.name not in FAST and m.fam.name not in NDEVAL_UNIVERSE:
            raise InputError(f"measure {str(m)!r}: reb_universe={reb_universe!r} is available for "
                             f"{', '.join((*FAST, *NDEVAL_UNIVERSE))}; {m.fam.name}'s REB is over the "
                             "judged documents only")
    if reb_universe == "retrieved":
        if collection_size is not None:
            raise InputError("`collection_size` is for reb_universe='collection', got "
                             "reb_universe='retrieved'")
        return 0
    if (isinstance(collection_size, bool) or not isinstance(collection_size, (int, np.integer))
            or collection_size < 1):
        raise InputError("reb_universe='collection' needs `collection_size`, the number of "
                         f"documents in the collection (an integer >= 1), got {collection_size!r}")
    for m in mlist:
        name = m.fam.name
        if (name in ("RR-IA", *NO_COLLECTION)
                or (name == "RBU" and (m.k is None or m["variant"] == "java"))):
            raise InputError(f"measure {str(m)!r}: its REB over a collection sums over all N ranks; "
                             "use a cutoff (RBU@k) or reb_universe='judged'/'retrieved'")
    return int(collection_size)


def ia_scores(batch, mlist, reb_universe: str = "judged", collection_size=None):
    """(value, iub, exact, reb), each (segments x measures), of the :data:`FAST` measures
    ``mlist`` on ``batch`` (:class:`~uefast.diversity.registry.Batch`), in one kernel call."""
    N = check_universe(reb_universe, collection_size, mlist)
    toff, aoff, goff, G, W, NR = _flat(batch)
    if N and toff.size > 1:
        big = int(np.diff(toff).max())
        if N < big:
            raise InputError(f"`collection_size` {N} is smaller than a query's judged documents ({big})")
    spec, fpar = _spec(mlist)
    T, S, M = toff.size - 1, batch.seg_topic.size, len(mlist)
    val = np.empty((S, M))
    iub = np.empty((T, M))
    exact = np.empty((T, M), np.bool_)
    uni = UNIVERSES.index(reb_universe)
    reb = np.empty((S if uni == 1 else T, M))
    soff = np.ascontiguousarray(batch.soff, np.int64)
    longest = max(int(np.diff(toff).max(initial=0)), int(np.diff(soff).max(initial=0)))
    RC = 1.0 / np.maximum(np.arange(longest + 2, dtype=np.float64), 1.0)
    # a few chunks per thread (prange splits them statically; set_parallel_chunksize(1) made
    # the whole pass ~1.7x slower)
    ia_batch(toff, aoff, goff, G, W, NR, np.ascontiguousarray(batch.seg_topic, np.int64), soff,
             np.ascontiguousarray(batch.rows, np.int64), spec, fpar, uni, N, RC, val, iub, exact,
             reb, 4 * nb.get_num_threads())
    st = batch.seg_topic
    return val, iub[st], exact[st], (reb if uni == 1 else reb[st])
