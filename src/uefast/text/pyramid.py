"""The Pyramid score (Nenkova & Passonneau 2004; the modified score of Passonneau, Nenkova,
McKeown & Sigelman 2005) with IUB, REB and UE, in the long schema of :func:`uefast.evaluate`
(``data_schemas/pyramid.md``).

A pyramid for one document (topic) is a set of N summary content units (SCUs) i with weights
w_i > 0, w_i = the number of the n_refs reference summaries that express SCU i. A summary
expresses X_s content units: SCUs of the pyramid, and possibly content units that match no SCU
(weight 0; a null ``scu``). Its weight is D = Σ_{i in summary} w_i. With
Max(X) = the sum of the X largest weights (all of them if X ≥ N), i.e. the weight of an optimal
summary of X SCUs (Nenkova & Passonneau 2004, §3: Σ_{i>j} i·|T_i| + j·(X − Σ_{i>j} |T_i|)):

* ``original``: value = D / Max(X_s), X = the summary's own unit count (precision-like);
* ``modified``: value = D / Max(X̄), X̄ = Σ w_i / n_refs, the mean number of SCUs of a reference
  summary (recall-like; Passonneau et al. 2005, §3). X̄ is usually fractional: ``x="ceil"``
  (default; as SacreROUGE's ``modified_pyramid_score``) uses Max(⌈X̄⌉), ``x="exact"`` the linear
  interpolation Max(⌊X̄⌋) + (X̄ − ⌊X̄⌋)·w_(⌊X̄⌋+1) (the fractional-knapsack optimum).

The denominator Den depends only on the pyramid and X_s, so both variants share IUB, REB and UE
up to that one factor:

* ``iub`` = Max(X_s) / Den: the value of an optimal summary with the same number of units
  (1 for ``original``); D ≤ Max(X_s) because any X_s units weigh at most the X_s largest weights.
* ``reb`` = E[D] / Den with E[D] = min(X_s, N) · w̄, w̄ = Σ w_i / N: the exact expected value of a
  random summary of X_s units drawn uniformly without replacement from the pyramid's SCUs
  (each SCU is in it with probability X_s/N, so E[D] = Σ_i w_i · X_s/N by linearity; for
  X_s > N the random summary holds every SCU plus X_s − N unmatched units, E[D] = Σ w_i).
* ``ue_v1``, ``ue_v2``: SPEC_text §4 (:func:`uefast.text.ue.text_ue`). V1 and V2 are unchanged
  when A, IUB and REB share a factor, so they are the same for ``original`` and ``modified``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from uefast.errors import InputError, MeasureParseError, RowError
from uefast.text.ue import text_ue

__all__ = ["pyramid", "PyramidMeasure", "parse_pyramid_measure", "top_weight", "expected_weight",
           "read_pyramid_tables", "VARIANTS", "X_RULES", "OUTPUT_COLUMNS"]

VARIANTS = ("original", "modified")
X_RULES = ("ceil", "exact")
OUTPUT_COLUMNS = ("system", "qid", "measure", "value", "iub", "reb", "ue_v1", "ue_v2", "n_units",
                  "x", "weight", "ideal_weight", "expected_weight")
_RE = re.compile(r"^\s*([A-Za-z]+)\s*(?:\((.*)\))?\s*$")
_FORMAT = "Pyramid, Pyramid(variant=modified) or Pyramid(variant=modified,x=exact)"


# ---------------------------------------------------------------- measure strings
@dataclass(frozen=True)
class PyramidMeasure:
    """``Pyramid`` (original), ``Pyramid(variant=modified)``, ``...,x=exact``. ``str`` is the
    canonical form (defaults left out) and parses back to an equal measure."""

    variant: str = "original"
    x: str = "ceil"

    def __str__(self) -> str:
        params = []
        if self.variant != "original":
            params.append(f"variant={self.variant}")
        if self.x != "ceil":
            params.append(f"x={self.x}")
        return "Pyramid" + (f"({','.join(params)})" if params else "")


def parse_pyramid_measure(s) -> PyramidMeasure:
    """Parse one Pyramid measure string: ``variant`` in :data:`VARIANTS`, ``x`` in
    :data:`X_RULES` (``modified`` only)."""
    if isinstance(s, PyramidMeasure):
        return s
    if not isinstance(s, str):
        raise MeasureParseError(f"measure must be a string; got {s!r}")
    m = _RE.match(s)
    if not m or m.group(1).lower() != "pyramid":
        raise MeasureParseError(f"cannot parse Pyramid measure {s!r}: expected {_FORMAT}")
    params: dict[str, str] = {}
    for part in (m.group(2) or "").split(","):
        if not part.strip():
            continue
        k, eq, v = (t.strip() for t in part.partition("="))
        if not eq or not k or not v:
            raise MeasureParseError(f"cannot parse parameter {part.strip()!r} of {s!r}: "
                                    f"expected {_FORMAT}")
        if k in params:
            raise MeasureParseError(f"parameter {k!r} given twice in {s!r}")
        params[k] = v.strip("'\"")
    unknown = sorted(set(params) - {"variant", "x"})
    if unknown:
        raise MeasureParseError(f"unknown parameter(s) {unknown} for Pyramid in {s!r}; "
                                "it takes variant=, x=")
    variant, x = params.get("variant", "original"), params.get("x", "ceil")
    if variant not in VARIANTS:
        raise MeasureParseError(f"Pyramid variant must be one of {VARIANTS} in {s!r}; "
                                f"got {variant!r}")
    if x not in X_RULES:
        raise MeasureParseError(f"Pyramid x must be one of {X_RULES} in {s!r}; got {x!r}")
    if variant == "original" and x != "ceil":
        raise MeasureParseError(f"x= applies only to variant=modified in {s!r}")
    return PyramidMeasure(variant, x)


# ---------------------------------------------------------------- the formulas
def top_weight(weights, x: float) -> float:
    """Max(x): the weight of an optimal summary of x SCUs, the sum of the x largest weights
    (all of them when x ≥ N; Nenkova & Passonneau 2004, §3). A fractional x interpolates
    linearly: Max(⌊x⌋) + (x − ⌊x⌋)·w_(⌊x⌋+1)."""
    w = np.sort(np.asarray(weights, dtype=np.float64))[::-1]
    if x < 0:
        raise InputError(f"number of SCUs must be >= 0; got {x}")
    k = int(math.floor(x))
    total = float(w[:k].sum())
    if k < len(w) and x > k:
        total += (x - k) * float(w[k])
    return total


def expected_weight(weights, x: int) -> float:
    """E[D] for a summary of x units drawn uniformly without replacement from the N SCUs:
    min(x, N)·Σw/N (each SCU is drawn with probability min(x, N)/N; linearity)."""
    w = np.asarray(weights, dtype=np.float64)
    if len(w) == 0:
        return 0.0
    return min(int(x), len(w)) * float(w.sum()) / len(w)


# ---------------------------------------------------------------- input
def _read(data, what: str) -> tuple[pa.Table, bool]:
    """(table, is_csv) for a table-like or a path (.csv/.tsv, .parquet/.pq, .arrow/.feather)."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.exists():
            raise InputError(f"{what} file not found: {str(path)!r}")
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            import pyarrow.csv as pcsv

            types = {c: pa.string() for c in ("doc_id", "system", "scu")}
            try:
                return pcsv.read_csv(
                    path, parse_options=pcsv.ParseOptions(delimiter="\t" if suffix == ".tsv"
                                                          else ","),
                    convert_options=pcsv.ConvertOptions(column_types=types, null_values=[""],
                                                        strings_can_be_null=True)), True
            except pa.ArrowInvalid as exc:
                raise InputError(f"{what} {str(path)!r}: cannot read as CSV ({exc})") from None
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq
            return pq.read_table(path), False
        if suffix in (".arrow", ".feather", ".ipc"):
            import pyarrow.feather as feather
            return feather.read_table(path), False
        raise InputError(f"unknown {what} format {suffix!r} of {str(path)!r}: expected .csv, "
                         ".tsv, .parquet or .arrow/.feather")
    if isinstance(data, pa.Table):
        return data, False
    to_arrow = getattr(data, "to_arrow", None)
    if callable(to_arrow):
        return to_arrow(), False
    if hasattr(data, "__arrow_c_stream__") or type(data).__module__.startswith("pandas"):
        return pa.table(data), False
    raise InputError(f"{what}: expected a pyarrow.Table, a DataFrame or a file path; got "
                     f"{type(data).__name__}")


