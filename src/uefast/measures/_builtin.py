"""The built-in measure families: each one's definition, routines, IUB, REB and planning rule.

Adding a family is one :func:`~uefast.measures._family.register` call here (or in a plug-in),
its routines in :mod:`uefast.kernels.routines`, a line in the dispatch generator and a reference
in ``tests/naive.py``; docs/adding_a_measure.md walks through it with Q-measure.
"""
from __future__ import annotations

import math
from typing import Any

from uefast.errors import InputError, MeasureParseError
from uefast.kernels import ntcir as nt
from uefast.kernels import routines as r
from uefast.kernels import tbg as tbg_k
from uefast.measures._family import Family, KernelParams, PlanContext, register

__all__ = ["GAIN_CODES", "NORM_CODES", "MAX_EXP_LABEL", "MAX_RAW_EXP_LABEL"]

GAIN_CODES = {"lin": 0, "exp": 1}
NORM_CODES = {"rel": 0, "k": 1, "min": 2}
#: ERR's 2^lmax is finite in float64 up to this grade
MAX_EXP_LABEL = 1023
#: measures whose value is not a ratio of two gain sums (DCG, Q, O with ``gain=exp``) compute the
#: exponential gain unscaled; sums of up to 2^63 gains of labels up to this stay finite
MAX_RAW_EXP_LABEL = 960
#: ``reb="paper"`` sums DCG's discounts to k even when k exceeds the ranking (SPEC_math §3), so
#: the judged pass's tables then reach k: that far at most (3 x 8 bytes a position, ~100 MB).
PAPER_DCG_MAX_CUTOFF = 1 << 22


def _rel(m: Any, ctx: PlanContext) -> int:
    v = m.param("rel")
    rel = ctx.rel_level if v is None else v
    if rel < 1:
        raise InputError(f"measure {str(m)!r}: `rel` must be >= 1, got {rel}")
    return int(rel)


def _binary(m: Any, ctx: PlanContext) -> KernelParams:
    return KernelParams(rel=_rel(m, ctx))


def _raw_exp(m: Any, ctx: PlanContext) -> int:
    """The unscaled exponential gain code (1), refusing labels whose gain sums may overflow."""
    if ctx.max_label > MAX_RAW_EXP_LABEL:
        raise InputError(
            f"measure {str(m)!r}: the data has label {ctx.max_label}; sums of the gains "
            f"2^label - 1 of labels above {MAX_RAW_EXP_LABEL} may exceed float64's range and "
            f"{m.name} is not a ratio of gain sums (use gain=lin, or nDCG, whose exponential "
            f"gains are scaled)")
    return 1


def _dcg(m: Any, ctx: PlanContext) -> KernelParams:
    g = m.param("gain")
    if m.name == "DCG":
        gtype = 0 if g == "lin" else _raw_exp(m, ctx)
    else:
        gtype = 0 if g == "lin" else ctx.exp_gtype
    if ctx.reb == "paper" and (m.cutoff or 0) > PAPER_DCG_MAX_CUTOFF:
        raise InputError(f"measure {str(m)!r} with reb='paper': the paper's REB sums DCG's "
                         f"discounts to k even beyond the ranking; cutoffs above "
                         f"{PAPER_DCG_MAX_CUTOFF:,} are not supported (reb='exact' has no limit)")
    return KernelParams(gtype=gtype)


def _ap(m: Any, ctx: PlanContext) -> KernelParams:
    return KernelParams(rel=_rel(m, ctx), norm=NORM_CODES[m.param("norm")])


def _ap_check(cutoff: Any, params: dict, text: str) -> None:
    if params.get("norm", "rel") != "rel" and cutoff is None:
        raise MeasureParseError(f"measure {text!r}: AP(norm=...) needs a cutoff")


def _rbp(m: Any, ctx: PlanContext) -> KernelParams:
    g = m.param("gain")
    if g == "bin":
        return KernelParams(rel=_rel(m, ctx), fparam=float(m.param("p")))
    # graded: the top grade travels in `rel`, the mode in `norm` (kernels/routines.py)
    top = int(_lmax(m, ctx))
    gtype = 0 if g == "lin" else ctx.exp_gtype
    return KernelParams(gtype=gtype, rel=top, fparam=float(m.param("p")), norm=1)


