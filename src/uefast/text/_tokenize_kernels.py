"""Numba scan of rouge-score's tokeniser over an Arrow UTF-8 buffer (SPEC_text §1).

rouge-score 0.1.2 does ``text.lower()``, ``re.sub("[^a-z0-9]+", " ")``, splits on whitespace and
keeps the tokens matching ``^[a-z0-9]+$``. On UTF-8 bytes that is: ``A-Z`` lower-cased, ``a-z`` and
``0-9`` kept, every other byte a separator -- except the only two non-ASCII characters whose
``str.lower()`` contains an ASCII letter or digit (checked over every code point):

* U+0130 (İ, bytes C4 B0) lower-cases to ``i`` + U+0307: a letter ``i`` that ends the token;
* U+212A (Kelvin sign, bytes E2 84 AA) lower-cases to ``k``: a letter inside the token.

In valid UTF-8 these byte sequences are exactly those characters (C4 and E2 are lead bytes).
Lines (``\\n``, rougeLsum's sentence split) are tracked too. One sequential pass interns each
token (its bytes as big-endian 8-byte words, an exact key since a token has no zero byte) in an
open-addressing table and writes its id.
"""
from __future__ import annotations

import numba as nb
import numpy as np

_jit = nb.njit(cache=True, nogil=True)
_inline = nb.njit(cache=True, nogil=True, inline="always")


def _make_lut() -> np.ndarray:
    lut = np.zeros(256, dtype=np.uint8)  # 0: separator
    for c in range(256):
        if 97 <= c <= 122 or 48 <= c <= 57:
            lut[c] = c
        elif 65 <= c <= 90:
            lut[c] = c + 32
    return lut


LUT = _make_lut()


@_jit
def _special(data, i, end):
    """A non-ASCII character at i: (token byte or 0, bytes consumed, ends the token)."""
    b = data[i]
    if b == 0xC4 and i + 1 < end and data[i + 1] == 0xB0:
        return np.uint8(105), 2, True  # U+0130 -> "i" + combining dot (a separator)
    if b == 0xE2 and i + 2 < end and data[i + 1] == 0x84 and data[i + 2] == 0xAA:
        return np.uint8(107), 3, False  # U+212A KELVIN SIGN -> "k"
    return np.uint8(0), 1, False


# ---------------------------------------------------------------------------------------------
# interning: token -> id in one sequential scan, tokens as big-endian words of 8 bytes (a token
# has no zero byte, so the words and the byte length identify it exactly)

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_U0 = np.uint64(0)


@_inline
def _hash_words(words, nw, nbytes):
    h = np.uint64(nbytes) * _GOLD
    for q in range(nw):
        h = (h ^ words[q]) * _GOLD
        h ^= h >> np.uint64(29)
    return h


@_inline
def _find(table, slot_w0, slot_nb, mask, h, words, nw, nbytes, pool, pool_off):
    """Slot of the token (words[:nw], nbytes) in the open-addressing table: its id there, or the
    empty slot (-1) where it goes. Each slot also holds its type's byte length and first word
    (``slot_nb``, ``slot_w0``), so a token of at most 8 bytes (most) is matched without reading
    the type's pool entry."""
    s = np.int64(h >> np.uint64(33)) & mask
    w0 = words[0]
    while True:
        t = table[s]
        if t < 0:
            return s
        if slot_nb[s] == nbytes and slot_w0[s] == w0:
            if nw == 1:
                return s
            o = pool_off[t]
            same = True
            for q in range(1, nw):
                if pool[o + q] != words[q]:
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask


@_jit
def _intern_run(data, offsets, lut, line_start, t, ids, tk, ln, line_tok, table, slot_w0,
                slot_nb, pool, pool_off, tok_bytes, n_types, words):
    """Intern texts from ``t`` on while the arrays surely have room for the next text (a text
    of B bytes has at most (B+1)//2 tokens, so as many new types, B//8 + (B+1)//2 pool words
    and B + 1 lines). The arrays are never reassigned here, which keeps the loop tight.
    Returns (next text, next token, next line, n_types)."""
    mask = table.size - 1
    while t < offsets.size - 1:
        i = offsets[t]
        end = offsets[t + 1]
        most = (end - i + 1) // 2
        if (2 * (n_types + most) > table.size or n_types + most + 1 >= pool_off.size
                or pool_off[n_types] + (end - i) // 8 + most > pool.size
                or ln + (end - i) + 2 > line_tok.size):
            break
        line_start[t] = ln
        nw = 0
        cur = _U0
        nb_ = 0
        while True:
            # the bytes of a token: ASCII letters and digits (lower-cased by the LUT)
            while i < end:
                c = lut[data[i]]
                if c == 0:
                    break
                cur = (cur << np.uint64(8)) | np.uint64(c)
                nb_ += 1
                i += 1
                if nb_ & 7 == 0:
                    words[nw] = cur
                    nw += 1
                    cur = _U0
            newline = False
            if i < end:
                b = data[i]
                if b < 128:
                    i += 1
                    newline = b == 10
                else:
                    c, k, stop = _special(data, i, end)
                    i += k
                    if c != 0:
                        cur = (cur << np.uint64(8)) | np.uint64(c)
                        nb_ += 1
                        if nb_ & 7 == 0:
                            words[nw] = cur
                            nw += 1
                            cur = _U0
                        if not stop:
                            continue
            if nb_ > 0:
                if nb_ & 7 != 0:  # the last, partial word
                    words[nw] = cur
                    nw += 1
                s = _find(table, slot_w0, slot_nb, mask, _hash_words(words, nw, nb_), words, nw,
                          nb_, pool, pool_off)
                if table[s] < 0:
                    slot_w0[s] = words[0]
                    slot_nb[s] = nb_
                    o = pool_off[n_types]
                    pool[o:o + nw] = words[:nw]
                    pool_off[n_types + 1] = o + nw
                    tok_bytes[n_types] = nb_
                    table[s] = n_types
                    n_types += 1
                ids[tk] = table[s]
                tk += 1
                nw = 0
                cur = _U0
                nb_ = 0
            if newline:  # after the token it ends
                ln += 1
                line_tok[ln] = tk
            if i >= end:
                break
        line_tok[ln + 1] = tk
        ln += 1
        t += 1
    line_start[t] = ln
    return t, tk, ln, n_types


