"""Slow, obviously-correct reference implementations (plain Python, one query at a time).

Everything here follows the textbook definitions directly (SPEC_math §0-§5) so that the Numba
kernels can be compared against it: metrics on an explicit ranked list of labels, IUB on the
sorted labels, REB and tie-aware values by enumerating permutations (tiny n only).
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

# ----------------------------------------------------------------------------- metrics


def gain(label, gtype):
    if label <= 0:
        return 0.0
    return float(label) if gtype == "lin" else 2.0 ** label - 1.0


def cut(k, n):
    return n if k is None or k > n else k


def dcg(labels, k=None, gtype="lin"):
    return sum(gain(l, gtype) / math.log2(i + 2) for i, l in enumerate(labels[: cut(k, len(labels))]))


def ndcg(labels, judged, k=None, gtype="lin"):
    ideal = dcg(sorted(judged, reverse=True), k, gtype)
    return dcg(labels, k, gtype) / ideal if ideal > 0 else 0.0


def precision(labels, k, rel=1):
    return sum(1 for l in labels[:k] if l >= rel) / k


def recall(labels, k, nrel, rel=1):
    return sum(1 for l in labels[:k] if l >= rel) / nrel if nrel else 0.0


def rprec(labels, nrel, rel=1):
    return sum(1 for l in labels[:nrel] if l >= rel) / nrel if nrel else 0.0


def sp(labels, k=None, rel=1):
    """sum_{i<=K} Prec(i) * rel_i with Prec(i) = (1/i) sum_{j<=i} rel_j."""
    total = 0.0
    for i in range(cut(k, len(labels))):
        if labels[i] >= rel:
            prec_i = sum(1 for l in labels[: i + 1] if l >= rel) / (i + 1)
            total += prec_i
    return total


def ap(labels, nrel, k=None, rel=1, norm="rel"):
    if nrel == 0:
        return 0.0
    denom = {"rel": nrel, "k": k, "min": min(nrel, k or nrel)}[norm]
    return sp(labels, k, rel) / denom


def rr(labels, k=None, rel=1):
    for i, l in enumerate(labels[: cut(k, len(labels))]):
        if l >= rel:
            return 1.0 / (i + 1)
    return 0.0


def success(labels, k, rel=1):
    return 1.0 if any(l >= rel for l in labels[: cut(k, len(labels))]) else 0.0


def err(labels, k=None, lmax=4, gtype="exp"):
    """ERR@k; theta(l) = (2^l - 1)/2^lmax (exp, Chapelle et al.) or l/(lmax+1) (lin, NTCIREVAL)."""
    total, stay = 0.0, 1.0
    for i, l in enumerate(labels[: cut(k, len(labels))]):
        l = max(l, 0)
        theta = (2.0 ** l - 1) / 2.0 ** lmax if gtype == "exp" else l / (lmax + 1)
        total += stay * theta / (i + 1)
        stay *= 1 - theta
    return total


def rbp(labels, p=0.8, k=None, rel=1, gtype="bin", lmax=4):
    """Binary RBP, or graded with gains g(l)/g(lmax)."""
    if gtype != "bin":
        top = gain(lmax, gtype)
        return (1 - p) * sum(p ** i * gain(l, gtype) / top
                             for i, l in enumerate(labels[: cut(k, len(labels))]))
    return (1 - p) * sum(p ** i for i, l in enumerate(labels[: cut(k, len(labels))]) if l >= rel)


def f_measure(labels, nrel, k=None, beta=1.0, rel=1):
    """F_beta from set precision and recall of the top k (the whole list without k)."""
    c = sum(1 for l in labels[: cut(k, len(labels))] if l >= rel)
    if c == 0:
        return 0.0
    prec = c / (k if k else len(labels))
    recall = c / nrel
    return (1 + beta ** 2) * prec * recall / (beta ** 2 * prec + recall)


def nerr(labels, judged, k=None, lmax=4, gtype="lin"):
    """ERR@k / ERR@k of the judged labels sorted descending (0 when that is 0)."""
    ideal = err(sorted(judged, reverse=True), k, lmax, gtype)
    return err(labels, k, lmax, gtype) / ideal if ideal > 0 else 0.0


def blended_ratio(labels, ideal, r, beta, gtype):
    """BR(r) = (C(r) + beta cg(r)) / (r + beta cg*(r)) (Sakai), ranks from 1."""
    c = sum(1 for l in labels[:r] if l >= 1)
    cg = sum(gain(l, gtype) for l in labels[:r])
    cgi = sum(gain(l, gtype) for l in ideal[:r])
    return (c + beta * cg) / (r + beta * cgi)


def q_measure(labels, judged, k=None, beta=1.0, gtype="lin"):
    """Q@k = (1/min(R, k)) sum_{r<=k} I(r) BR(r) (R: no cutoff), straight from the definition."""
    nrel = sum(1 for l in judged if l >= 1)
    if nrel == 0:
        return 0.0
    ideal = sorted(judged, reverse=True)
    total = sum(blended_ratio(labels, ideal, r, beta, gtype)
                for r in range(1, cut(k, len(labels)) + 1) if labels[r - 1] >= 1)
    return total / (min(nrel, k) if k else nrel)


def o_measure(labels, judged, k=None, beta=1.0, gtype="lin"):
    """BR at the first relevant rank within k (0 if none)."""
    ideal = sorted(judged, reverse=True)
    for r in range(1, cut(k, len(labels)) + 1):
        if labels[r - 1] >= 1:
            return blended_ratio(labels, ideal, r, beta, gtype)
    return 0.0


def pplus(labels, judged, beta=1.0, gtype="lin"):
    """P+ = (1/C(rp)) sum_{r<=rp} I(r) BR(r), rp the first rank holding the list's top level."""
    top = max(labels, default=0)
    if top < 1:
        return 0.0
    ideal = sorted(judged, reverse=True)
    rp = labels.index(top) + 1
    rels = [r for r in range(1, rp + 1) if labels[r - 1] >= 1]
    return sum(blended_ratio(labels, ideal, r, beta, gtype) for r in rels) / len(rels)