def _rbp_check(cutoff: Any, params: dict, text: str) -> None:
    if params.get("gain", "bin") == "bin" and params.get("lmax") is not None:
        raise MeasureParseError(f"measure {text!r}: `lmax` is for graded RBP (gain=lin or exp)")
    if params.get("gain", "bin") != "bin" and params.get("rel") is not None:
        raise MeasureParseError(f"measure {text!r}: `rel` is for binary RBP (gain=bin)")


def _f(m: Any, ctx: PlanContext) -> KernelParams:
    return KernelParams(rel=_rel(m, ctx), fparam=float(m.param("beta")))


def _lmax(m: Any, ctx: PlanContext) -> float:
    lm = m.param("lmax")
    if lm is not None and not ctx.max_label <= lm:
        raise InputError(
            f"measure {str(m)!r}: the data has label {ctx.max_label}, above lmax={lm} (ERR's "
            f"stop probability would exceed 1); use lmax >= {ctx.max_label} or leave it out "
            f"(default: the largest label)")
    top = max(ctx.max_label, 1) if lm is None else lm
    if top > MAX_EXP_LABEL:
        what = f"lmax={lm}" if lm is not None else f"the data has label {ctx.max_label} (lmax)"
        raise InputError(f"measure {str(m)!r}: {what}: 2^lmax is not finite in float64 "
                         f"beyond {MAX_EXP_LABEL}")
    return float(top)


def _nerr(m: Any, ctx: PlanContext) -> KernelParams:
    """ERR's and nERR's theta: gain code (exp: (2^l-1)/2^lmax, lin: l/(lmax+1)) and lmax."""
    return KernelParams(gtype=GAIN_CODES[m.param("gain")], fparam=_lmax(m, ctx))


def _blended(m: Any, ctx: PlanContext) -> KernelParams:
    gtype = 0 if m.param("gain") == "lin" else _raw_exp(m, ctx)
    return KernelParams(gtype=gtype, rel=1, fparam=float(m.param("beta")))


def tbg_factors(m: Any) -> tuple[float, float, float]:
    """TBG's (g, delta_1, delta_0) for measure ``m`` with a constant document length:
    g = P(C=1|R=1) P(S=1|R=1), delta_r = exp(-t_r ln 2 / h), t_r = T_s + P(C=1|R=r)(alpha l + beta)
    (Smucker & Clarke, SIGIR 2012; :mod:`uefast.kernels.tbg`)."""
    read = m.param("alpha") * m.param("length") + m.param("beta")
    h = m.param("h")
    t1 = m.param("ts") + m.param("pc1") * read
    t0 = m.param("ts") + m.param("pc0") * read
    out = []
    for t in (t1, t0):
        if t / h > tbg_k.MIN_EXP - 60:
            raise InputError(f"measure {str(m)!r}: a document takes {t:g} s, {t / h:g} half-lives "
                             f"(h={h:g}); its decay factor 2^-{t / h:g} is below float64's "
                             f"useful range (at most {tbg_k.MIN_EXP - 60} half-lives)")
        out.append(math.exp(-t * math.log(2.0) / h))
    return m.param("pc1") * m.param("ps1"), out[0], out[1]


def _tbg(m: Any, ctx: PlanContext) -> KernelParams:
    g, d1, d0 = tbg_factors(m)
    if m.param("lengths") == "doc":
        if not ctx.doc_codes:
            raise InputError(f"measure {str(m)!r} reads each document's length (column "
                             f"`doc_len`): uefast.evaluate on in-memory tables reads it; streamed "
                             f"input, Polars, Dask, Spark and trec_eval do not (use "
                             f"lengths=const there)")
        # the labels are per-document codes (uefast.tbg_lengths): relevant iff >= REL_BIT
        return KernelParams(rel=tbg_k.REL_BIT, fparam=g, norm=-1)
    return KernelParams(rel=_rel(m, ctx), fparam=g, fparam2=d1, fparam3=d0)


_SANTU = "Santu & Feng, arXiv 2209.05007 (2022) for IUB/REB; SPEC_math §1-§2"
_LIN_EXP = {"gain": ("lin", "exp")}