class _Rows:
    """Row naming for errors: 0-based row, plus the file line for CSV (header = line 1)."""

    def __init__(self, what: str, csv: bool):
        self.what, self.csv = what, csv

    def error(self, msg: str, *rows: int, tail: str = "") -> RowError:
        parts: list = [msg + (" at row " if len(rows) == 1 else " at rows ")]
        for j, r in enumerate(rows):
            if j:
                parts.append(" and ")
            parts.append(int(r))
            if self.csv:
                parts.append(f" (line {int(r) + 2})")
        return RowError(self.what, *parts, tail)


def _column(table: pa.Table, name: str, what: str) -> list:
    if name not in table.column_names:
        raise InputError(f"{what}: missing column `{name}`; columns are {table.column_names}")
    return table[name].to_pylist()


def _ids(table, name, rows: _Rows, allow_null=False) -> list:
    t = table.schema.field(name).type if name in table.column_names else None
    vals = _column(table, name, rows.what)
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
            or pa.types.is_null(t)):
        raise InputError(f"{rows.what}: column `{name}` must be text or integers; it is {t}")
    for i, v in enumerate(vals):
        if v is None and not allow_null:
            raise rows.error(f"null `{name}`", i)
        if v == "":
            raise rows.error(f"empty `{name}`", i, tail=" (in a summaries table a null `scu` "
                             "marks a content unit that matches no SCU)" if allow_null else "")
    return vals


