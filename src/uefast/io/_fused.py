"""One pass from a run file's bytes to trec_eval's ranked relevance values, topic by topic.

The staged fast path (:func:`uefast.io._words.scan_run_words`, then
:func:`uefast.io._topics.run_group`, :func:`~uefast.io._topics.run_index` and
:func:`~uefast.io._topics.ranked_rel`) writes eight 8-byte values per run line to fresh memory and
reads them back in three more passes. Run files list each topic's lines together, so here the
lines of one topic (a *block*) are parsed into a small scratch area that is reused from block to
block and stays in cache; when the block ends it is checked for a repeated docno, joined to the
topic's qrels table (:func:`uefast.io._topics.build_topic_tables`) and ranked in place
(:func:`uefast.io._topics.rank_rows`: score descending, docno descending, trec_eval's
``form_res_rels.c`` order), and only its relevance values are written out. On the 17 TREC 2003
Robust runs a whole ``evaluate_trec_files`` round took 15% less time than with the staged path;
skipping repeated line prefixes and suffixes, loop-free score reading, the natural-merge tie sort
and compiling the loops without reference counting then took the pass itself from ~193 to
~120 ms; relevance values kept in the qrels table's slots, a loop-free docno key and the tie
groups sorted without reference counting, to ~95 ms (``benchmarks/RESULTS_trec.md``). The
per-line parsing uses the word-at-a-time scanner's helpers (:mod:`uefast.io._words`: same
results).

The pass handles the common case only and returns ``ok == False`` for anything else, which the
caller then gives to the staged path (which words every error and handles every odd case): bytes
that :func:`~uefast.io._words._plain` refuses, a line with too few fields, a score that needs
Arrow, a docno repeated within a block, a topic with qrels whose lines are not all in one block,
an empty file. Extra columns after the runid are skipped (``extra_columns="ignore"``) and the rank
field is not read, as in trec_eval. A docno repeated within one block of a topic without qrels
sends the file to the staged path too, though that path then evaluates it the same way (such
topics are dropped); lines of such a topic in separate blocks are not checked against each other,
for the same reason.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _bits_f64, _load_le64
from uefast.io._floatparse import _parse_float_open
from uefast.io._hashtab import _eqb, _fnv, _key, _probe, _wcode, _wfind
from uefast.io._topics import _pow2, code_value, rank_rows
from uefast.io._words import _at_end, _content, _docno_key, _fend, _ld, _plain, _score_bits, _skip

__all__ = ["scan_rank_run"]

_U = np.uint64
_jit = nb.njit(cache=True, nogil=True)
_inl = nb.njit(cache=True, nogil=True, inline="always")
# The line loop and the block join allocate nothing: compiled without reference counting
# (Numba's ``_nrt=False``), since the helpers inlined into them (``inline="always"``) otherwise
# keep a count on every array they are passed -- calls to NRT_incref / NRT_decref (atomic
# operations) several times per line. 17 Robust runs, sum of per-file best of 11: the one-pass
# scan 145 -> 126 ms. Such a function must not call one that allocates: Numba compiles its
# callees without reference counting too (and np.empty then fails to compile).
_jit_no_rc = nb.njit(cache=True, nogil=True, _nrt=False)


@_inl
def _repeat(dslot, bid, mask, k, buf, sds, sde, sh, sw0, sw1):
    """Whether block row k's docno equals that of an earlier row put in ``dslot`` during block
    ``bid``; if not, row k is put there. A slot holds ``bid << 32 | row``: slots of other
    blocks read as empty, so the table is never cleared (it was, 48 KB per 1000-line block:
    ~1% of the pass)."""
    h = sh[k]
    ln = sde[k] - sds[k]
    p = h & mask
    while True:
        v = dslot[p]
        if (v >> 32) != bid:
            dslot[p] = (bid << 32) | k
            return False
        j = v & 0xFFFFFFFF
        if (sh[j] == h and sw0[j] == sw0[k] and sw1[j] == sw1[k] and sde[j] - sds[j] == ln
                and (ln <= 16 or _eqb(buf, sds[j], sde[j], buf, sds[k], sde[k]))):
            return True
        p = (p + _U(1)) & mask


@_jit_no_rc
def _join_block(t, m, buf, sds, sde, sh, sw0, sw1, lab, perm, dslot, bid, used, tab, soff, r_data, r_s, r_e,
                row_label):
    """Check block ``bid``'s rows 0..m-1 for a repeated docno (False if one), and for a topic with
    qrels (``t >= 0``) set ``lab[k]`` to row k's relevance value: the qrels label (-2 where it is
    negative: pooled but unjudged; read from the table slot, :func:`uefast.io._topics.code_value`),
    -1 where the topic's qrels do not list the docno; ``perm[k]`` to k. Returns (ok, checksum of
    the table prefetch: to be ignored). Allocates nothing (and calls nothing that does): compiled
    without reference counting."""
    mask = _U(_pow2(2 * m) - 1)
    warm = _U(0)
    if t >= 0:
        tbase = soff[t]
        tmask = _U(soff[t + 1] - tbase - 1)
        # read the topic's table once in address order (hardware prefetch) before the random
        # probes, as uefast.io._topics.run_index does
        for j in range(3 * tbase, 3 * soff[t + 1], 8):
            warm ^= tab[j]
    for k in range(m):
        r = np.int64(-1)
        if t >= 0:
            r, p = _wfind(tab, tbase, tmask, sh[k], sw0[k], sw1[k], sde[k] - sds[k], r_data, r_s, r_e, buf,
                          sds[k], sde[k])
        if r >= 0:  # a judged docno: repeated if its qrels row was met before (a topic is one block)
            if used[r]:
                return False, _U(0)
            used[r] = True
            lab[k] = code_value(_wcode(tab, tbase, p), r, row_label)
        elif _repeat(dslot, bid, mask, k, buf, sds, sde, sh, sw0, sw1):
            return False, _U(0)
        else:
            lab[k] = -1
        perm[k] = k
    return True, warm


@_jit
def _rank_block(t, m, buf, sds, sde, sh, sw0, sw1, ssc, lab, perm, tmp, bnd, dslot, bid, used, tab, soff, r_data,
                r_s, r_e, row_label, rel, o):
    """:func:`_join_block`, then for a topic with qrels the block's relevance values in rank order
    (:func:`uefast.io._topics.rank_rows`) to ``rel[o:o + m]``. Returns (ok, checksum)."""
    ok, warm = _join_block(t, m, buf, sds, sde, sh, sw0, sw1, lab, perm, dslot, bid, used, tab, soff, r_data, r_s,
                           r_e, row_label)
    if not ok or t < 0:
        return ok, warm
    seg = perm[:m]
    rank_rows(seg, ssc, tmp, bnd, buf, sds, sde, sw0, sw1)
    for k in range(m):
        rel[o + k] = lab[seg[k]]
    return True, warm


@_jit
def _grown(a, m):
    b = np.empty(2 * a.size, a.dtype)
    for i in range(m):  # a loop, not a slice assignment (uefast.kernels docstring)
        b[i] = a[i]
    return b


_EOF, _NEW, _FULL, _FAIL = 0, 1, 2, 3


@_jit_no_rc
def _same(buf, a, b, k, n):
    """True if the k bytes at a equal the k bytes at b (a < b, b + k <= n), compared a word at
    a time."""
    j = 0
    while k - j >= 8:
        if _load_le64(buf, a + j) != _load_le64(buf, b + j):
            return False
        j += 8
    if j < k:
        x = _ld(buf, a + j, n) ^ _ld(buf, b + j, n)
        if x & ((_U(1) << _U(8 * (k - j))) - _U(1)) != _U(0):
            return False
    return True


@_jit_no_rc
def _next_field(buf, e, n):
    """Start of the field after one that ends at e: e + 1 when a single separator is followed by
    a field byte (the common case, one test), else after every separator; -1 if no field
    follows on the line."""
    if e + 1 < n and buf[e] != 10 and buf[e + 1] > 32:
        return e + 1
    i = _skip(buf, e, n)
    if _at_end(buf, i, n):
        return -1
    return i


@_jit_no_rc
def _parse_lines(buf, i, q_s, q_e, m, sds, sde, sh, sw0, sw1, ssc, f32, pow5, rs, re_, rep):
    """Parse run lines from ``i`` into block rows ``m, m + 1, ...`` while their qid is
    ``buf[q_s:q_e]``. Returns (status, i, qid end, m, runid start, runid end): ``_NEW`` with the
    next line's qid at ``buf[i:qid end]``, ``_EOF``, ``_FULL`` (the scratch arrays are full; ``i``
    is the start of the line not read), or ``_FAIL`` (the staged path must take the file). A
    separate function so that the caller's scratch arrays are not rebound inside the line loop
    (Numba then keeps reference counts per line: ~2x slower).

    Repeated text is compared, not parsed: within a block, a line's ``qid Q0`` prefix (up to its
    docno) and its suffix after the score (separator, runid, any extra columns, newline) are
    nearly always the same bytes as in an earlier line of the block, and are then skipped with a
    word-wise comparison (:func:`_same`) instead of being split into fields. ``rep`` carries that
    earlier line's (prefix start, prefix length, suffix start, suffix length) from call to call;
    a prefix length of 0 means none (a new block). Equal bytes mean equal fields, so the result
    is the same as parsing them (the runid returned is then an earlier line's: the same text).
    The 17 Robust runs: ~15% less time in this function (best of 21).
    """
    n = buf.size
    cap = sds.size
    pp, pk, sp, sk = rep[0], rep[1], rep[2], rep[3]
    while i < n:
        s0 = i
        if pk > 0 and i + pk < n and _same(buf, pp, i, pk, n) and buf[i + pk] > 32:
            # the block's qid and Q0, with the same separators: the docno starts at i + pk
            if m == cap:
                rep[0], rep[1], rep[2], rep[3] = pp, pk, sp, sk
                return _FULL, i, i, m, rs, re_
            i += pk
        else:
            i = _content(buf, i, n)
            if i >= n:
                break
            s0 = i
            # qid: the block ends where it changes
            e = _fend(buf, i, n)
            if q_s < 0 or not _eqb(buf, q_s, q_e, buf, i, e):
                rep[0], rep[1], rep[2], rep[3] = pp, 0, sp, sk
                return _NEW, i, e, m, rs, re_
            if m == cap:
                rep[0], rep[1], rep[2], rep[3] = pp, pk, sp, sk
                return _FULL, i, e, m, rs, re_
            # Q0 (any text)
            i = _next_field(buf, e, n)
            if i < 0:
                return _FAIL, s0, e, m, rs, re_
            i = _next_field(buf, _fend(buf, i, n), n)
            if i < 0:
                return _FAIL, s0, e, m, rs, re_
            pp, pk = s0, i - s0
        # docno
        e = _fend(buf, i, n)
        h, w0, w1 = _docno_key(buf, i, e, n)
        sds[m] = i
        sde[m] = e
        sh[m] = h
        sw0[m] = w0
        sw1[m] = w1
        i = _next_field(buf, e, n)
        if i < 0:
            return _FAIL, s0, e, m, rs, re_
        # rank: not read (trec_eval ignores it)
        i = _next_field(buf, _fend(buf, i, n), n)
        if i < 0:
            return _FAIL, s0, e, m, rs, re_
        # score
        e = _fend(buf, i, n)
        ok, b = _score_bits(buf, i, e, n, pow5)
        if not ok:
            ok, b, p = _parse_float_open(buf, i, n, pow5)
            if not ok or not _at_end(buf, p, n):
                return _FAIL, s0, e, m, rs, re_
        v = _bits_f64(b)
        if v != v:
            return _FAIL, s0, e, m, rs, re_
        if f32:
            v = np.float64(np.float32(v))
        ssc[m] = v
        if sk > 0 and e + sk <= n and _same(buf, sp, e, sk, n):
            i = e + sk  # the suffix of an earlier line: the next line starts here
            m += 1
            continue
        i = _next_field(buf, e, n)
        if i < 0:
            return _FAIL, s0, e, m, rs, re_
        # runid
        f = _fend(buf, i, n)
        rs, re_ = i, f
        # the rest of the line: nothing, or extra columns (skipped)
        i = f
        while i < n and buf[i] != 10:
            i += 1
        i += 1
        if i <= n:  # a suffix ending in a newline
            sp, sk = e, i - e
        m += 1
    rep[0], rep[1], rep[2], rep[3] = pp, pk, sp, sk
    return _EOF, i, i, m, rs, re_


@_jit
def scan_rank_run(buf, f32, pow5, t_data, t_s, t_e, t_slots, t_keys, tab, soff, r_data, r_s, r_e, row_label):
    """Scan a run file's bytes and rank it against a :class:`~uefast.trec_eval.prepare.QrelsIndex`
    (its topic table ``t_*``, per-topic docno tables ``tab`` / ``soff`` over the docnos
    ``r_data[r_s:r_e]`` and ``row_label``), scores rounded to float32 first with ``f32``
    (trec_eval 9.x). Returns (ok, rel, counts, rows, runid start, runid end, checksum): ``rel``
    the relevance values in rank order, topics in qrels code order, ``counts[t]`` the rows of
    qrels topic t, ``rows`` the run's content lines, and a checksum of the table prefetch (to be
    ignored: returned so that the reads are not optimised away); ok False: use the staged path
    (module docstring). ``buf`` must be contiguous, on a little-endian machine (8-byte word
    loads; the caller checks).
    """
    n = buf.size
    nq = t_s.size
    e0 = np.zeros(0, np.int64)
    warm = _U(0)
    if n == 0 or not _plain(buf):
        return False, e0, e0, 0, 0, 0, warm
    cap = 1024
    sds = np.empty(cap, np.int64)
    sde = np.empty(cap, np.int64)
    sh = np.empty(cap, np.uint64)
    sw0 = np.empty(cap, np.uint64)
    sw1 = np.empty(cap, np.uint64)
    ssc = np.empty(cap, np.float64)
    lab = np.empty(cap, np.int64)
    perm = np.empty(cap, np.int64)
    tmp = np.empty(cap, np.int64)
    bnd = np.empty(cap + 1, np.int64)  # the tie sort's run bounds
    dslot = np.full(_pow2(2 * cap), -1, np.int64)  # _repeat's table
    used = np.zeros(r_s.size, np.bool_)  # qrels rows met (judged docnos seen in their topic)
    rel = np.empty(n // 11 + 2, np.int64)
    b_code = np.empty(nq, np.int64)
    b_start = np.empty(nq, np.int64)
    seen = np.zeros(nq, np.bool_)
    zero = np.zeros(nq, np.int64)
    nblk = 0  # blocks of topics with qrels
    nb_all = np.int64(0)  # all blocks
    # int64 zeros, not the literal 0: a callee first typed with a Literal[int](0) argument is
    # compiled twice (once for the literal, once for int64): _parse_lines alone took ~15 s more
    # of a first-ever command
    o = np.int64(0)
    cq_s, cq_e, ct, m = np.int64(-1), np.int64(-1), np.int64(-1), np.int64(0)
    rows = 0
    rs, re_ = np.int64(0), np.int64(0)
    i = np.int64(0)
    rep = np.zeros(4, np.int64)  # _parse_lines' repeated prefix / suffix
    while True:
        st, i, e, m, rs, re_ = _parse_lines(buf, i, cq_s, cq_e, m, sds, sde, sh, sw0, sw1, ssc, f32, pow5, rs, re_,
                                            rep)
        if st == _FAIL:
            return False, e0, e0, 0, 0, 0, warm
        if st == _FULL:  # a longer block: larger scratch arrays
            sds, sde, sh, sw0, sw1 = _grown(sds, m), _grown(sde, m), _grown(sh, m), _grown(sw0, m), _grown(sw1, m)
            ssc, lab, perm, tmp = _grown(ssc, m), _grown(lab, m), _grown(perm, m), _grown(tmp, m)
            bnd = np.empty(tmp.size + 1, np.int64)
            dslot = np.full(_pow2(2 * sds.size), -1, np.int64)
            continue
        if cq_s >= 0:  # the block [cq_s ...] ended
            ok, w = _rank_block(ct, m, buf, sds, sde, sh, sw0, sw1, ssc, lab, perm, tmp, bnd, dslot, nb_all, used, tab,
                                soff, r_data, r_s, r_e, row_label, rel, o)
            nb_all += 1
            if not ok:
                return False, e0, e0, 0, 0, 0, warm
            warm ^= w
            rows += m
            if ct >= 0:
                b_code[nblk] = ct
                b_start[nblk] = o
                nblk += 1
                o += m
        if st == _EOF:
            break
        ct = _probe(t_slots, t_keys, zero, t_data, t_s, t_e, 0, _key(np.int64(0), _fnv(buf, i, e)), buf, i, e)
        if ct >= 0:
            if seen[ct]:  # the topic's lines are not together
                return False, e0, e0, 0, 0, 0, warm
            seen[ct] = True
        cq_s, cq_e, m = i, e, np.int64(0)
    if rows == 0:
        return False, e0, e0, 0, 0, 0, warm
    counts = np.zeros(nq, np.int64)
    b_end = np.empty(nblk, np.int64)
    srt = True
    for k in range(nblk):
        b_end[k] = b_start[k + 1] if k + 1 < nblk else o
        counts[b_code[k]] = b_end[k] - b_start[k]
        if k > 0 and b_code[k] < b_code[k - 1]:
            srt = False
    if srt:
        return True, rel[:o], counts, rows, rs, re_, warm
    out = np.empty(o, np.int64)  # blocks into qrels topic order
    # the blocks' topic codes are distinct (``seen``): placed by code, not sorted (np.argsort
    # would compile NumPy's quicksort into the first command, ~0.6 s of CPU)
    blk = np.full(nq, -1, np.int64)
    for k in range(nblk):
        blk[b_code[k]] = k
    p = 0
    for t in range(nq):
        k = blk[t]
        if k < 0:
            continue
        for j in range(b_start[k], b_end[k]):
            out[p] = rel[j]
            p += 1
    return True, out, counts, rows, rs, re_, warm
