"""trec_eval kernels checked directly against plain Python where the other oracles do not reach
(pytrec_eval refuses relevance levels below 1; trec_eval's ``-l`` takes any integer)."""
from __future__ import annotations

import numpy as np
import pytest

from uefast.trec_eval import kernels_basic as kb


@pytest.mark.parametrize("level", [-3, -2, -1, 0, 1, 2, 5])
def test_counts_any_level(level):
    rng = np.random.default_rng(level + 10)
    rel = rng.choice([-2, -1, 0, 1, 2, 3], size=600).astype(np.int64)  # ranked_rel's values
    off = np.array([0, 0, 7, 100, 350, 600], np.int64)
    got = kb.counts(rel, off, level)
    for q in range(off.size - 1):
        seg = rel[off[q]:off[q + 1]].tolist()
        # form_res_rels.c: -1 not in the pool, -2 pooled but unjudged, else relevant if >= level
        want = [len(seg), sum(1 for r in seg if r >= 0 and r >= level), seg.count(-1), seg.count(-2)]
        assert got[q].tolist() == want
