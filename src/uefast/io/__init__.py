"""Input readers: TREC runs and qrels, LETOR / SVMlight files (re-exports)."""
from __future__ import annotations

from uefast.io.letor import read_letor
from uefast.io.trec import read_qrels, read_run

__all__ = ["read_run", "read_qrels", "read_letor"]