@dataclass
class _Pyramid:
    weights: np.ndarray          # sorted descending
    prefix: np.ndarray           # prefix[k] = sum of the k largest
    scu_weight: dict
    n_refs: int | None


def read_pyramid_tables(pyramids, n_refs=None) -> dict:
    """Check the pyramid table (``data_schemas/pyramid.md``): ``doc_id``, ``scu``, ``weight``
    (> 0, finite), optional ``n_refs`` (an integer ≥ every weight, one value per doc_id; else the
    ``n_refs`` argument). Returns {str(doc_id): _Pyramid}."""
    table, csv = _read(pyramids, "pyramid table")
    rows = _Rows("pyramid table", csv)
    docs = _ids(table, "doc_id", rows)
    scus = _ids(table, "scu", rows)
    wt = table.schema.field("weight").type if "weight" in table.column_names else None
    weights = _column(table, "weight", rows.what)
    if not (pa.types.is_integer(wt) or pa.types.is_floating(wt)):
        raise InputError(f"pyramid table: column `weight` must be numeric; it is {wt}")
    col_refs = None
    if "n_refs" in table.column_names:
        rt = table.schema.field("n_refs").type
        if not (pa.types.is_integer(rt) or pa.types.is_floating(rt) or pa.types.is_null(rt)):
            raise InputError(f"pyramid table: column `n_refs` must hold integers; it is {rt}")
        col_refs = _column(table, "n_refs", rows.what)
    if col_refs is not None and n_refs is not None:
        raise InputError("pyramid table has a column `n_refs`; do not also pass n_refs=")
    if n_refs is not None and (isinstance(n_refs, bool) or not isinstance(n_refs, int)
                               or n_refs < 1):
        raise InputError(f"n_refs must be an integer >= 1; got {n_refs!r}")
    by_doc: dict = {}
    seen: dict = {}
    for i, (d, s, w) in enumerate(zip(docs, scus, weights)):
        if w is None or not math.isfinite(w) or w <= 0:
            raise rows.error(f"bad `weight` {w!r} of SCU {s!r} (doc_id {d!r}): weights must be "
                             "finite and > 0 (the number of references expressing the SCU)", i)
        key = (str(d), str(s))
        if key in seen:
            raise rows.error(f"duplicate SCU {s!r} of doc_id {d!r}", seen[key], i)
        seen[key] = i
        entry = by_doc.setdefault(str(d), {"scus": {}, "refs": None, "row": i})
        entry["scus"][str(s)] = float(w)
        if col_refs is not None:
            r = col_refs[i]
            if (r is None or isinstance(r, bool) or not math.isfinite(r) or r != int(r)
                    or r < 1):
                raise rows.error(f"bad `n_refs` {r!r} (an integer >= 1 is needed)", i)
            if entry["refs"] is None:
                entry["refs"] = (int(r), i)
            elif entry["refs"][0] != int(r):
                raise rows.error(f"`n_refs` of doc_id {d!r} differs ({entry['refs'][0]} vs "
                                 f"{int(r)})", entry["refs"][1], i)
        refs = entry["refs"][0] if entry["refs"] is not None else n_refs
        if refs is not None and w > refs:
            raise rows.error(f"`weight` {w!r} of SCU {s!r} exceeds n_refs = {refs} (a weight "
                             "counts reference summaries)", i)
    out = {}
    for d, e in by_doc.items():
        w = np.sort(np.fromiter(e["scus"].values(), dtype=np.float64))[::-1]
        prefix = np.concatenate([[0.0], np.cumsum(w)])
        refs = e["refs"][0] if e["refs"] is not None else n_refs
        out[d] = _Pyramid(w, prefix, e["scus"], refs)
    return out


