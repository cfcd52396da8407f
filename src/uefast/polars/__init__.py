"""Polars expressions for uefast: per-query measures, IUB, REB and UE scores as ``pl.Expr``.

Every function returns an expression usable in ``df.group_by("qid").agg(...)``, in
``df.select(...)`` (the whole frame is one query) and with ``.over("qid")``, on the eager, lazy and
streaming engines::

    import polars as pl, uefast.polars as uep
    df.group_by("qid").agg(uep.ndcg("label", "score", k=10), uep.ap("label", "score"))
    df.group_by("qid").agg(uep.measures("label", "score", ["nDCG@10", "AP"],
                                         stats=("value", "reb", "ue_v2")).alias("m")).unnest("m")
    df.with_columns(uep.ue_v2("nDCG@10", "label", "score").over("qid"))

Algorithm (DESIGN §4): ``pl.struct(label, score[, docid]).implode().map_batches(kernel,
is_elementwise=True, returns_scalar=True)``. Polars hands the kernel one ``LargeList`` whose offsets
are the group offsets, so the Numba kernels run **once for all groups** (not once per group); the
group's rows are its judged set (LETOR style), exactly as ``uefast.evaluate(run)`` without qrels.
Values are bit-identical to :func:`uefast.evaluate` on the same rows (same kernels). Formulas:
SPEC_math §2-§5 and :mod:`uefast.measures`; UE V1/V2: :mod:`uefast.ue` (Santu & Feng 2022).

**TREC runs: do not join the run to its qrels and group.** A group's rows are taken as the
query's whole judged set, so a run joined to its qrels lacks the relevant documents the run never
retrieved, and AP, recall, R-precision and nDCG (whose ideal ranking counts them) come out too
high (AP 0.2785 instead of 0.2249 on a TREC 2003 Robust run).  Evaluate such data with
``uefast.polars.evaluate(run, qrels)`` (a ``qid, docid, score[, system]`` frame and the qrels),
which counts them; a frame that must go through the expressions can be proven complete first
with ``uefast.polars.require_all_relevant(frame, qrels)`` (it raises, naming the first missing
relevant document).  A null label (an unjudged document of a left join) is refused, saying so.

Common keyword arguments: ``docid`` (column for trec_eval tie-breaking: score descending, then docid
descending by bytes; without it ties keep row order), ``ties`` ("trec_eval", "input",
"expected"), ``reb`` ("exact", "paper"), ``degenerate`` ("zero", "nan"), ``rel_level`` (default
relevance threshold), ``max_label`` (the collection's top grade, needed only by ERR without
``lmax``: a Polars batch may not contain it, so it is never guessed).

Thread safety: kernel entry is serialised by a lock (Polars calls from its worker threads; each
kernel already runs on every core, :func:`uefast.kernels.threads.run_chunks`). Supported: Polars >= 2.0 (tested on
2.1; DESIGN §4 reports that Polars 1.20 wraps ``returns_scalar`` results of ``agg`` in a list).
"""
from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from uefast.polars._exprs import build_expr, build_struct
from uefast.polars._frame import evaluate
from uefast.polars._judged import require_all_relevant

__all__ = ["measure", "measures", "iub", "reb", "ue_v1", "ue_v2", "ndcg", "dcg", "ap", "sp",
           "precision", "recall", "rprec", "rr", "success", "err", "rbp", "evaluate",
           "require_all_relevant", "register_namespace"]

IntoExpr = Any  # a column name or a pl.Expr


def measure(measure: str, label: IntoExpr, score: IntoExpr, *, stat: str = "value",
            **kw) -> pl.Expr:
    """One measure (e.g. ``"nDCG@10"``, ``"P(rel=2)@5"``) per group: its value, or with ``stat``
    its ``"iub"``, ``"reb"``, ``"ue_v1"``, ``"ue_v2"`` (Float64) or ``"n_rel"`` (Int64)."""
    return build_expr(measure, label, score, stat=stat, **kw)


def iub(measure: str, label: IntoExpr, **kw) -> pl.Expr:
    """Ideal upper bound per group: the measure on the labels sorted descending (no score needed)."""
    return build_expr(measure, label, None, stat="iub", **kw)


def reb(measure: str, label: IntoExpr, **kw) -> pl.Expr:
    """Random expected baseline per group: the exact expectation of the measure over uniformly
    random orders of the group's rows (tie-aware formula of McSherry & Najork 2008 with all rows in
    one tie group, SPEC_math §5), or the paper's formula with ``reb="paper"``."""
    return build_expr(measure, label, None, stat="reb", **kw)


def ue_v1(measure: str, label: IntoExpr, score: IntoExpr, **kw) -> pl.Expr:
    """UE V1 = (A/IUB)·(A/(A+REB)), 0 if IUB <= 0 or A <= 0 (Santu & Feng 2022, SPEC_math §4)."""
    return build_expr(measure, label, score, stat="ue_v1", **kw)


def ue_v2(measure: str, label: IntoExpr, score: IntoExpr, **kw) -> pl.Expr:
    """UE V2 = (A-REB)/(IUB-REB) if A >= REB else (A-REB)/REB, clamped to [-1, 1]; degenerate
    groups (IUB = REB) get 0 (``degenerate="zero"``) or NaN (SPEC_math §4)."""
    return build_expr(measure, label, score, stat="ue_v2", **kw)


def measures(label: IntoExpr, score: IntoExpr, measures: Sequence[str] | str,
             *, stats: Sequence[str] = ("value",), **kw) -> pl.Expr:
    """A Struct per group from **one** sort per group: for each measure and each ``stats`` entry
    (``value``, ``iub``, ``reb``, ``ue_v1``, ``ue_v2``, ``n_rel``) one field, named ``"nDCG@10"``
    when ``stats == ("value",)`` and ``"nDCG@10:reb"`` otherwise. Use ``.unnest()`` to spread it."""
    return build_struct(label, score, measures, stats=stats, **kw)


