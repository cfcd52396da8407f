"""``uefast.text.evaluate``: ROUGE (and BERTScore) with IUB, REB and UE per (system, document),
in the long schema of :func:`uefast.evaluate` (``data_schemas/text_output.md``).

Per row (one candidate of one system for one document) and measure:

* ``value``: the measure as rouge-score computes it against the row's reference(s); several
  references are aggregated by ``multi_ref``: ``"mean"`` (BARTScore/SummEval practice) or
  ``"max"`` (rouge-score ``score_multi``: the score of the reference with the largest F).
* ``reb``: its expected value for a random candidate of L tokens from the source's unigram model
  (SPEC_text §2): exact for ROUGE-N (closed form / automaton DP) under ``"mean"``; Monte Carlo
  for ROUGE-L/Lsum and for every ``"max"`` (``reb_se`` and the 95 % interval
  ``reb_ci_low``/``reb_ci_high`` = mean ± 1.96 SE are then set; null where exact). The mean of
  per-reference Monte Carlo values reports the mean of their SEs (an upper bound: the draws are
  shared across references).
* ``iub``: the ideal upper bound of kind ``iub`` (§3, :mod:`uefast.text.iub`).
* ``ue_v1``, ``ue_v2``: §4 (:mod:`uefast.text.ue`).

L (§2.5) is the candidate's own token count (``length="candidate"``) or each reference's
(``length="reference"``, the document-constant L0 = |ref| that leaves summary-level rank
correlations unchanged, §4). REB and IUB are taken at L; ``value`` always at the candidate.
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.text.expected import (DEFAULT_SAMPLES, SourceIndex, expected_overlaps,
                                  task_groups)
from uefast.text.inputs import EMPTY_POLICIES, TextRows, check_text_table, read_text_table
from uefast.text.iub import (IUB_KINDS, SCORE_CODES, greedy_mean_rouge1, iub_overlap, src_lower,
                             src_windows)
from uefast.text.measures import TextMeasure, parse_text_measures
from uefast.text.rouge import Variant, count_units, ngram_keys, overlap_counts, prf
from uefast.text.tokenize import Tokenizer, _utf8_buffers
from uefast.text.ue import text_ue

__all__ = ["evaluate", "OUTPUT_COLUMNS", "MULTI_REF", "LENGTHS"]

MULTI_REF = ("mean", "max")
LENGTHS = ("candidate", "reference")
OUTPUT_COLUMNS = ("system", "qid", "measure", "value", "iub", "reb", "ue_v1", "ue_v2", "reb_se",
                  "reb_ci_low", "reb_ci_high", "length", "n_refs")
_SCORE_INDEX = {"precision": 0, "recall": 1, "f1": 2}


def _check_choice(name, value, choices):
    if value not in choices:
        raise InputError(f"`{name}` must be one of {list(choices)}; got {value!r}")


class _Rouge:
    """Tokenised texts, (row, reference) pairs and source models shared by all ROUGE measures."""

    def __init__(self, rows: TextRows, stem: bool, length: str):
        n = len(rows)
        n_refs = np.diff(rows.ref_offsets)
        # distinct texts of each column (a source or reference is shared by many rows)
        parts, codes, base = [], [], 0
        for values, c in ((rows.cand_dict, rows.cand_codes), (rows.ref_dict, rows.ref_codes),
                          (rows.src_dict, rows.src_codes)):
            codes.append(c + base)
            parts.append(values)
            base += len(values)
        texts = pa.concat_arrays(parts)
        self.tok = Tokenizer(stem)(texts)
        self.n_refs = n_refs
        self._one_ref = bool((n_refs == 1).all())
        self.row_off = np.ascontiguousarray(rows.ref_offsets, dtype=np.int64)
        self.pair_row = np.repeat(np.arange(n), n_refs)
        cand_t = codes[0]
        self.pair_cand = cand_t[self.pair_row]
        self.pair_ref = codes[1]
        src_u, self.row_src = np.unique(codes[2], return_inverse=True)
        self.row_src = self.row_src.reshape(-1).astype(np.int64)
        # the sources' UTF-8 bytes, read in place, key their Monte Carlo draws
        s_off, s_data = _utf8_buffers(rows.src_dict)
        s_mem = memoryview(s_data)
        first_src = base - len(rows.src_dict)
        raw = [s_mem[s_off[i]:s_off[i + 1]] for i in (src_u - first_src).tolist()]
        self.sources = SourceIndex.build(self.tok, src_u, raw)
        lens = np.diff(self.tok.text_offsets)
        scored = np.zeros(len(self.tok), dtype=bool)  # texts that need n-gram keys, sorted
        scored[cand_t] = True
        scored[self.pair_ref] = True
        self._scored = np.flatnonzero(scored)
        self.len_c = lens[self.pair_cand]
        self.len_r = lens[self.pair_ref]
        self.row_len_c = lens[cand_t]
        self.len_at = self.len_c if length == "candidate" else self.len_r
        self._keys: dict = {}
        self._cache: dict = {}
        self._groups = None
        self.src_open: dict = {}  # ROUGE-N variant -> (pairs with an open src bracket, pairs)

    def keys(self, n):
        """Sorted n-gram keys of the candidates and references (computed once per n)."""
        if n not in self._keys:
            self._keys[n] = ngram_keys(self.tok, n, self._scored)
        return self._keys[n]

    def per_pair(self, v: Variant, iub: str, samples: int, seed: int):
        """Per pair: (P, R, F) values, E[O] and its SE (None if exact), IUB (P, R, F)."""
        key = (v, iub)
        if key in self._cache:
            return self._cache[key]
        o = overlap_counts(self.tok, self.pair_cand, self.pair_ref, v)
        uc, ur = count_units(v, self.len_c), count_units(v, self.len_r)
        values = prf(o, uc, ur, v)
        p_src = self.row_src[self.pair_row]
        if self._groups is None:  # the (source, reference, L) tasks: the same for every variant
            self._groups = task_groups(p_src, self.pair_ref, self.len_at)
        e_o, se = expected_overlaps(self.tok, self.sources, p_src, self.pair_ref, self.len_at, v,
                                    samples=samples, seed=seed, groups=self._groups)
        uc_at = count_units(v, self.len_at)
        ok = (uc_at > 0) & (ur > 0)
        factors = (np.where(ok, 1.0 / np.maximum(uc_at, 1), 0.0),
                   np.where(ok, 1.0 / np.maximum(ur, 1), 0.0),
                   np.where(ok, 2.0 / np.maximum(uc_at + ur, 1), 0.0))
        if iub == "one":
            iubs = (np.ones(len(o)),) * 3
        else:
            e_src = (src_windows(self.tok, self.sources, p_src, self.pair_ref,
                                 v.n if v.kind == "N" else 1) if iub == "src" else None)
            best = iub_overlap(v, iub, self.len_at, self.len_r, e_src)
            if iub == "src" and v.kind == "N" and v.n >= 2:
                low = src_lower(self.tok, self.sources, p_src, self.pair_ref, v.n, self.len_at)
                self.src_open[str(v)] = (int((low < best).sum()), len(best))
            iubs = prf(best, uc_at, ur, v)
        out = (values, e_o, se, factors, iubs)
        self._cache[key] = out
        return out

    def measure(self, m: TextMeasure, iub: str, multi_ref: str, samples: int, seed: int,
                length: str):
        """Per row: value, iub, reb, reb_se (NaN where exact), L."""
        v = m.variant
        k = _SCORE_INDEX[m.score]
        values, e_o, se, factors, iubs = self.per_pair(v, iub, samples, seed)
        n = len(self.n_refs)
        row_len = self.row_len_c if length == "candidate" else \
            np.maximum.reduceat(self.len_r, self.row_off[:-1]) if n else self.row_len_c
        if multi_ref == "mean" or not (self.n_refs > 1).any():
            val = self._mean(values[k])
            reb = self._mean(e_o * factors[k])
            reb_se = self._mean(se * factors[k]) if se is not None else np.full(n, np.nan)
            ub = self._mean(iubs[k])
            if (v.kind == "N" and v.n == 1 and iub != "one" and length == "candidate"
                    and (self.n_refs > 1).any()):
                multi = self.n_refs > 1
                greedy = greedy_mean_rouge1(self.tok, self.sources, self.row_off, self.pair_ref,
                                            self.row_src, self.row_len_c, m.score, iub)
                ub = np.where(multi, greedy, ub)
            return val, ub, reb, reb_se, row_len
        # max over references: the score of the reference with the largest F (first on ties)
        f = values[2]
        best = np.empty(n, dtype=np.int64)
        for row in range(n):  # one argmax per row over its few references
            a, b = self.row_off[row], self.row_off[row + 1]
            best[row] = a + int(np.argmax(f[a:b]))
        val = values[k][best]
        ub = np.maximum.reduceat(iubs[k], self.row_off[:-1]) if n else np.zeros(0)
        reb, reb_se = self._mc_max(v, m.score, row_len, samples, seed)
        return val, ub, reb, reb_se, row_len

    def _mean(self, x):
        if len(self.n_refs) == 0:
            return np.zeros(0)
        if self._one_ref:  # x[i] / 1: the values themselves
            return np.array(x, dtype=np.float64)
        return np.add.reduceat(x, self.row_off[:-1]) / self.n_refs

    def _mc_max(self, v: Variant, score: str, row_len, samples: int, seed: int):
        from uefast.text._mc_kernels import mc_max

        n = len(self.n_refs)
        base = max(len(self.tok.vocab), 1)
        if v.kind == "N":
            if v.n * np.log2(base + 1) >= 62:
                raise InputError(f"multi_ref='max' REB for {v} needs vocabulary**n < 2**62 "
                                 f"(vocabulary {base}); use multi_ref='mean'")
            keys, key_off = self.keys(v.n)
        else:
            keys, key_off = np.zeros(0, np.int64), np.zeros(len(self.tok) + 1, np.int64)
        mean = np.empty(n)
        sd = np.empty(n)
        mc_max(self.tok.ids, self.tok.text_offsets, self.tok.tok_offsets, self.tok.line_offsets,
               keys, key_off, self.sources.text_order, self.sources.offsets, self.sources.keys,
               self.row_src, self.row_off, self.pair_ref, np.ascontiguousarray(row_len, np.int64),
               np.int64({"N": 0, "L": 1, "Lsum": 2}[v.kind]), np.int64(max(v.n, 1)),
               np.int64(base), np.int64(SCORE_CODES[score]), np.int64(samples),
               np.uint64(seed % 2**64), mean, sd)
        return mean, sd / np.sqrt(samples)


def _bertscore(rows: TextRows, m: TextMeasure, encoder, seed: int, n_samples: int,
               multi_ref: str, length: str):
    """Dispatch to ``uefast.text.bertscore.bertscore_rows`` (imported only when asked for)."""
    import importlib

    try:
        bs = importlib.import_module("uefast.text.bertscore")
    except ModuleNotFoundError as exc:
        if exc.name not in ("uefast.text.bertscore",):
            raise
        raise InputError(f"{m} needs the module uefast.text.bertscore, which this installation "
                         "lacks") from None
    res = bs.bertscore_rows(rows.candidates.to_pylist(), rows.references,
                            rows.sources.to_pylist(), score=m.score,
                            reb=m.reb, iub=m.iub, encoder=encoder, seed=seed,
                            n_samples=n_samples, multi_ref=multi_ref, length=length)
    n = len(rows)
    out = []
    for key in ("value", "iub", "reb"):
        a = np.asarray(res[key], dtype=np.float64)
        if a.shape != (n,):
            raise InputError(f"bertscore_rows returned {key!r} of shape {a.shape}; expected ({n},)")
        out.append(a)
    # reb="sampled": the Monte Carlo standard error, into the reb_se / CI columns as ROUGE-L's
    out.append(np.asarray(res["reb_se"], dtype=np.float64) if "reb_se" in res else np.full(n, np.nan))
    return out


def evaluate(data, measures=("ROUGE-1", "ROUGE-2", "ROUGE-L"), *, stem: bool = False,
             iub: str = "len", multi_ref: str = "mean", length: str = "candidate",
             samples: int = DEFAULT_SAMPLES, seed: int = 0, empty: str = "error",
             encoder=None, bertscore_samples: int = 32) -> pa.Table:
    """Evaluate text-generation outputs with ROUGE/BERTScore, IUB, REB and UE (SPEC_text).

    Parameters
    ----------
    data : pyarrow.Table, DataFrame or path (.parquet, .arrow/.feather, .jsonl)
        Columns ``doc_id``, ``system``, ``candidate``, ``reference`` (text or list of texts),
        ``source``; see ``data_schemas/text_input.md``.
    measures : str or sequence of str
        ``ROUGE-<n>``, ``ROUGE-L``, ``ROUGE-Lsum`` (F1; ``(score=precision|recall)``) and
        ``BERTScore`` (``score=``, ``reb=exact|sampled|algorithm1``, ``iub=one``).
    stem : bool
        Porter stemming as rouge-score's ``use_stemmer`` (needs ``uefast[text]``).
    iub : {"len", "src", "one"}
        ROUGE's IUB kind (SPEC_text §3). BERTScore takes its own ``iub`` parameter.
    multi_ref : {"mean", "max"}
        Aggregate over several references; ``"max"`` has a Monte Carlo REB.
    length : {"candidate", "reference"}
        L at which REB and IUB are taken (§2.5).
    samples, seed : int
        Monte Carlo draws and seed (ROUGE-L/Lsum, ``multi_ref="max"``).
    empty : {"error", "score"}
        An empty or blank candidate/reference/source is an error naming the row, or is scored
        as rouge-score does (value 0; then IUB under ``len`` is 0 and V1 = V2 = NaN).
    encoder, bertscore_samples
        Passed to ``uefast.text.bertscore.bertscore_rows`` (``encoder``, ``n_samples``).

    Returns
    -------
    pyarrow.Table
        One row per (input row, measure), input rows in order, measures in the order given;
        columns ``system, qid, measure, value, iub, reb, ue_v1, ue_v2, reb_se, reb_ci_low,
        reb_ci_high, length, n_refs`` (``data_schemas/text_output.md``).
    """
    _check_choice("iub", iub, IUB_KINDS)
    _check_choice("multi_ref", multi_ref, MULTI_REF)
    _check_choice("length", length, LENGTHS)
    _check_choice("empty", empty, EMPTY_POLICIES)
    if not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InputError(f"`samples` must be a positive integer; got {samples!r}")
    ms = parse_text_measures(measures)
    rows = check_text_table(read_text_table(data), empty)
    n = len(rows)
    cols = {k: [] for k in ("value", "iub", "reb", "se", "len")}
    rouge = _Rouge(rows, stem, length) if any(m.family == "ROUGE" for m in ms) else None
    for m in ms:
        if m.family == "ROUGE":
            val, ub, reb, se, row_len = rouge.measure(m, iub, multi_ref, samples, seed, length)
            lens = row_len.astype(np.float64)
        else:
            val, ub, reb, se = _bertscore(rows, m, encoder, seed, bertscore_samples, multi_ref,
                                          length)
            lens = np.full(n, np.nan)
        for k, x in zip(("value", "iub", "reb", "se", "len"), (val, ub, reb, se, lens)):
            cols[k].append(np.asarray(x, dtype=np.float64))
    stack = {k: np.stack(v, axis=1).reshape(-1) if n else np.zeros(0) for k, v in cols.items()}
    v1, v2 = text_ue(stack["value"], stack["iub"], stack["reb"])
    k = len(ms)
    take = pa.array(np.repeat(np.arange(n), k))
    se = stack["se"]
    exact = np.isnan(se)
    n_refs = np.repeat(np.diff(rows.ref_offsets), k).astype(np.int64)
    length_col = stack["len"]
    table = pa.table({
        "system": rows.system.take(take),
        "qid": rows.doc_id.take(take),
        "measure": pa.array([str(m) for m in ms], type=pa.string()).take(
            pa.array(np.tile(np.arange(k), n))),
        "value": stack["value"],
        "iub": stack["iub"],
        "reb": stack["reb"],
        "ue_v1": v1,
        "ue_v2": v2,
        "reb_se": pa.array(se, mask=exact),
        "reb_ci_low": pa.array(stack["reb"] - 1.96 * np.where(exact, 0, se), mask=exact),
        "reb_ci_high": pa.array(stack["reb"] + 1.96 * np.where(exact, 0, se), mask=exact),
        "length": pa.array(np.nan_to_num(length_col).astype(np.int64), mask=np.isnan(length_col)),
        "n_refs": n_refs,
    })
    from uefast import __version__
    settings = {"measures": [str(m) for m in ms], "stem": bool(stem), "iub": iub,
                "multi_ref": multi_ref, "length": length, "samples": int(samples),
                "seed": int(seed), "empty": empty}
    notes = []
    if multi_ref == "mean" and iub != "one" and any(
            m.family == "ROUGE" and not (m.variant.kind == "N" and m.variant.n == 1) for m in ms):
        notes.append("multi-reference mean: IUB of ROUGE-N (n>=2) and ROUGE-L/Lsum is the mean "
                     "of per-reference IUBs (an upper bound, not attained in general)")
    if multi_ref == "max" and (rows.multi_reference and len(rows) and
                               (np.diff(rows.ref_offsets) > 1).any()):
        notes.append(f"multi_ref=max: every REB is a Monte Carlo estimate ({samples} draws; "
                     "reb_se, reb_ci_low/high)")
    if iub == "src" and rouge is not None:
        for name, (n_open, n_pairs) in rouge.src_open.items():
            notes.append(f"iub=src: {name} uses the upper end min(n_c, E_src) of the bracket "
                         f"[whole in-source reference segments, min(n_c, E_src)]; the bracket "
                         f"is closed (the IUB exact) on {n_pairs - n_open} of {n_pairs} "
                         f"(candidate, reference) pairs")
    meta = {b"uefast.version": __version__.encode(),
            b"uefast.settings": json.dumps(settings).encode(),
            b"uefast.info": json.dumps({"rows_in": n, "output_rows": n * k}).encode(),
            b"uefast.notes": json.dumps(notes).encode()}
    return table.replace_schema_metadata(meta)