def _summaries(data) -> tuple[list, _Rows]:
    """([(first row, system, doc_id, [str scu or None, ...], {scu: row})] in order of first
    appearance, the row namer)."""
    table, csv = _read(data, "summaries table")
    rows = _Rows("summaries table", csv)
    systems = _ids(table, "system", rows)
    docs = _ids(table, "doc_id", rows)
    if "scu" not in table.column_names:
        raise InputError(f"summaries table: missing column `scu`; columns are "
                         f"{table.column_names}")
    t = table.schema.field("scu").type
    groups: dict = {}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        for i, (sy, d, lst) in enumerate(zip(systems, docs, table["scu"].to_pylist())):
            key = (str(sy), str(d))
            if key in groups:
                raise rows.error(f"duplicate summary (system, doc_id) {(sy, d)!r}",
                                 groups[key][0], i)
            if not lst:
                raise rows.error(f"empty summary (system {sy!r}, doc_id {d!r}): no content "
                                 "units", i)
            units, seen = [], set()
            for s in lst:
                if s == "":
                    raise rows.error("empty SCU id in `scu`", i, tail=" (null marks a content "
                                     "unit that matches no SCU)")
                if s is not None:
                    if not isinstance(s, (str, int)):
                        raise rows.error(f"SCU id {s!r} is not text or an integer", i)
                    if str(s) in seen:
                        raise rows.error(f"SCU {s!r} listed twice in one summary", i)
                    seen.add(str(s))
                units.append(None if s is None else str(s))
            groups[key] = (i, sy, d, units, {})
        return list(groups.values()), rows
    scus = _ids(table, "scu", rows, allow_null=True)
    for i, (sy, d, s) in enumerate(zip(systems, docs, scus)):
        key = (str(sy), str(d))
        g = groups.setdefault(key, (i, sy, d, [], {}))
        if s is not None:
            if str(s) in g[4]:
                raise rows.error(f"duplicate SCU {s!r} for (system {sy!r}, doc_id {d!r})",
                                 g[4][str(s)], i)
            g[4][str(s)] = i
        g[3].append(None if s is None else str(s))
    return list(groups.values()), rows