register(Family(
    name="DCG", code=0, description="discounted cumulative gain, sum g(l_i)/log2(i+1)",
    formula="DCG@k = sum_{i<=k} g(l_i) / log2(i+1), g(l) = l (lin) or 2^l - 1 (exp)",
    source="Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005 (exp gain)",
    plain=r.dcg_plain_r, tied=r.dcg_tied_r, iub=r.dcg_iub_r, reb=r.dcg_reb_r,
    paper_reb=r.dcg_paper_r, kernel_params=_dcg, params={"gain": "lin"}, choices=_LIN_EXP,
    state=("gain_sum",), sorted_labels="top_k", collection_reb="closed"))
register(Family(
    name="nDCG", code=1, description="DCG / IDCG (IDCG over all judged documents)",
    formula="nDCG@k = DCG@k / IDCG@k, IDCG the DCG of the judged labels sorted descending",
    source="Jarvelin & Kekalainen, TOIS 2002", plain=r.dcg_plain_r, tied=r.dcg_tied_r,
    iub=r.dcg_iub_r, reb=r.dcg_reb_r, paper_reb=r.dcg_paper_r, kernel_params=_dcg,
    params={"gain": "lin"}, choices=_LIN_EXP, aliases=("NDCG", "ndcg"), normalised=True,
    fixed_aliases={"MSnDCG": {"gain": "lin"}},
    state=("gain_sum",), sorted_labels="top_k",
    external={"trec_eval_alias": "ndcg", "trec_eval_cut": "ndcg_cut_{k}",
              "ir_measures": "nDCG", "ntcireval": "MSnDCG"},
    collection_reb="closed"))
register(Family(
    name="P", code=2, description="precision at k (divides by k)",
    formula="P@k = (1/k) sum_{i<=k} [l_i >= rel]", source="textbook (Manning et al. 2008, ch. 8)",
    plain=r.p_plain_r, tied=r.p_tied_r, iub=r.p_iub_r, reb=r.p_reb_r, kernel_params=_binary,
    params={"rel": None}, cutoff="required", aliases=("Precision",),
    external={"trec_eval_cut": "P_{k}", "ir_measures": "P", "ntcireval": "Precision"},
    collection_reb="closed"))
register(Family(
    name="R", code=3, description="recall at k (relevant in top k / Np)",
    formula="R@k = (1/Np) sum_{i<=k} [l_i >= rel]", source="textbook (Manning et al. 2008, ch. 8)",
    plain=r.r_plain_r, tied=r.r_tied_r, iub=r.r_iub_r, reb=r.r_reb_r, kernel_params=_binary,
    params={"rel": None}, cutoff="required", aliases=("Recall",),
    external={"trec_eval_cut": "recall_{k}", "ir_measures": "R"},
    collection_reb="closed"))
register(Family(
    name="Rprec", code=4, description="precision at rank Np",
    formula="R-prec = P@Np", source="trec_eval (Buckley & Voorhees 2000)",
    plain=r.rprec_plain_r, tied=r.rprec_tied_r, iub=r.one_iub_r, reb=r.rprec_reb_r,
    kernel_params=_binary, params={"rel": None}, cutoff="none", aliases=("RPrec", "R-prec"),
    truncatable=False, external={"trec_eval": "Rprec", "ir_measures": "Rprec"},
    collection_reb="closed"))
register(Family(
    name="SP", code=5, description="sum of precisions at relevant ranks, sum_i Prec(i) rel_i",
    formula="SP@k = sum_{i<=k} Prec(i) [l_i >= rel]", source=_SANTU,
    plain=r.sp_plain_r, tied=r.sp_tied_r, iub=r.sp_iub_r, reb=r.sp_reb_r,
    paper_reb=r.sp_paper_r, kernel_params=_binary, params={"rel": None}, aliases=("MSP",),
    collection_reb="closed"))
register(Family(
    name="AP", code=6, description="average precision, SP@k / norm (trec_eval map, map_cut)",
    formula="AP@k = SP@k / {Np (norm=rel), k (norm=k), min(Np, k) (norm=min)}",
    source="trec_eval map / map_cut; Santu & Feng 2022 (norm=k)",
    plain=r.ap_plain_r, tied=r.ap_tied_r, iub=r.ap_iub_r, reb=r.ap_reb_r,
    paper_reb=r.ap_paper_r, kernel_params=_ap, params={"rel": None, "norm": "rel"},
    choices={"norm": ("rel", "k", "min")}, aliases=("MAP", "map"),
    fixed_aliases={"PaperAP": {"norm": "k"}}, check=_ap_check,
    external={"trec_eval": "map", "trec_eval_cut": "map_cut_{k}", "ir_measures": "AP",
              "ntcireval": "AP"},
    collection_reb="closed"))