def _m(name: str, k: int | None, **params) -> str:
    ps = ",".join(f"{a}={v}" for a, v in params.items() if v is not None)
    return name + (f"({ps})" if ps else "") + (f"@{k}" if k is not None else "")


def _stat_expr(meas: str, label, score, stat: str, kw) -> pl.Expr:
    return build_expr(meas, label, score, stat=stat, **kw)


def ndcg(label: IntoExpr, score: IntoExpr, k: int | None = None, *, gain: str = "lin",
         stat: str = "value", **kw) -> pl.Expr:
    """nDCG@k = DCG@k / IDCG, DCG@k = sum_{i<=k} g(l_i)/log2(i+1), g = l (``lin``, trec_eval
    ndcg_cut) or 2^l-1 (``exp``); IDCG over all the group's rows (Järvelin & Kekäläinen 2002)."""
    return _stat_expr(_m("nDCG", k, gain=gain), label, score, stat, kw)


def dcg(label: IntoExpr, score: IntoExpr, k: int | None = None, *, gain: str = "lin",
        stat: str = "value", **kw) -> pl.Expr:
    """DCG@k = sum_{i<=k} g(l_i)/log2(i+1) (Järvelin & Kekäläinen 2002)."""
    return _stat_expr(_m("DCG", k, gain=gain), label, score, stat, kw)


def ap(label: IntoExpr, score: IntoExpr, k: int | None = None, *, norm: str = "rel",
       rel: int | None = None, stat: str = "value", **kw) -> pl.Expr:
    """AP@k = SP@k / norm with norm = Np (``rel``, trec_eval map/map_cut), k, or min(Np, k)."""
    return _stat_expr(_m("AP", k, norm=None if norm == "rel" else norm, rel=rel), label, score,
                      stat, kw)


def sp(label: IntoExpr, score: IntoExpr, k: int | None = None, *, rel: int | None = None,
       stat: str = "value", **kw) -> pl.Expr:
    """SP@k = sum_{i<=k} Prec(i)·rel_i (the paper's MSP@k, Santu & Feng 2022)."""
    return _stat_expr(_m("SP", k, rel=rel), label, score, stat, kw)


def precision(label: IntoExpr, score: IntoExpr, k: int, *, rel: int | None = None,
              stat: str = "value", **kw) -> pl.Expr:
    """P@k = (relevant documents in the top k) / k (trec_eval P_k)."""
    return _stat_expr(_m("P", k, rel=rel), label, score, stat, kw)


def recall(label: IntoExpr, score: IntoExpr, k: int, *, rel: int | None = None,
           stat: str = "value", **kw) -> pl.Expr:
    """R@k = (relevant documents in the top k) / Np (trec_eval recall_k)."""
    return _stat_expr(_m("R", k, rel=rel), label, score, stat, kw)


def rprec(label: IntoExpr, score: IntoExpr, *, rel: int | None = None, stat: str = "value",
          **kw) -> pl.Expr:
    """R-precision = P@Np (trec_eval Rprec)."""
    return _stat_expr(_m("Rprec", None, rel=rel), label, score, stat, kw)


def rr(label: IntoExpr, score: IntoExpr, k: int | None = None, *, rel: int | None = None,
       stat: str = "value", **kw) -> pl.Expr:
    """RR@k = 1/rank of the first relevant document within the top k, else 0."""
    return _stat_expr(_m("RR", k, rel=rel), label, score, stat, kw)


def success(label: IntoExpr, score: IntoExpr, k: int, *, rel: int | None = None,
            stat: str = "value", **kw) -> pl.Expr:
    """Success@k = 1 if a relevant document is in the top k, else 0 (trec_eval success_k)."""
    return _stat_expr(_m("Success", k, rel=rel), label, score, stat, kw)


def err(label: IntoExpr, score: IntoExpr, k: int | None = None, *, lmax: int | None = None,
        stat: str = "value", **kw) -> pl.Expr:
    """ERR@k = sum_i (1/i) theta(l_i) prod_{j<i} (1-theta(l_j)), theta(l) = (2^l-1)/2^lmax
    (Chapelle et al. 2009). ``lmax`` (or ``max_label=``) must be given: see the module doc."""
    return _stat_expr(_m("ERR", k, lmax=lmax), label, score, stat, kw)


def rbp(label: IntoExpr, score: IntoExpr, *, p: float = 0.8, rel: int | None = None,
        stat: str = "value", **kw) -> pl.Expr:
    """RBP = (1-p) sum_i p^(i-1) rel_i (Moffat & Zobel 2008), binary relevance."""
    return _stat_expr(_m("RBP", None, p=repr(float(p)), rel=rel), label, score, stat, kw)


def register_namespace(name: str = "uefast") -> None:
    """Opt-in alias: ``pl.col("label").uefast.ndcg("score", k=10)`` == ``ndcg("label", "score",
    k=10)``. Every public expression function is exposed with the label expression first."""

    class _NS:
        def __init__(self, expr: pl.Expr):
            self._e = expr

        def __getattr__(self, attr: str):
            fn = globals().get(attr)
            frame_level = ("evaluate", "require_all_relevant", "register_namespace")
            if attr not in __all__ or attr in frame_level or fn is None:
                raise AttributeError(attr)
            if attr in ("measure", "iub", "reb", "ue_v1", "ue_v2"):
                return lambda meas, *a, **k: fn(meas, self._e, *a, **k)
            return lambda *a, **k: fn(self._e, *a, **k)

    pl.api.register_expr_namespace(name)(_NS)