def p_measure(labels, judged, beta=1.0, gtype="lin"):
    """P-measure = BR(rp), rp the first rank holding the list's top level (0 if none relevant)."""
    top = max(labels, default=0)
    if top < 1:
        return 0.0
    return blended_ratio(labels, sorted(judged, reverse=True), labels.index(top) + 1, beta, gtype)


def bpref(labels, judged, rel=1):
    """trec_eval's bpref on a list of judged documents (the condensed list)."""
    nrel = sum(1 for l in judged if l >= rel)
    nnon = len(judged) - nrel
    if nrel == 0:
        return 0.0
    total, x = 0.0, 0
    for l in labels:
        if l >= rel:
            total += 1.0 if x == 0 else 1.0 - min(x, nrel) / min(nrel, nnon)
        else:
            x += 1
    return total / nrel


def judged_at(labels, k):
    """Judged@k on a list of judged documents (LETOR: every candidate is judged)."""
    return min(len(labels), k) / k


def tbg(labels, k=None, rel=1, h=224.0, ts=4.4, alpha=0.018, beta=7.8, pc1=0.64, pc0=0.39,
        ps1=0.77, length=1000.0, lengths=None):
    """Time-biased gain straight from Smucker & Clarke (SIGIR 2012), eq. 3-6: the time to reach
    rank i is T(i) = sum_{j<i} (T_s + P(C=1|R=r_j)(alpha * l_j + beta)); a relevant document
    at rank i adds P(C=1|R=1) P(S=1|R=1) exp(-T(i) ln 2 / h). ``lengths``: each ranked
    document's length l_j in words (None: every document ``length`` words)."""
    total, time = 0.0, 0.0
    for i, l in enumerate(labels[: cut(k, len(labels))]):
        r = l >= rel
        if r:
            total += pc1 * ps1 * math.exp(-time * math.log(2) / h)
        size = length if lengths is None else lengths[i]
        time += ts + (pc1 if r else pc0) * (alpha * size + beta)
    return total