register(Family(
    name="RR", code=7, description="reciprocal rank of the first relevant document",
    formula="RR@k = 1 / (rank of the first relevant document within k), 0 if none",
    source="Voorhees, TREC-8 QA 1999", plain=r.rr_plain_r, tied=r.rr_tied_r, iub=r.one_iub_r,
    reb=r.rr_reb_r, kernel_params=_binary, params={"rel": None}, aliases=("MRR", "recip_rank"),
    external={"trec_eval": "recip_rank", "ir_measures": "RR", "ntcireval": "RR"},
    collection_reb="cutoff"))
register(Family(
    name="ERR", code=8,
    description="expected reciprocal rank, theta(l) = (2^l-1)/2^lmax (gain=lin: l/(lmax+1), "
                "NTCIREVAL's ERR)",
    formula="ERR@k = sum_{r<=k} theta(l_r)/r prod_{j<r} (1 - theta(l_j)), theta(l) = "
            "(2^l-1)/2^lmax (gain=exp) or l/(lmax+1) (gain=lin)",
    source="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; gain=lin: NTCIREVAL's ERR (Sakai & "
           "Song, SIGIR 2011)", plain=r.err_plain_r,
    tied=r.err_tied_r, iub=r.err_iub_r, reb=r.err_reb_r, kernel_params=_nerr,
    params={"lmax": None, "gain": "exp"}, choices=_LIN_EXP, state=("label_max",),
    sorted_labels="all", external={"ir_measures": "ERR"}))
register(Family(
    name="RBP", code=9,
    description="rank-biased precision (1-p) sum p^(i-1) g_i (binary, or graded g(l)/g(lmax))",
    formula="RBP = (1-p) sum_{i<=k} p^(i-1) g_i, g_i = [l_i >= rel] (gain=bin) or "
            "g(l_i)/g(lmax) (gain=lin: l, exp: 2^l - 1; lmax: the data's top grade by default)",
    source="Moffat & Zobel, TOIS 2008; graded as NTCIREVAL's RBP (Sakai & Kando 2008)",
    plain=r.rbp_plain_r, tied=r.rbp_tied_r, iub=r.rbp_iub_r, reb=r.rbp_reb_r,
    kernel_params=_rbp, params={"p": 0.8, "rel": None, "gain": "bin", "lmax": None},
    choices={"gain": ("bin", "lin", "exp")}, check=_rbp_check, always_show=("p",),
    label_max_rule=lambda m: m.param("gain") != "bin",
    sorted_labels="top_k", state=("nrel", "gain_sum", "label_max"), collection_reb="closed",
    external={"trec_eval_other": "rbp", "ir_measures": "RBP", "ntcireval": "RBP"}))
register(Family(
    name="Success", code=10,
    description="1 if a relevant document is in the top k, else 0 (trec_eval success_k; Hit@k)",
    formula="Success@k = [some l_i >= rel, i <= k]", source="trec_eval success",
    plain=r.success_plain_r, tied=r.success_tied_r, iub=r.one_iub_r, reb=r.success_reb_r,
    kernel_params=_binary, params={"rel": None}, cutoff="required", aliases=("Hit", "success"),
    external={"trec_eval_cut": "success_{k}", "ir_measures": "Success", "ntcireval": "Hit"},
    collection_reb="cutoff"))
register(Family(
    name="Q", code=11, description="Q-measure: AP with the blended ratio (graded; beta=1)",
    formula="Q@k = (1/min(R,k)) sum_{r<=k} I(r) (C(r) + beta cg(r)) / (r + beta cg*(r))",
    source="Sakai, NTCIR-4 2004; Sakai & Song, SIGIR 2011 (NTCIREVAL's Q-measure)",
    plain=r.q_plain_r, tied=r.q_tied_r, iub=r.one_iub_r, reb=r.q_reb_r, kernel_params=_blended,
    params={"beta": 1.0, "gain": "lin"}, choices=_LIN_EXP, state=("nrel", "ideal"), sorted_labels="all",
    aliases=("Q-measure",), external={"ntcireval": "Q-measure"}))
