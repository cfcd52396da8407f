"""Write an MSLR-shaped, partitioned Parquet dataset of N rows for the distributed benchmarks.

Each file ``part-NNNNN.parquet`` holds whole queries (qids distinct across files; ~121 documents
per query, graded labels 0-4 with MSLR-WEB30K's marginals, ``--systems`` score columns from
:func:`uefast.sample.mslr_like`), written through :class:`uefast.streaming.ClusteredWriter`, so
row groups are cut at query boundaries: the dataset is *clustered* (``clustered=True`` for the
adapters, no shuffle). Memory: one file's rows at a time. File ``i`` depends only on
``(seed, i)``: files can be written in parallel processes (``--first/--count``) and a partial
run resumed.

    python benchmarks/make_mslr_parquet.py /data/mslr_1b 1_000_000_000          # ~13 GB, 1 system
    python benchmarks/make_mslr_parquet.py /tmp/mslr_4m 4_000_000 --rows-per-file 500_000
"""
from __future__ import annotations

import argparse
import os
import sys
import time

QUERIES_PER_CHUNK = 4_000  # ~0.48 M rows per generated chunk


def write_file(path: str, n_rows: int, file_index: int, *, seed: int = 1, systems: int = 1,
               row_group_size: int = 1 << 18) -> int:
    """Write about ``n_rows`` rows (whole queries; the last query may be cut short) of file
    ``file_index`` to ``path``; return the rows written."""
    import pyarrow as pa

    from uefast.sample import mslr_like
    from uefast.streaming import ClusteredWriter

    cols = [("qid", pa.int64()), ("docid", pa.int64()), ("label", pa.int8())]
    cols += [(f"sys{s}", pa.float64()) for s in range(systems)]
    schema = pa.schema(cols)
    written, chunk = 0, 0
    base = file_index * 10_000_000_000  # qid ranges of files never overlap
    with ClusteredWriter(path, schema, "qid", row_group_size) as w:
        while written < n_rows:
            t = mslr_like(QUERIES_PER_CHUNK, systems, seed=(seed * 1_000_003 + file_index) *
                          1_000_003 + chunk)
            q = t["qid"].cast(pa.int64()).to_numpy() + base + chunk * QUERIES_PER_CHUNK
            data = {"qid": q, "docid": t["docid"].cast(pa.int64()),
                    "label": t["label"].cast(pa.int8())}
            data.update({f"sys{s}": t[f"sys{s}"] for s in range(systems)})
            t = pa.table(data, schema=schema)
            t = t.slice(0, min(t.num_rows, n_rows - written))
            w.write(t)
            written += t.num_rows
            chunk += 1
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory")
    ap.add_argument("rows", type=lambda s: int(float(s.replace("_", ""))), help="total rows")
    ap.add_argument("--rows-per-file", type=int, default=25_000_000)
    ap.add_argument("--systems", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--row-group-size", type=int, default=1 << 18)
    ap.add_argument("--first", type=int, default=0, help="first file index to write")
    ap.add_argument("--count", type=int, default=None, help="files to write (default: all)")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    n_files = -(-a.rows // a.rows_per_file)
    last = n_files if a.count is None else min(n_files, a.first + a.count)
    t0, total = time.perf_counter(), 0
    for i in range(a.first, last):
        rows = min(a.rows_per_file, a.rows - i * a.rows_per_file)
        path = os.path.join(a.out, f"part-{i:05d}.parquet")
        total += write_file(path, rows, i, seed=a.seed, systems=a.systems,
                            row_group_size=a.row_group_size)
        print(f"{path}: {rows} rows ({total / (time.perf_counter() - t0):,.0f} rows/s)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