def jk_dcg(labels, k=None, logb=2.0, gtype="lin"):
    """Original DCG (Jarvelin & Kekalainen 2002, NTCIREVAL's nDCG): rank r's gain divided by
    log_b(r) from r >= b on (r = 1 never discounted)."""
    return sum(gain(l, gtype) / (1.0 if r == 1 or r < logb else math.log(r, logb))
               for r, l in enumerate(labels[:cut(k, len(labels))], start=1))


def jk_ndcg(labels, judged, k=None, logb=2.0, gtype="lin"):
    ideal = jk_dcg(sorted(judged, reverse=True), k, logb, gtype)
    return jk_dcg(labels, k, logb, gtype) / ideal if ideal > 0 else 0.0


def ncu(labels, judged, k=None, beta=1.0, gtype="lin", nu="br"):
    """NCU with graded-uniform stops (stop value = gain): sum over relevant ranks r <= k of
    g(l_r)/G times BR(r) (nu=br) or precision C(r)/r (nu=p), G the judged gain sum."""
    total = sum(gain(l, gtype) for l in judged)
    if total <= 0:
        return 0.0
    ideal = sorted(judged, reverse=True)
    b = beta if nu == "br" else 0.0
    return sum(gain(labels[r - 1], gtype) / total * blended_ratio(labels, ideal, r, b, gtype)
               for r in range(1, cut(k, len(labels)) + 1) if labels[r - 1] >= 1)


def ncu_rb(labels, judged, k=None, gamma=0.95, beta=1.0, gtype="lin", nu="br"):
    """NCU with rank-biased stops: the c-th relevant document of the list is the stop with
    probability gamma^(c-1) / sum_{i<R} gamma^i; utility BR(r) (nu=br) or precision (nu=p)."""
    nrel = sum(1 for l in judged if l >= 1)
    if nrel == 0:
        return 0.0
    ideal = sorted(judged, reverse=True)
    b = beta if nu == "br" else 0.0
    z = sum(gamma ** i for i in range(nrel))
    rel_ranks = [r for r in range(1, cut(k, len(labels)) + 1) if labels[r - 1] >= 1]
    return sum(gamma ** c / z * blended_ratio(labels, ideal, r, b, gtype)
               for c, r in enumerate(rel_ranks))


def rbp_residual(flags, p=0.8, k=None):
    """RBP's residual (Moffat & Zobel 2008) from its definition: what RBP to depth K would gain
    if every unjudged document (flag 0) among the top K were fully relevant (gain 1: weight
    (1-p) p^(i-1)), plus the tail beyond depth K all relevant: (1-p) sum_{i>K} p^(i-1) = p^K."""
    K = cut(k, len(flags))
    return sum((1 - p) * p ** i for i in range(K) if not flags[i]) + p ** K


#: the families this module has a reference for (tests/test_registry.py: every registered family
#: must be here)
REFERENCE = frozenset({"DCG", "nDCG", "P", "R", "Rprec", "SP", "AP", "RR", "ERR", "RBP",
                       "Success", "Q", "nERR", "O", "Pplus", "F", "E", "bpref", "Judged", "TBG",
                       "JKnDCG", "NCU", "RBP-residual", "Pmeasure", "NCUrb"})