register(Family(
    name="nERR", code=12, description="ERR / ERR of the ideal ranking (theta = g(l)/(g(lmax)+1))",
    formula="nERR@k = ERR@k / ERR*@k, theta(l) = l/(lmax+1) (gain=lin) or (2^l-1)/2^lmax (exp)",
    source="Chapelle et al., CIKM 2009; Sakai & Song, SIGIR 2011 (NTCIREVAL's nERR)",
    plain=r.err_plain_r, tied=r.err_tied_r, iub=r.err_iub_r, reb=r.err_reb_r,
    kernel_params=_nerr, params={"lmax": None, "gain": "lin"}, choices=_LIN_EXP,
    state=("label_max",), sorted_labels="all", normalised=True, external={"ntcireval": "nERR"}))
register(Family(
    name="O", code=13, description="O-measure: the blended ratio at the first relevant document",
    formula="O@k = (1 + beta g(r1)) / (r1 + beta cg*(r1)), r1 the first relevant rank <= k",
    source="Sakai, IPSJ TOD 48(SIG9), 2007 (NTCIREVAL's O-measure)",
    plain=r.o_plain_r, tied=r.o_tied_r, iub=r.one_iub_r, reb=r.o_reb_r, kernel_params=_blended,
    params={"beta": 1.0, "gain": "lin"}, choices=_LIN_EXP, state=("nrel", "ideal"), sorted_labels="all",
    aliases=("O-measure",), external={"ntcireval": "O-measure"}))
register(Family(
    name="Pplus", code=14,
    description="P+: mean blended ratio over relevant ranks up to the first top-grade document",
    formula="P+ = (1/C(rp)) sum_{r<=rp} I(r) BR(r), rp the first rank of the list's top level",
    source="Sakai, IPSJ TOD 48(SIG9), 2007 (NTCIREVAL's P-plus)",
    plain=r.pplus_plain_r, tied=r.pplus_tied_r, iub=r.one_iub_r, reb=r.pplus_reb_r,
    kernel_params=_blended, params={"beta": 1.0, "gain": "lin"}, choices=_LIN_EXP,
    state=("nrel", "ideal"), sorted_labels="all", cutoff="none", truncatable=False, aliases=("P+", "P-plus"),
    external={"ntcireval": "P-plus"}))
register(Family(
    name="F", code=15, description="F-measure (1+b^2) P R / (b^2 P + R) at k or over the list",
    formula="F_beta@k = (1 + beta^2) c / (beta^2 Np + k), c the relevant documents in the top k "
            "(no cutoff: k = the documents ranked, trec_eval's set_F)",
    source="van Rijsbergen, Information Retrieval (1979), ch. 7; trec_eval set_F",
    plain=r.f_plain_r, tied=r.f_tied_r, iub=r.f_iub_r, reb=r.f_reb_r, kernel_params=_f,
    params={"beta": 1.0, "rel": None}, aliases=("F1",), external={"trec_eval_other": "set_F"},
    collection_reb="cutoff"))
register(Family(
    name="E", code=16, description="E-measure, 1 - F (lower is better; IUB is its minimum)",
    formula="E_beta@k = 1 - F_beta@k", source="van Rijsbergen, Information Retrieval (1979)",
    plain=r.e_plain_r, tied=r.e_tied_r, iub=r.e_iub_r, reb=r.e_reb_r, kernel_params=_f,
    params={"beta": 1.0, "rel": None}, iub_exact=False,
    collection_reb="cutoff"))
register(Family(
    name="bpref", code=17,
    description="bpref: relevant documents ranked above judged non-relevant ones (condensed list)",
    formula="bpref = (1/R) sum_{r relevant retrieved} (1 - min(n_r, R)/min(R, N)), n_r the judged "
            "non-relevant documents above r, N the query's judged non-relevant documents",
    source="Buckley & Voorhees, SIGIR 2004; trec_eval bpref",
    plain=r.bpref_plain_r, tied=r.bpref_tied_r, iub=r.one_iub_r, reb=r.bpref_reb_r,
    kernel_params=_binary, params={"rel": None}, cutoff="none", truncatable=False,
    state=("nrel", "ideal"), sorted_labels="all", judged_only=True,
    external={"trec_eval": "bpref"}))
