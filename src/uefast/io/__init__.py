"""Input readers: TREC runs and qrels, LETOR / SVMlight files, trec_eval -q output (re-exports)."""
from __future__ import annotations

from uefast.io.letor import read_letor
from uefast.io.trec import read_qrels, read_run
from uefast.io.trec_eval_output import read_trec_eval_output

__all__ = ["read_run", "read_qrels", "read_letor", "read_trec_eval_output"]