def measure(name, labels, judged, *, k=None, rel=1, gtype="lin", norm="rel", p=0.8, lmax=4,
            beta=1.0, logb=2.0, nu="br", gamma=0.95, **tbg_params):
    """Dispatch by measure family name; ``judged`` = all judged labels of the query."""
    labels = [max(int(l), 0) for l in labels]
    judged = [max(int(l), 0) for l in judged]
    nrel = sum(1 for l in judged if l >= rel)
    if name == "DCG":
        return dcg(labels, k, gtype)
    if name == "nDCG":
        return ndcg(labels, judged, k, gtype)
    if name == "P":
        return precision(labels, k, rel)
    if name == "R":
        return recall(labels, k, nrel, rel)
    if name == "Rprec":
        return rprec(labels, nrel, rel)
    if name == "SP":
        return sp(labels, k, rel) if nrel else 0.0
    if name == "AP":
        return ap(labels, nrel, k, rel, norm)
    if name == "RR":
        return rr(labels, k, rel) if nrel else 0.0
    if name == "ERR":
        return err(labels, k, lmax, gtype)
    if name == "nERR":
        return nerr(labels, judged, k, lmax, gtype)
    if name == "Q":
        return q_measure(labels, judged, k, beta, gtype)
    if name == "O":
        return o_measure(labels, judged, k, beta, gtype)
    if name == "Pplus":
        return pplus(labels, judged, beta, gtype)
    if name == "Pmeasure":
        return p_measure(labels, judged, beta, gtype)
    if name == "bpref":
        return bpref(labels, judged, rel)
    if name == "Judged":
        return judged_at(labels, k)
    if name == "RBP":
        return rbp(labels, p, k, rel, gtype, lmax)
    if name == "F":
        return f_measure(labels, nrel, k, beta, rel)
    if name == "E":
        return 1.0 - f_measure(labels, nrel, k, beta, rel)
    if name == "Success":
        return success(labels, k, rel)
    if name == "TBG":
        return tbg(labels, k, rel, beta=beta, **tbg_params)
    if name == "JKnDCG":
        return jk_ndcg(labels, judged, k, logb, gtype)
    if name == "NCU":
        return ncu(labels, judged, k, beta, gtype, nu)
    if name == "NCUrb":
        return ncu_rb(labels, judged, k, gamma, beta, gtype, nu)
    if name == "RBP-residual":  # LETOR style: every candidate is judged
        return rbp_residual([1] * len(labels), p, k)
    raise KeyError(name)


# ----------------------------------------------------------------------------- rankings


def rank_trec_eval(scores, docids):
    """Indices in trec_eval order: score descending, then docid descending as strings (bytes)."""
    keys = [str(d).encode() for d in docids]
    return sorted(range(len(scores)), key=lambda i: (scores[i], keys[i]), reverse=True)


def rank_input(scores):
    """Score descending, ties in input order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def tie_consistent_orders(scores):
    """Every order of the indices consistent with descending scores (all tie permutations)."""
    groups = {}
    for i, s in enumerate(scores):
        groups.setdefault(s, []).append(i)
    blocks = [groups[s] for s in sorted(groups, reverse=True)]
    for combo in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield [i for block in combo for i in block]


def expected_over_orders(fn, labels, orders):
    vals = [fn([labels[i] for i in o]) for o in orders]
    return sum(vals) / len(vals)


def reb_bruteforce(fn, judged):
    """E[fn] over all n! orders of the judged labels."""
    return expected_over_orders(fn, judged, itertools.permutations(range(len(judged))))


# ----------------------------------------------------------------------------- closed forms (SPEC_math §1)


def harmonic(m):
    return sum(1.0 / i for i in range(1, m + 1))


def reb_sp_closed(n, nrel, k):
    """E[SP@k] = bK + (a - b) H_K with a = Np/n, b = Np(Np-1)/(n(n-1))."""
    K = cut(k, n)
    a = nrel / n
    b = nrel * (nrel - 1) / (n * (n - 1)) if n > 1 else 0.0
    return b * K + (a - b) * harmonic(K)


def reb_ap_closed(n, nrel):
    """E[AP] = p + (1-p)(H_n - 1)/(n-1) (= 1 if n = 1)."""
    if nrel == 0:
        return 0.0
    if n == 1:
        return 1.0
    p = nrel / n
    return p + (1 - p) * (harmonic(n) - 1) / (n - 1)


def reb_rr_closed(n, nrel, k=None):
    """E[RR@k] = sum_{t=1..min(K, Nn+1)} C(Nn,t-1)/C(n,t-1) * Np/(n-t+1) / t (exact fractions)."""
    if nrel == 0:
        return 0.0
    K = cut(k, n)
    nn = n - nrel
    total = Fraction(0)
    for t in range(1, min(K, nn + 1) + 1):
        total += Fraction(math.comb(nn, t - 1), math.comb(n, t - 1)) * Fraction(nrel, n - t + 1) / t
    return float(total)


def reb_dcg_closed(judged, k=None, gtype="lin"):
    n = len(judged)
    gbar = sum(gain(l, gtype) for l in judged) / n
    return gbar * sum(1 / math.log2(i + 2) for i in range(cut(k, n)))
