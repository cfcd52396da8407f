"""A tiny dependency-free progress line on stderr: rows, queries, rows/s (and % when known)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


def _si(x: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


class Progress:
    """``update(rows, queries)`` redraws at most every ``interval`` seconds; ``close`` ends the line.

    The line reads ``uefast: 12.35M rows (41%) | 98.1k queries | 3.20M rows/s | 3.9 s``. Disabled
    (no output at all) with ``enabled=False``.
    """

    def __init__(self, total_rows: int | None = None, *, enabled: bool = True,
                 stream: TextIO | None = None, interval: float = 0.5, label: str = "uefast") -> None:
        self.total = total_rows
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.label = label
        self.t0 = time.perf_counter()
        self._last = -1e9
        self._width = 0

    def line(self, rows: int, queries: int) -> str:
        dt = max(time.perf_counter() - self.t0, 1e-9)
        pct = f" ({100.0 * rows / self.total:.0f}%)" if self.total else ""
        return (f"{self.label}: {_si(rows)} rows{pct} | {_si(queries)} queries | "
                f"{_si(rows / dt)} rows/s | {dt:.1f} s")

    def update(self, rows: int, queries: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        s = self.line(rows, queries)
        self.stream.write("\r" + s + " " * max(0, self._width - len(s)))
        self.stream.flush()
        self._width = len(s)

    def close(self, rows: int, queries: int) -> None:
        if not self.enabled:
            return
        self.update(rows, queries, force=True)
        self.stream.write("\n")
        self.stream.flush()
