"""Numba kernels of the numpy BERT forward pass (in place, float32, one pass over memory each):
GELU with its bias, x ← GELU(x + b) with GELU(z) = z·(1 + erf(z/√2))/2 (the exact-erf form of
``transformers``' "gelu"); a masked row softmax; and LayerNorm of a residual sum."""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["bias_gelu_", "softmax_rows_", "add_layer_norm"]


@numba.njit(cache=True, nogil=True)
def bias_gelu_(x, b):  # pragma: no cover - compiled
    """x[r, :] ← GELU(x[r, :] + b), in place (x: (R, C) C-contiguous float32)."""
    R, C = x.shape
    half = np.float32(0.5)
    one = np.float32(1.0)
    inv_sqrt2 = np.float32(0.7071067811865476)
    for r in range(R):
        for c in range(C):
            z = x[r, c] + b[c]
            x[r, c] = half * z * (one + math.erf(z * inv_sqrt2))


@numba.njit(cache=True, nogil=True)
def softmax_rows_(s, scale, lengths):  # pragma: no cover - compiled
    """s[b, h, t, :] ← softmax(scale·s[b, h, t, :n_b]) over the first n_b = lengths[b] keys,
    0 for the padding keys; in place (s: (B, H, T, T) float32)."""
    B, H, T, _ = s.shape
    for b in range(B):
        n = lengths[b]
        for h in range(H):
            for t in range(T):
                row = s[b, h, t]
                m = row[0] * scale
                for u in range(1, n):
                    v = row[u] * scale
                    if v > m:
                        m = v
                tot = np.float32(0.0)
                for u in range(n):
                    e = np.float32(math.exp(row[u] * scale - m))
                    row[u] = e
                    tot += e
                inv = np.float32(1.0) / tot
                for u in range(n):
                    row[u] *= inv
                for u in range(n, T):
                    row[u] = np.float32(0.0)


@numba.njit(cache=True, nogil=True)
def add_layer_norm(x, y, bias, g, beta, eps):  # pragma: no cover - compiled
    """LN(x + y + bias) per row (mean/variance in float64), written into x and returned."""
    R, C = x.shape
    for r in range(R):
        mu = 0.0
        for c in range(C):
            v = x[r, c] + y[r, c] + bias[c]
            x[r, c] = v
            mu += v
        mu /= C
        var = 0.0
        for c in range(C):
            d = x[r, c] - mu
            var += d * d
        inv = 1.0 / math.sqrt(var / C + eps)
        for c in range(C):
            x[r, c] = np.float32((x[r, c] - mu) * inv) * g[c] + beta[c]
    return x
