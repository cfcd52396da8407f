"""The table metadata of ``uefast.evaluate`` (``uefast.version``, ``uefast.settings``,
``uefast.info``, ``uefast.dropped``; ``data_schemas/evaluate_output.md``) carried through a
partitioned evaluation to the aggregate.

Each part evaluated by an adapter carries its own engine call's metadata plus ``uefast.part``
(JSON: the part's systems and (system, query) pairs with run rows, its queries, and for TREC
input the whole qrels' query and row counts). :class:`MetaStats` merges them as streaming merges
its chunks (``uefast.streaming.evaluate_stream``): the numeric counters of ``uefast.info`` are
summed over the parts (queries are disjoint across parts), ``qrels_rows_in`` is the whole
qrels', the (system, query) pairs without run rows are counted over the whole systems x queries
grid, ``uefast.dropped`` is concatenated in partition order, and ``distributed: {partitions}``
is added. Slices of one in-memory table (no ``uefast.part``) carry that table's metadata
unchanged, as :func:`uefast.aggregate` does.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

PART_KEY = b"uefast.part"
META_KEY = ("\x00metadata",)  # the partial's key of the metadata (never a (system, measure))
_MISSING = ("system_query_pairs_without_run_rows", "missing_system_queries")


def metadata_of(part: Any) -> dict | None:
    """A part's metadata as ``{bytes: bytes}``: Arrow schema metadata, or the ``attrs`` of a
    pandas part (:mod:`uefast.dask` puts it there); None when it has none."""
    if isinstance(part, (pa.Table, pa.RecordBatch)):
        md = part.schema.metadata
    else:
        attrs = getattr(part, "attrs", None) or {}
        md = {k.encode(): v.encode() for k, v in attrs.items()
              if isinstance(k, str) and k.startswith("uefast.") and isinstance(v, str)}
    return dict(md) if md and b"uefast.info" in md else None


@dataclass
class MetaStats:
    """Mergeable metadata of the parts seen (see the module docstring)."""

    parts: int = 0  # adapter parts (with uefast.part)
    bare: int = 0  # parts with rows but no metadata
    whole: dict | None = None  # metadata of slices of one whole table (identical on each)
    conflict: bool = False  # slices of different tables
    info: dict = field(default_factory=dict)
    head: dict = field(default_factory=dict)  # uefast.version / uefast.settings (bytes)
    dropped: list = field(default_factory=list)
    systems: set = field(default_factory=set)
    pairs: int = 0
    queries: int = 0
    qrels: tuple | None = None  # (queries, rows) of the whole qrels (TREC)

    @classmethod
    def of(cls, part: Any, n_rows: int) -> "MetaStats | None":
        md = metadata_of(part)
        if md is None:
            return cls(bare=1) if n_rows else None
        if PART_KEY not in md:
            return cls(whole=md)
        p = json.loads(md[PART_KEY])
        head = {k: md[k] for k in (b"uefast.version", b"uefast.settings") if k in md}
        qrels = None if p.get("qrels_queries") is None else (p["qrels_queries"],
                                                             p["qrels_rows"])
        return cls(parts=1, info=json.loads(md[b"uefast.info"]), head=head,
                   dropped=json.loads(md.get(b"uefast.dropped", b"[]")),
                   systems=set(p["systems"]), pairs=int(p["pairs"]),
                   queries=int(p["queries"]), qrels=qrels)

    def merge(self, o: "MetaStats") -> "MetaStats":
        info = dict(self.info)
        for k, v in o.info.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k in info:
                info[k] = info[k] + v
            else:
                info.setdefault(k, v)
        whole, conflict = self.whole or o.whole, self.conflict or o.conflict
        if self.whole is not None and o.whole is not None and self.whole != o.whole:
            conflict = True
        return MetaStats(self.parts + o.parts, self.bare + o.bare, whole, conflict, info,
                         {**o.head, **self.head}, self.dropped + o.dropped,
                         self.systems | o.systems, self.pairs + o.pairs,
                         self.queries + o.queries, self.qrels or o.qrels)

    def metadata(self) -> dict | None:
        """The aggregate's metadata, or None where it cannot be exact (parts without metadata,
        slices of different tables, or a mix)."""
        if self.bare or self.conflict or (self.whole is not None and self.parts):
            return None
        if self.whole is not None:
            return dict(self.whole)
        if not self.parts:
            return None
        info = dict(self.info)
        for key in _MISSING:
            if key in info:  # over the whole systems x queries grid, as in memory
                nq = self.qrels[0] if self.qrels is not None else self.queries
                info[key] = len(self.systems) * nq - self.pairs
        if self.qrels is not None:
            info["qrels_rows_in"] = self.qrels[1]
        info["distributed"] = {"partitions": self.parts}
        md = dict(self.head)
        md[b"uefast.info"] = json.dumps(info).encode()
        md[b"uefast.dropped"] = json.dumps(self.dropped).encode()
        return md


def part_metadata(table: pa.Table, res: pa.Table | None, spec: Any) -> dict:
    """The metadata of one evaluated part: ``res``'s (the engine call's) with the user's measure
    names, plus ``uefast.part``; ``res`` None: a TREC part none of whose queries is judged (the
    engine was not called; its rows are counted as ``uefast.evaluate`` counts them)."""
    import pyarrow.compute as pc

    qcol = table.column(spec.qid)
    nq_run = len(pc.unique(qcol))
    sys_name = spec.options.get("system", "system")
    if sys_name in table.column_names:
        systems = pc.unique(table.column(sys_name).cast(pa.string())).to_pylist()
    else:
        systems = ["run"] if spec.qrels is not None else []
    trec = spec.qrels is not None
    if res is None:
        info = {"rows_in": table.num_rows, "qrels_rows_in": 0, "rows_evaluated": 0,
                "run_rows_query_not_in_qrels": table.num_rows,
                "run_queries_not_in_qrels": nq_run, "system_query_pairs_without_run_rows": 0,
                "output_rows": 0, "dropped_degenerate_rows": 0}
        md, pairs, nq = {}, 0, 0
    else:
        md = dict(res.schema.metadata or {})
        info = json.loads(md[b"uefast.info"])
        settings = json.loads(md[b"uefast.settings"])
        settings["measures"] = [spec.back.get(m, m) for m in spec.measures]
        md[b"uefast.settings"] = json.dumps(settings).encode()
        if spec.back:
            dropped = [[s, q, spec.back.get(m, m)] for s, q, m in
                       json.loads(md.get(b"uefast.dropped", b"[]"))]
            md[b"uefast.dropped"] = json.dumps(dropped).encode()
        nq = nq_run - info.get("run_queries_not_in_qrels", 0)  # queries given to the engine
        missing = next((info[k] for k in _MISSING if k in info), None)
        pairs = 0 if missing is None else len(systems) * nq - missing
    part = {"systems": systems, "pairs": int(pairs), "queries": int(nq)}
    if trec:
        part["qrels_queries"], part["qrels_rows"] = spec.qrels_queries, spec.qrels.num_rows
    md[b"uefast.info"] = json.dumps(info).encode()
    md[PART_KEY] = json.dumps(part).encode()
    return md