register(Family(
    name="Judged", code=18, description="fraction of the top k documents that are judged",
    formula="Judged@k = (1/k) sum_{i<=k} [document i is judged]: P@k of the judged flags",
    source="ir_measures Judged@k (Sakai & Kando 2008 on judged fractions of condensed lists)",
    plain=r.p_plain_r, tied=r.p_tied_r, iub=r.p_iub_r, reb=r.p_reb_r,
    kernel_params=lambda m, ctx: KernelParams(rel=1), cutoff="required", label_source="judged",
    collection_reb="closed", external={"ir_measures": "Judged"}))
register(Family(
    name="TBG", code=19,
    description="time-biased gain: gain decayed by the time a user needs to reach each rank",
    formula="TBG@k = sum_{i<=k} g [l_i >= rel] exp(-T(i) ln2 / h), T(i) = sum_{j<i} (T_s + "
            "P(C=1|R=r_j)(alpha l_j + beta)), g = P(C=1|R=1) P(S=1|R=1), l_j = `length` words "
            "(lengths=const) or column doc_len (lengths=doc; `length` where absent)",
    source="Smucker & Clarke, SIGIR 2012 (calibrated parameters); no NTCIREVAL definition",
    plain=tbg_k.tbg_plain_r, tied=tbg_k.tbg_tied_r, iub=tbg_k.tbg_iub_r, reb=tbg_k.tbg_reb_r,
    kernel_params=_tbg, reals=3,
    params={"rel": None, "h": 224.0, "ts": 4.4, "alpha": 0.018, "beta": 7.8, "pc1": 0.64,
            "pc0": 0.39, "ps1": 0.77, "length": 1000.0, "lengths": "const"},
    choices={"lengths": ("const", "doc")}, sorted_labels="top_k",
    collection_reb="closed", aliases=("tbg",)))


def _jkndcg(m: Any, ctx: PlanContext) -> KernelParams:
    gtype = 0 if m.param("gain") == "lin" else ctx.exp_gtype
    return KernelParams(gtype=gtype, fparam=float(m.param("logb")))


def _ncu(m: Any, ctx: PlanContext) -> KernelParams:
    gtype = 0 if m.param("gain") == "lin" else _raw_exp(m, ctx)
    beta = float(m.param("beta")) if m.param("nu") == "br" else 0.0
    return KernelParams(gtype=gtype, rel=1, fparam=beta)


def _ncu_check(cutoff: Any, params: dict, text: str) -> None:
    if params.get("nu", "br") == "p" and params.get("beta", 1.0) != 1.0:
        raise MeasureParseError(f"measure {text!r}: `beta` is for NCU(nu=br) (the blended "
                                f"ratio); NCU(nu=p) uses precision")


# NTCIREVAL's cumulative-gain variants (kernels/ntcir.py); codes from 30 on
register(Family(
    name="JKnDCG", code=30,
    description="original nDCG (Jarvelin & Kekalainen): no discount above rank b, then 1/log_b r",
    formula="nDCG_b@k = DCG_b@k / ideal DCG_b@k, DCG_b@k = sum_{r<=k} g(l_r) / max(1, log_b r) "
            "(r = 1 undiscounted); b >= k + 1 gives nCG@k",
    source="Jarvelin & Kekalainen, TOIS 20(4) 2002; NTCIREVAL's nDCG@l (--logb, default 2)",
    plain=nt.jkdcg_plain_r, tied=nt.jkdcg_tied_r, iub=nt.jkdcg_iub_r, reb=nt.jkdcg_reb_r,
    kernel_params=_jkndcg, params={"gain": "lin", "logb": 2.0}, choices=_LIN_EXP,
    aliases=("nDCG-orig",), normalised=True, state=("gain_sum",), sorted_labels="top_k",
    collection_reb="cutoff", external={"ntcireval": "nDCG"}))
register(Family(
    name="NCU", code=31,
    description="normalised cumulative utility, graded-uniform stops (stop value = gain)",
    formula="NCU@k = sum_{r<=k} I(r) (g(l_r)/G) NU(r), G the judged gain sum, NU = BR(r) = "
            "(C(r) + beta cg(r)) / (r + beta cg*(r)) (nu=br) or C(r)/r (nu=p)",
    source="Sakai & Robertson, EVIA 2008 (NTCIREVAL's NCUgu,BR and NCUgu,P)",
    plain=nt.ncu_plain_r, tied=nt.ncu_tied_r, iub=nt.ncu_iub_r, reb=nt.ncu_reb_r,
    kernel_params=_ncu, params={"nu": "br", "beta": 1.0, "gain": "lin"},
    choices={"nu": ("br", "p"), **_LIN_EXP}, check=_ncu_check,
    fixed_aliases={"NCUguBR": {"nu": "br"}, "NCUguP": {"nu": "p"}},
    state=("nrel", "ideal"), sorted_labels="all", external={"ntcireval": "NCUgu,BR"}))


