"""Dispatch from a measure family's kernel code to its routines. GENERATED from the
registry by ``UEFAST_CODEGEN=1 python -m uefast.measures._codegen``: do not edit.

One ``if kind == K_...`` line per registered family in each function; an unknown code returns
NaN (the paper's REB: the exact REB it was given), never another measure's numbers.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.ntcir import (
    jkdcg_iub_r,
    jkdcg_plain_r,
    jkdcg_reb_r,
    jkdcg_tied_r,
    ncu_iub_r,
    ncu_plain_r,
    ncu_reb_r,
    ncu_tied_r,
    ncurb_iub_r,
    ncurb_plain_r,
    ncurb_reb_r,
    ncurb_tied_r,
    pm_plain_r,
    pm_reb_r,
    pm_tied_r,
)
from uefast.kernels.routines import (
    ap_iub_r,
    ap_paper_r,
    ap_plain_r,
    ap_reb_r,
    ap_tied_r,
    bpref_plain_r,
    bpref_reb_r,
    bpref_tied_r,
    dcg_iub_r,
    dcg_paper_r,
    dcg_plain_r,
    dcg_reb_r,
    dcg_tied_r,
    e_iub_r,
    e_plain_r,
    e_reb_r,
    e_tied_r,
    err_iub_r,
    err_plain_r,
    err_reb_r,
    err_tied_r,
    f_iub_r,
    f_plain_r,
    f_reb_r,
    f_tied_r,
    o_plain_r,
    o_reb_r,
    o_tied_r,
    one_iub_r,
    p_iub_r,
    p_plain_r,
    p_reb_r,
    p_tied_r,
    pplus_plain_r,
    pplus_reb_r,
    pplus_tied_r,
    q_plain_r,
    q_reb_r,
    q_tied_r,
    r_iub_r,
    r_plain_r,
    r_reb_r,
    r_tied_r,
    rbp_iub_r,
    rbp_plain_r,
    rbp_reb_r,
    rbp_tied_r,
    rbpres_iub_r,
    rbpres_plain_r,
    rbpres_reb_r,
    rbpres_tied_r,
    rprec_plain_r,
    rprec_reb_r,
    rprec_tied_r,
    rr_plain_r,
    rr_reb_r,
    rr_tied_r,
    sp_iub_r,
    sp_paper_r,
    sp_plain_r,
    sp_reb_r,
    sp_tied_r,
    success_plain_r,
    success_reb_r,
    success_tied_r,
)
from uefast.kernels.tbg import (
    tbg_iub_r,
    tbg_plain_r,
    tbg_reb_r,
    tbg_tied_r,
)

__all__ = ["measure_plain", "measure_tied", "measure_iub", "measure_reb", "paper_reb", "DISPATCHED",
           "ALL_FAMILIES", "FAMS", "family_set"]

K_DCG = 0
K_NDCG = 1
K_P = 2
K_R = 3
K_RPREC = 4
K_SP = 5
K_AP = 6
K_RR = 7
K_ERR = 8
K_RBP = 9
K_SUCCESS = 10
K_Q = 11
K_NERR = 12
K_O = 13
K_PPLUS = 14
K_F = 15
K_E = 16
K_BPREF = 17
K_JUDGED = 18
K_TBG = 19
K_JKNDCG = 30
K_NCU = 31
K_RBP_RESIDUAL = 32
K_PMEASURE = 33
K_NCURB = 34

F_DCG = 1 << K_DCG
F_NDCG = 1 << K_NDCG
F_P = 1 << K_P
F_R = 1 << K_R
F_RPREC = 1 << K_RPREC
F_SP = 1 << K_SP
F_AP = 1 << K_AP
F_RR = 1 << K_RR
F_ERR = 1 << K_ERR
F_RBP = 1 << K_RBP
F_SUCCESS = 1 << K_SUCCESS
F_Q = 1 << K_Q
F_NERR = 1 << K_NERR
F_O = 1 << K_O
F_PPLUS = 1 << K_PPLUS
F_F = 1 << K_F
F_E = 1 << K_E
F_BPREF = 1 << K_BPREF
F_JUDGED = 1 << K_JUDGED
F_TBG = 1 << K_TBG
F_JKNDCG = 1 << K_JKNDCG
F_NCU = 1 << K_NCU
F_RBP_RESIDUAL = 1 << K_RBP_RESIDUAL
F_PMEASURE = 1 << K_PMEASURE
F_NCURB = 1 << K_NCURB

#: the kernel codes the functions below handle (the registry checks a family's)
DISPATCHED = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 30, 31, 32, 33, 34})

#: the family set (bit ``code`` of each) of every family
ALL_FAMILIES = (F_DCG | F_NDCG | F_P | F_R | F_RPREC | F_SP | F_AP | F_RR | F_ERR | F_RBP |
                F_SUCCESS | F_Q | F_NERR | F_O | F_PPLUS | F_F | F_E | F_BPREF | F_JUDGED | F_TBG |
                F_JKNDCG | F_NCU | F_RBP_RESIDUAL | F_PMEASURE | F_NCURB)
#: the families the functions below dispatch to: all of them here; the CPU driver rebinds it
#: per family set (:func:`uefast.kernels.driver.chunk_kernels`)
FAMS = ALL_FAMILIES


def family_set(kinds) -> int:
    """The family set (bit ``code`` per family) of the kernel codes ``kinds``."""
    fams = 0
    for kind in set(int(k) for k in kinds):
        fams |= 1 << kind if kind in DISPATCHED else 0
    return fams


# inlined into the drivers' loops (Numba IR): a call per measure and query cost the core
# benchmark ~4% CPU time; the tie-aware dispatch (the larger one) stays a call
_jit = nb.njit(cache=True, nogil=True, inline="always")
_call = nb.njit(cache=True, nogil=True)


@_jit
def measure_plain(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, pos, ideal):
    """The raw value of family ``kind`` on one fully ordered list (normalised families: before the division by IUB)."""
    if FAMS & F_DCG:
        if kind == K_DCG:
            return dcg_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_NDCG:
        if kind == K_NDCG:
            return dcg_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_P:
        if kind == K_P:
            return p_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_R:
        if kind == K_R:
            return r_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_RPREC:
        if kind == K_RPREC:
            return rprec_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_SP:
        if kind == K_SP:
            return sp_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_AP:
        if kind == K_AP:
            return ap_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_RR:
        if kind == K_RR:
            return rr_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_ERR:
        if kind == K_ERR:
            return err_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_RBP:
        if kind == K_RBP:
            return rbp_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_SUCCESS:
        if kind == K_SUCCESS:
            return success_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_Q:
        if kind == K_Q:
            return q_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_NERR:
        if kind == K_NERR:
            return err_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_O:
        if kind == K_O:
            return o_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_PPLUS:
        if kind == K_PPLUS:
            return pplus_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_F:
        if kind == K_F:
            return f_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_E:
        if kind == K_E:
            return e_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_BPREF:
        if kind == K_BPREF:
            return bpref_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_JUDGED:
        if kind == K_JUDGED:
            return p_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_TBG:
        if kind == K_TBG:
            return tbg_plain_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs, pos, ideal)
    if FAMS & F_JKNDCG:
        if kind == K_JKNDCG:
            return jkdcg_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_NCU:
        if kind == K_NCU:
            return ncu_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_RBP_RESIDUAL:
        if kind == K_RBP_RESIDUAL:
            return rbpres_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_PMEASURE:
        if kind == K_PMEASURE:
            return pm_plain_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, pos, ideal)
    if FAMS & F_NCURB:
        if kind == K_NCURB:
            return ncurb_plain_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs, pos, ideal)
    return np.nan


@_call
def measure_tied(kind, lab, gend, ng, n, k, gtype, rel, fparam, norm, nrel, tabs, scratch, ideal):
    """The tie-aware (expected) raw value of family ``kind`` given tie groups ``gend[0:ng]``."""
    if FAMS & F_DCG:
        if kind == K_DCG:
            return dcg_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_NDCG:
        if kind == K_NDCG:
            return dcg_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_P:
        if kind == K_P:
            return p_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_R:
        if kind == K_R:
            return r_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_RPREC:
        if kind == K_RPREC:
            return rprec_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_SP:
        if kind == K_SP:
            return sp_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_AP:
        if kind == K_AP:
            return ap_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_RR:
        if kind == K_RR:
            return rr_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_ERR:
        if kind == K_ERR:
            return err_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_RBP:
        if kind == K_RBP:
            return rbp_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_SUCCESS:
        if kind == K_SUCCESS:
            return success_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_Q:
        if kind == K_Q:
            return q_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_NERR:
        if kind == K_NERR:
            return err_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_O:
        if kind == K_O:
            return o_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_PPLUS:
        if kind == K_PPLUS:
            return pplus_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_F:
        if kind == K_F:
            return f_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_E:
        if kind == K_E:
            return e_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_BPREF:
        if kind == K_BPREF:
            return bpref_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_JUDGED:
        if kind == K_JUDGED:
            return p_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_TBG:
        if kind == K_TBG:
            return tbg_tied_r(lab, gend, ng, n, k, gtype, rel, fparam, norm, nrel, tabs, scratch, ideal)
    if FAMS & F_JKNDCG:
        if kind == K_JKNDCG:
            return jkdcg_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_NCU:
        if kind == K_NCU:
            return ncu_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_RBP_RESIDUAL:
        if kind == K_RBP_RESIDUAL:
            return rbpres_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_PMEASURE:
        if kind == K_PMEASURE:
            return pm_tied_r(lab, gend, ng, n, k, gtype, rel, fparam[0], norm, nrel, tabs, scratch, ideal)
    if FAMS & F_NCURB:
        if kind == K_NCURB:
            return ncurb_tied_r(lab, gend, ng, n, k, gtype, rel, fparam, norm, nrel, tabs, scratch, ideal)
    return np.nan


@_jit
def measure_iub(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs):
    """IUB of family ``kind`` from the judged labels ``lab[0:n]`` sorted descending."""
    if FAMS & F_DCG:
        if kind == K_DCG:
            return dcg_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_NDCG:
        if kind == K_NDCG:
            return dcg_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_P:
        if kind == K_P:
            return p_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_R:
        if kind == K_R:
            return r_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_RPREC:
        if kind == K_RPREC:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_SP:
        if kind == K_SP:
            return sp_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_AP:
        if kind == K_AP:
            return ap_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_RR:
        if kind == K_RR:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_ERR:
        if kind == K_ERR:
            return err_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_RBP:
        if kind == K_RBP:
            return rbp_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_SUCCESS:
        if kind == K_SUCCESS:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_Q:
        if kind == K_Q:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_NERR:
        if kind == K_NERR:
            return err_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_O:
        if kind == K_O:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_PPLUS:
        if kind == K_PPLUS:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_F:
        if kind == K_F:
            return f_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_E:
        if kind == K_E:
            return e_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_BPREF:
        if kind == K_BPREF:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_JUDGED:
        if kind == K_JUDGED:
            return p_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_TBG:
        if kind == K_TBG:
            return tbg_iub_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs)
    if FAMS & F_JKNDCG:
        if kind == K_JKNDCG:
            return jkdcg_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_NCU:
        if kind == K_NCU:
            return ncu_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_RBP_RESIDUAL:
        if kind == K_RBP_RESIDUAL:
            return rbpres_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_PMEASURE:
        if kind == K_PMEASURE:
            return one_iub_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs)
    if FAMS & F_NCURB:
        if kind == K_NCURB:
            return ncurb_iub_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs)
    return np.nan


@_jit
def measure_reb(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, gsum, gend, scratch):
    """Exact REB of family ``kind``: its expectation over uniformly random orders of the judged labels."""
    if FAMS & F_DCG:
        if kind == K_DCG:
            return dcg_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_NDCG:
        if kind == K_NDCG:
            return dcg_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_P:
        if kind == K_P:
            return p_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_R:
        if kind == K_R:
            return r_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_RPREC:
        if kind == K_RPREC:
            return rprec_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_SP:
        if kind == K_SP:
            return sp_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_AP:
        if kind == K_AP:
            return ap_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_RR:
        if kind == K_RR:
            return rr_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_ERR:
        if kind == K_ERR:
            return err_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_RBP:
        if kind == K_RBP:
            return rbp_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_SUCCESS:
        if kind == K_SUCCESS:
            return success_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_Q:
        if kind == K_Q:
            return q_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_NERR:
        if kind == K_NERR:
            return err_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_O:
        if kind == K_O:
            return o_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_PPLUS:
        if kind == K_PPLUS:
            return pplus_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_F:
        if kind == K_F:
            return f_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_E:
        if kind == K_E:
            return e_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_BPREF:
        if kind == K_BPREF:
            return bpref_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_JUDGED:
        if kind == K_JUDGED:
            return p_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_TBG:
        if kind == K_TBG:
            return tbg_reb_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_JKNDCG:
        if kind == K_JKNDCG:
            return jkdcg_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_NCU:
        if kind == K_NCU:
            return ncu_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_RBP_RESIDUAL:
        if kind == K_RBP_RESIDUAL:
            return rbpres_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_PMEASURE:
        if kind == K_PMEASURE:
            return pm_reb_r(lab, n, k, gtype, rel, fparam[0], norm, nrel, tabs, gsum, gend, scratch)
    if FAMS & F_NCURB:
        if kind == K_NCURB:
            return ncurb_reb_r(lab, n, k, gtype, rel, fparam, norm, nrel, tabs, gsum, gend, scratch)
    return np.nan


@_jit
def paper_reb(kind, n, k, norm, nrel, tabs, gsum, exact):
    """The paper's REB (Santu & Feng 2022) of family ``kind`` where it gives one, else ``exact``."""
    if FAMS & F_DCG:
        if kind == K_DCG:
            return dcg_paper_r(n, k, norm, nrel, tabs, gsum)
    if FAMS & F_NDCG:
        if kind == K_NDCG:
            return dcg_paper_r(n, k, norm, nrel, tabs, gsum)
    if FAMS & F_SP:
        if kind == K_SP:
            return sp_paper_r(n, k, norm, nrel, tabs, gsum)
    if FAMS & F_AP:
        if kind == K_AP:
            return ap_paper_r(n, k, norm, nrel, tabs, gsum)
    return exact
