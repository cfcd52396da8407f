"""Numba scan of rouge-score's tokeniser over an Arrow UTF-8 buffer (SPEC_text §1).

rouge-score 0.1.2 does ``text.lower()``, ``re.sub("[^a-z0-9]+", " ")``, splits on whitespace and
keeps the tokens matching ``^[a-z0-9]+$``. On UTF-8 bytes that is: ``A-Z`` lower-cased, ``a-z`` and
``0-9`` kept, every other byte a separator -- except the only two non-ASCII characters whose
``str.lower()`` contains an ASCII letter or digit (checked over every code point):

* U+0130 (İ, bytes C4 B0) lower-cases to ``i`` + U+0307: a letter ``i`` that ends the token;
* U+212A (Kelvin sign, bytes E2 84 AA) lower-cases to ``k``: a letter inside the token.

In valid UTF-8 these byte sequences are exactly those characters (C4 and E2 are lead bytes).
Lines (``\\n``, rougeLsum's sentence split) are tracked too. Two passes, parallel over texts: one
counts tokens, token bytes and lines per text, one writes the tokens contiguously (one Arrow
``large_string`` value each, for Arrow's dictionary encoding) and the token offset of each line.
"""
from __future__ import annotations

import numba as nb
import numpy as np

_pjit = nb.njit(cache=True, nogil=True, parallel=True)
_jit = nb.njit(cache=True, nogil=True)


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


@_pjit
def count_tokens(data, offsets, lut, n_tok, n_bytes, n_lines):
    """Per text: tokens, token bytes and lines (1 + newlines). ASCII bytes take a branch-free
    step (a token byte starts a token when the previous byte was not one)."""
    for t in nb.prange(offsets.size - 1):
        i = offsets[t]
        end = offsets[t + 1]
        toks = 0
        nbytes = 0
        lines = 1
        prev = 0
        while i < end:
            b = data[i]
            if b < 128:
                i += 1
                cur = np.int64(lut[b] != 0)
                toks += cur & (1 - prev)
                nbytes += cur
                lines += b == 10
                prev = cur
                continue
            c, k, stop = _special(data, i, end)
            i += k
            cur = np.int64(c != 0)
            toks += cur & (1 - prev)
            nbytes += cur
            prev = 0 if stop else cur
        n_tok[t] = toks
        n_bytes[t] = nbytes
        n_lines[t] = lines


@_pjit
def write_tokens(data, offsets, lut, tok_start, byte_start, line_start, out, out_off, line_tok):
    """Write text t's tokens to out[byte_start[t]:], their value offsets to
    out_off[tk] for tk from tok_start[t], and the global token index at which each of its lines
    ends to line_tok[line_start[t]+1:] (line_tok[0] = 0 by the caller). Branch-free on ASCII:
    every byte is written, to its place if it is a token byte and to the scratch slot
    ``out[-1]`` otherwise (likewise ``out_off[-1]`` for offsets), so texts written by different
    threads never overlap; the caller drops both scratch slots."""
    dump_b = out.size - 1
    dump_o = out_off.size - 1
    for t in nb.prange(offsets.size - 1):
        i = offsets[t]
        end = offsets[t + 1]
        tk = tok_start[t]
        bp = byte_start[t]
        ln = line_start[t]
        prev = 0
        while i < end:
            b = data[i]
            if b < 128:
                i += 1
                c = lut[b]
                cur = np.int64(c != 0)
                if b == 10:
                    ln += 1
                    line_tok[ln] = tk
                start = cur & (1 - prev)
                out_off[tk if start else dump_o] = bp
                tk += start
                out[bp if cur else dump_b] = c
                bp += cur
                prev = cur
                continue
            c, k, stop = _special(data, i, end)
            i += k
            cur = np.int64(c != 0)
            start = cur & (1 - prev)
            out_off[tk if start else dump_o] = bp
            tk += start
            out[bp if cur else dump_b] = c
            bp += cur
            prev = 0 if stop else cur
        line_tok[ln + 1] = tk
