"""Paper output: the results table (:func:`report`) and the usual figures (:mod:`uefast.paper.plots`).

``uefast.report(...)`` is :func:`uefast.paper.table.report`; the command line is ``uefast report``
and ``uefast plot``. Plots need matplotlib (``pip install "uefast[report]"``).
"""
from __future__ import annotations

from uefast.paper.table import Cell, PaperTable, report

__all__ = ["report", "PaperTable", "Cell"]
