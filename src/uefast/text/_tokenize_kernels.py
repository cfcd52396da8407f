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
def _letter(data, i, end, lut):
    """(byte of the token character at i or 0 for a separator, bytes consumed, ends token)."""
    b = data[i]
    c = lut[b]
    if c != 0:
        return c, 1, False
    if b == 0xC4 and i + 1 < end and data[i + 1] == 0xB0:
        return np.uint8(105), 2, True  # U+0130 -> "i" + combining dot (a separator)
    if b == 0xE2 and i + 2 < end and data[i + 1] == 0x84 and data[i + 2] == 0xAA:
        return np.uint8(107), 3, False  # U+212A KELVIN SIGN -> "k"
    return np.uint8(0), 1, False


@_pjit
def count_tokens(data, offsets, lut, n_tok, n_bytes, n_lines):
    """Per text: tokens, token bytes and lines (1 + newlines)."""
    for t in nb.prange(offsets.size - 1):
        i = offsets[t]
        end = offsets[t + 1]
        toks = 0
        nbytes = 0
        lines = 1
        inside = False
        while i < end:
            if data[i] == 10:
                lines += 1
            c, k, stop = _letter(data, i, end, lut)
            i += k
            if c != 0:
                nbytes += 1
                if not inside:
                    toks += 1
                    inside = True
                if stop:
                    inside = False
            else:
                inside = False
        n_tok[t] = toks
        n_bytes[t] = nbytes
        n_lines[t] = lines


@_pjit
def write_tokens(data, offsets, lut, tok_start, byte_start, line_start, out, out_off, line_tok):
    """Write text t's tokens to out[byte_start[t]:], their value offsets to
    out_off[tok_start[t]:] (out_off[-1] is set by the caller) and the global token index at which
    each of its lines ends to line_tok[line_start[t]+1:] (line_tok[0] = 0 by the caller)."""
    for t in nb.prange(offsets.size - 1):
        i = offsets[t]
        end = offsets[t + 1]
        tk = tok_start[t]
        bp = byte_start[t]
        ln = line_start[t]
        inside = False
        while i < end:
            if data[i] == 10:
                ln += 1
                line_tok[ln] = tk
            c, k, stop = _letter(data, i, end, lut)
            i += k
            if c != 0:
                if not inside:
                    out_off[tk] = bp
                    tk += 1
                    inside = True
                out[bp] = c
                bp += 1
                if stop:
                    inside = False
            else:
                inside = False
        line_tok[ln + 1] = tk
