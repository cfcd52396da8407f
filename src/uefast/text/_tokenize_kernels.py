"""Numba kernels of the tokeniser (:mod:`uefast.text.tokenize`): the rouge-score cleaning of
UTF-8 text as a byte translation, the split into lines and words, and the interning of words
(raw token strings) to ids in first-occurrence order by an open-addressing hash table that
compares bytes on every hash match.
"""
from __future__ import annotations

import numba as nb
import numpy as np

_jit = nb.njit(cache=True, nogil=True)
_U = np.uint64


@_jit
def non_ascii(data, offs):
    """Per text: does it hold a byte >= 0x80 (a non-ASCII character)?"""
    n = offs.size - 1
    out = np.zeros(n, dtype=np.bool_)
    for t in range(n):
        for b in range(offs[t], offs[t + 1]):
            if data[b] >= 128:
                out[t] = True
                break
    return out


@_jit
def assemble(data, offs, table, done, done_data, done_offs):
    """The cleaned bytes of every text: texts with ``done[t]`` are copied from the pre-cleaned
    ``done_data`` (k-th such text at done_offs[k]:done_offs[k+1]); the others are translated
    byte by byte through ``table`` (ASCII lower-casing and rouge-score's cleaning in one)."""
    n = offs.size - 1
    new_offs = np.zeros(n + 1, dtype=np.int64)
    k = 0
    for t in range(n):
        if done[t]:
            ln = done_offs[k + 1] - done_offs[k]
            k += 1
        else:
            ln = offs[t + 1] - offs[t]
        new_offs[t + 1] = new_offs[t] + ln
    out = np.empty(new_offs[n], dtype=np.uint8)
    k = 0
    for t in range(n):
        o = new_offs[t]
        if done[t]:
            s = done_offs[k]
            for i in range(done_offs[k + 1] - s):
                out[o + i] = done_data[s + i]
            k += 1
        else:
            s = offs[t]
            for i in range(offs[t + 1] - s):
                out[o + i] = table[data[s + i]]
    return out, new_offs


@_jit
def _hash(data, s, e):
    h = _U(14695981039346656037)
    for b in range(s, e):
        h = (h ^ _U(data[b])) * _U(1099511628211)
    h = h ^ (h >> _U(29))
    return h


@_jit
def _same(data, s1, e1, s2, e2):
    if e1 - s1 != e2 - s2:
        return False
    for i in range(e1 - s1):
        if data[s1 + i] != data[s2 + i]:
            return False
    return True


@_jit
def split_and_intern(data, offs):
    """Split each cleaned text (bytes a-z, 0-9, space, newline) into lines at newlines and words
    at spaces; intern every word. Returns (word id per word, line_counts per text, word_counts
    per line, first (start, end) of each distinct word)."""
    n = offs.size - 1
    total = offs[n]
    n_lines = n
    for b in range(total):
        if data[b] == 10:
            n_lines += 1
    line_counts = np.zeros(n, dtype=np.int64)
    word_counts = np.zeros(n_lines, dtype=np.int64)
    words = np.empty(max(total, 1), dtype=np.int32)  # a word has at least one byte
    rep_s = np.empty(1024, dtype=np.int64)
    rep_e = np.empty(1024, dtype=np.int64)
    rep_h = np.empty(1024, dtype=np.uint64)
    cap = 1 << 12
    slots = np.full(cap, -1, dtype=np.int32)
    n_words = 0
    n_uniq = 0
    line = 0
    for t in range(n):
        line_counts[t] = 1
        b = offs[t]
        end = offs[t + 1]
        while b < end:
            c = data[b]
            if c == 10:
                line += 1
                line_counts[t] += 1
                b += 1
                continue
            if c == 32:
                b += 1
                continue
            s = b
            while b < end and data[b] != 32 and data[b] != 10:
                b += 1
            h = _hash(data, s, b)
            mask = cap - 1
            p = np.int64(h & _U(mask))
            while True:
                q = slots[p]
                if q < 0:
                    break
                if rep_h[q] == h and _same(data, rep_s[q], rep_e[q], s, b):
                    break
                p = (p + 1) & mask
            if q < 0:
                q = n_uniq
                if q == rep_s.size:
                    rep_s = np.concatenate((rep_s, np.empty(q, dtype=np.int64)))
                    rep_e = np.concatenate((rep_e, np.empty(q, dtype=np.int64)))
                    rep_h = np.concatenate((rep_h, np.empty(q, dtype=np.uint64)))
                rep_s[q] = s
                rep_e[q] = b
                rep_h[q] = h
                slots[p] = q
                n_uniq += 1
                if 2 * n_uniq > cap:  # grow and re-insert
                    cap *= 2
                    slots = np.full(cap, -1, dtype=np.int32)
                    mask = cap - 1
                    for r in range(n_uniq):
                        p = np.int64(rep_h[r] & _U(mask))
                        while slots[p] >= 0:
                            p = (p + 1) & mask
                        slots[p] = r
            words[n_words] = q
            n_words += 1
            word_counts[line] += 1
        line += 1
    return words[:n_words], line_counts, word_counts, rep_s[:n_uniq], rep_e[:n_uniq]