@_jit
def _rehash(pool, pool_off, tok_bytes, n_types, size):
    table = np.full(size, -1, dtype=np.int64)
    slot_w0 = np.zeros(size, dtype=np.uint64)
    slot_nb = np.zeros(size, dtype=np.int64)
    for y in range(n_types):
        o = pool_off[y]
        nwy = pool_off[y + 1] - o
        sy = _find(table, slot_w0, slot_nb, size - 1,
                   _hash_words(pool[o:o + nwy], nwy, tok_bytes[y]), pool[o:o + nwy], nwy,
                   tok_bytes[y], pool, pool_off)
        table[sy] = y
        slot_w0[sy] = pool[o]
        slot_nb[sy] = tok_bytes[y]
    return table, slot_w0, slot_nb


@_jit
def intern_tokens(data, offsets, lut, ids):
    """Sequential scan of every text: token k (in text order) gets ids[k] (``ids`` sized for the
    most tokens the bytes can hold), the order of first occurrence of its string. Returns
    (n_tokens, line_start, line_tok, pool, pool_off, tok_bytes, n_types): text t's lines are
    line_start[t]:line_start[t+1], line l's tokens line_tok[l]:line_tok[l+1]; type i is the
    big-endian 8-byte words pool[pool_off[i]:pool_off[i+1]] holding tok_bytes[i] bytes. Open
    addressing (linear probing, load <= 1/2); the table, the pool and the line array grow
    between texts (:func:`_intern_run`)."""
    n = offsets.size - 1
    table = np.full(1 << 12, -1, dtype=np.int64)
    slot_w0 = np.zeros(1 << 12, dtype=np.uint64)
    slot_nb = np.zeros(1 << 12, dtype=np.int64)
    pool = np.empty(1 << 12, dtype=np.uint64)
    pool_off = np.zeros(1 << 11, dtype=np.int64)
    tok_bytes = np.empty(1 << 11, dtype=np.int64)
    line_start = np.zeros(n + 1, dtype=np.int64)
    line_tok = np.zeros(n + 2, dtype=np.int64)
    longest = 1
    for t in range(n):
        longest = max(longest, offsets[t + 1] - offsets[t])
    words = np.empty(longest // 8 + 2, dtype=np.uint64)
    t = 0
    tk = 0
    ln = 0
    n_types = 0
    while True:
        t, tk, ln, n_types = _intern_run(data, offsets, lut, line_start, t, ids, tk, ln,
                                         line_tok, table, slot_w0, slot_nb, pool, pool_off,
                                         tok_bytes, n_types, words)
        if t == n:
            break
        nbytes = offsets[t + 1] - offsets[t]
        need = n_types + (nbytes + 1) // 2 + 1
        if 2 * need > table.size:
            size = table.size
            while 2 * need > size:
                size *= 2
            table, slot_w0, slot_nb = _rehash(pool, pool_off, tok_bytes, n_types, size)
        if need >= pool_off.size:
            grown = np.zeros(2 * need, dtype=np.int64)
            grown[:n_types + 1] = pool_off[:n_types + 1]
            pool_off = grown
            more = np.empty(2 * need, dtype=np.int64)
            more[:n_types] = tok_bytes[:n_types]
            tok_bytes = more
        words_need = pool_off[n_types] + nbytes // 8 + (nbytes + 1) // 2 + 1
        if words_need > pool.size:
            bigger = np.empty(2 * words_need, dtype=np.uint64)
            bigger[:pool_off[n_types]] = pool[:pool_off[n_types]]
            pool = bigger
        if ln + nbytes + 2 > line_tok.size:
            lines = np.zeros(2 * (ln + nbytes + 2), dtype=np.int64)
            lines[:ln + 1] = line_tok[:ln + 1]
            line_tok = lines
    return tk, line_start, line_tok[:ln + 1], pool, pool_off, tok_bytes, n_types


@_jit
def type_bytes(pool, pool_off, tok_bytes, n_types, out, out_off):
    """The bytes of each interned type, back to back in ``out`` (``out_off``: n_types + 1)."""
    p = 0
    for y in range(n_types):
        out_off[y] = p
        nbytes = tok_bytes[y]
        o = pool_off[y]
        for j in range(nbytes):
            q = j >> 3
            in_word = 8 if q < (nbytes >> 3) else nbytes & 7
            shift = np.uint64(8 * (in_word - 1 - (j & 7)))
            out[p] = np.uint8((pool[o + q] >> shift) & np.uint64(0xFF))
            p += 1
    out_off[n_types] = p


@_jit
def gather_ids(local, remap, out, start):
    """out[start + k] = remap[local[k]]: a chunk's local type ids to the merged ids."""
    for k in range(local.size):
        out[start + k] = remap[local[k]]
