"""The evaluation options, declared once and validated once, shared by :func:`uefast.evaluate`,
the streaming layer (:func:`uefast.streaming.evaluate_stream`) and the Polars adapters (and the
Dask / Spark / GPU front ends, which pass the same keywords).

:class:`EvalOptions` holds every option that changes a number; :meth:`EvalOptions.validated`
checks each one and returns the canonical object (measures parsed). Messages name the option,
the allowed values and the value given ("`ties` must be one of [...], got 'x'").
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from uefast.errors import InputError

__all__ = ["EvalOptions", "TIES", "REB", "QUERIES", "NEGATIVE", "BACKENDS", "check_choice"]

TIES = ("trec_eval", "input", "expected")
REB = ("exact", "paper")
QUERIES = ("intersect", "qrels")
NEGATIVE = ("clamp", "error")
BACKENDS = ("cpu", "cuda", "auto")


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    """:class:`~uefast.errors.InputError` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise InputError(f"`{name}` must be one of {list(choices)}, got {value!r}")


@dataclass(frozen=True)
class EvalOptions:
    """Every option of an evaluation (see :func:`uefast.evaluate` for their meaning)."""

    measures: tuple = ("nDCG@10", "AP")
    ue: bool = True
    ties: str = "trec_eval"
    reb: str = "exact"
    reb_universe: str = "judged"
    collection_size: int | None = None
    degenerate: str = "zero"
    rel_level: int = 1
    queries: str = "intersect"
    negative_labels: str = "clamp"
    score_columns: Sequence[str] | None = None
    columns: dict = field(default_factory=lambda: dict(qid="qid", docid="docid", label="label",
                                                        score="score", system="system"))
    backend: str = "cpu"

    def validated(self) -> "EvalOptions":
        """The options checked (one message per bad option, naming it and the value) with the
        measures parsed (:func:`uefast.measures.parse_measures`)."""
        from uefast.backends import get_backend
        from uefast.measures import parse_measures
        from uefast.ue import DEGENERATE_POLICIES
        from uefast.universe import check_universe

        check_choice("ties", self.ties, TIES)
        check_choice("reb", self.reb, REB)
        check_choice("degenerate", self.degenerate, DEGENERATE_POLICIES)
        check_choice("queries", self.queries, QUERIES)
        check_choice("negative_labels", self.negative_labels, NEGATIVE)
        check_choice("backend", self.backend, BACKENDS)
        rl = self.rel_level
        if isinstance(rl, bool) or not isinstance(rl, (int, np.integer)) or rl < 1:
            raise InputError(f"`rel_level` must be an integer >= 1, got {rl!r}")
        mlist = tuple(parse_measures(self.measures))
        check_universe(self.reb_universe, self.collection_size, mlist, self.reb)
        # "auto" is resolved per call, from the input's size (uefast.gpu.memory.choose_backend)
        reason = None if self.backend == "auto" else get_backend(self.backend).unavailable_reason()
        if reason is not None:
            raise InputError(f"`backend`={self.backend!r} cannot run here: {reason}")
        return replace(self, measures=mlist, rel_level=int(rl))

    @property
    def n_universe(self) -> int:
        """N for ``reb_universe="collection"``, else 0."""
        return int(self.collection_size) if self.reb_universe == "collection" else 0

    def settings(self, style: str) -> dict:
        """The JSON-able record written to the output metadata (``uefast.settings``)."""
        d = asdict(self)
        d["measures"] = [str(m) for m in self.measures]
        d["rel_level"] = int(self.rel_level)
        d["style"] = style
        d.pop("score_columns")
        return d