def _rbpres(m: Any, ctx: PlanContext) -> KernelParams:
    return KernelParams(rel=1, fparam=float(m.param("p")))


register(Family(
    name="RBP-residual", code=32,
    description="RBP's residual: the most RBP could gain if unjudged and unseen documents were "
                "fully relevant (lower is better)",
    formula="res@k = (1-p) sum_{i<=K, i unjudged} p^(i-1) + p^K, K = min(k, run length) (no "
            "cutoff: K = run length); the same for binary and graded RBP (g(l)/g(lmax) <= 1)",
    source="Moffat & Zobel, TOIS 27(1) 2008, section 4 (residuals)",
    plain=r.rbpres_plain_r, tied=r.rbpres_tied_r, iub=r.rbpres_iub_r, reb=r.rbpres_reb_r,
    kernel_params=_rbpres, params={"p": 0.8}, always_show=("p",), aliases=("RBPres",),
    label_source="judged", iub_exact=False, sorted_labels="top_k", collection_reb="closed"))


register(Family(
    name="Pmeasure", code=33,
    description="P-measure: the blended ratio at the first document of the list's top level",
    formula="P = BR(rp) = (C(rp) + beta cg(rp)) / (rp + beta cg*(rp)), rp the first rank of the "
            "highest level present in the list (0 if none is relevant)",
    source="Sakai, IPSJ TOD 48(SIG9), 2007 (NTCIREVAL's P-measure)",
    plain=nt.pm_plain_r, tied=nt.pm_tied_r, iub=r.one_iub_r, reb=nt.pm_reb_r,
    kernel_params=_blended, params={"beta": 1.0, "gain": "lin"}, choices=_LIN_EXP,
    state=("nrel", "ideal"), sorted_labels="all", cutoff="none", truncatable=False,
    aliases=("P-measure",), external={"ntcireval": "P-measure"}))


def _ncurb(m: Any, ctx: PlanContext) -> KernelParams:
    gtype = 0 if m.param("gain") == "lin" else _raw_exp(m, ctx)
    beta = float(m.param("beta")) if m.param("nu") == "br" else 0.0
    return KernelParams(gtype=gtype, rel=1, fparam=beta, fparam2=float(m.param("gamma")))


def _ncurb_check(cutoff: Any, params: dict, text: str) -> None:
    _ncu_check(cutoff, params, text)
    g = params.get("gamma", 0.95)
    if not 0.0 < g <= 1.0:
        raise MeasureParseError(f"measure {text!r}: `gamma` must be in (0, 1], got {g}")


register(Family(
    name="NCUrb", code=34,
    description="normalised cumulative utility, rank-biased stops gamma^(c-1)/Z at the c-th "
                "relevant document",
    formula="NCUrb@k = (1/Z) sum_{r<=k} I(r) gamma^(C(r)-1) NU(r), Z = sum_{i<R} gamma^i, NU = "
            "BR(r) = (C(r) + beta cg(r)) / (r + beta cg*(r)) (nu=br) or C(r)/r (nu=p); gamma=1 "
            "gives Q-measure",
    source="Sakai & Robertson, EVIA 2008 (NTCIREVAL's NCUrb,BR and NCUrb,P; --gamma 0.95)",
    plain=nt.ncurb_plain_r, tied=nt.ncurb_tied_r, iub=nt.ncurb_iub_r, reb=nt.ncurb_reb_r,
    kernel_params=_ncurb, reals=2, params={"gamma": 0.95, "nu": "br", "beta": 1.0, "gain": "lin"},
    choices={"nu": ("br", "p"), **_LIN_EXP}, check=_ncurb_check,
    fixed_aliases={"NCUrbBR": {"nu": "br"}, "NCUrbP": {"nu": "p"}},
    state=("nrel", "ideal"), sorted_labels="all", external={"ntcireval": "NCUrb,BR"}))