# ---------------------------------------------------------------- evaluation
def pyramid(summaries, pyramids, measures=("Pyramid",), n_refs: int | None = None) -> pa.Table:
    """Pyramid scores with IUB, REB and UE per (system, document) (see the module docstring
    for the formulas; Nenkova & Passonneau 2004, Passonneau et al. 2005, Feng 2023 ch. 8).

    Args:
        summaries: the SCUs each summary expresses: columns ``system``, ``doc_id``, ``scu``
            (one row per unit, a null ``scu`` = a unit matching no SCU; or a ``list`` column,
            one row per summary). A pyarrow/Polars/pandas table or a .csv/.tsv/.parquet/.arrow
            path; ``data_schemas/pyramid.md``.
        pyramids: columns ``doc_id``, ``scu``, ``weight``, optional ``n_refs``.
        measures: strings ``Pyramid``, ``Pyramid(variant=modified)``,
            ``Pyramid(variant=modified,x=exact)`` (or :class:`PyramidMeasure`).
        n_refs: number of reference summaries of every pyramid where the table has no
            ``n_refs`` column (needed only by ``modified``).

    Returns:
        A ``pyarrow.Table`` with columns :data:`OUTPUT_COLUMNS`: one row per (summary, measure),
        summaries in order of first appearance, measures in the order given.
    """
    ms = [parse_pyramid_measure(m) for m in ([measures] if isinstance(measures, str)
                                             else measures)]
    if not ms:
        raise MeasureParseError("no measures given")
    if len({str(m) for m in ms}) != len(ms):
        raise MeasureParseError(f"a measure is requested twice in {[str(m) for m in ms]}")
    pyrs = read_pyramid_tables(pyramids, n_refs)
    summ, srows = _summaries(summaries)
    cols: dict = {c: [] for c in OUTPUT_COLUMNS}
    for row, sy, d, units, where in summ:
        p = pyrs.get(str(d))
        if p is None:
            raise srows.error(f"doc_id {d!r} has no pyramid", row)
        for s in units:
            if s is not None and s not in p.scu_weight:
                i = where.get(s, row)
                raise srows.error(f"SCU {s!r} is not in the pyramid of doc_id {d!r}", i,
                                  tail=" (a null `scu` marks a content unit that matches no SCU)")
        n = len(p.weights)
        xs = len(units)
        weight = float(sum(p.scu_weight[s] for s in units if s is not None))
        ideal = float(p.prefix[min(xs, n)])
        exp_w = min(xs, n) * float(p.prefix[-1]) / n
        if xs >= n or p.weights[0] == p.weights[-1]:
            exp_w = ideal  # every same-size subset weighs Max(X_s): REB = IUB exactly
        for m in ms:
            if m.variant == "original":
                x, den = float(xs), ideal
            else:
                if p.n_refs is None:
                    raise InputError(f"{m} needs the number of reference summaries: give the "
                                     "pyramid table an `n_refs` column or pass n_refs=")
                xbar = float(p.prefix[-1]) / p.n_refs
                x = float(math.ceil(round(xbar, 9))) if m.x == "ceil" else xbar
                den = top_weight(p.weights, x)
            for c, v in zip(OUTPUT_COLUMNS, (sy, d, str(m), weight / den, ideal / den,
                                             exp_w / den, None, None, xs, x, weight, ideal,
                                             exp_w)):
                cols[c].append(v)
    v1, v2 = text_ue(cols["value"], cols["iub"], cols["reb"])
    cols["ue_v1"], cols["ue_v2"] = v1, v2
    f64 = pa.float64()
    types = {"measure": pa.string(), "n_units": pa.int64()}
    arrays = {c: pa.array(cols[c], type=types.get(c, None if c in ("system", "qid") else f64))
              for c in OUTPUT_COLUMNS}
    if not summ:
        arrays["system"] = arrays["qid"] = pa.array([], pa.string())
    from uefast import __version__

    meta = {b"uefast.version": __version__.encode(),
            b"uefast.settings": json.dumps({"measures": [str(m) for m in ms],
                                            "n_refs": n_refs}).encode()}
    return pa.table(arrays).replace_schema_metadata(meta)
