"""Figures of the ``reproduce`` report (matplotlib, Agg backend, imported lazily)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["plot_expected_hist", "plot_actual_vs_expected", "plot_asl_curves"]

_DPI = 150  # the least a paper's figure takes
_TYPE_COLOURS = {
    "informative": "tab:blue",
    "uninformative-hard": "tab:red",
    "uninformative-easy": "tab:orange",
    "ideal": "tab:green",
    "degenerate": "lightgrey",
}


def require_matplotlib() -> None:
    """Raise :class:`~uefast.errors.MissingDependencyError` (one line naming the ``report``
    extra) unless matplotlib can be imported: called before any work that ends in figures."""
    from uefast.errors import MissingDependencyError

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError('the report figures need matplotlib, which is not installed: '
                                     'pip install "uefast[report]"') from None


def _plt():
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_expected_hist(reb_table: pa.Table, measures: list[tuple[str, str]], path: Path) -> None:
    """Histogram of per-query expected values (REB), exact vs the paper's formula (paper Fig. 2-3).

    ``reb_table`` has ``measure, qid, reb_exact, reb_paper``; ``measures`` = [(measure, label)].
    """
    plt = _plt()
    fig, axes = plt.subplots(1, len(measures), figsize=(5.2 * len(measures), 3.6))
    axes = np.atleast_1d(axes)
    for ax, (measure, label) in zip(axes, measures):
        t = reb_table.filter(pc.equal(reb_table["measure"], measure))
        ex, pp = t["reb_exact"].to_numpy(), t["reb_paper"].to_numpy()
        hi = float(max(ex.max(initial=0), pp.max(initial=0), 1e-9))
        bins = np.linspace(0, hi, 31)
        ax.hist(ex, bins=bins, alpha=0.6, label=f"exact (mean {ex.mean():.3f})", color="tab:blue")
        ax.hist(pp, bins=bins, alpha=0.6, label=f"paper (mean {pp.mean():.3f})", color="tab:orange")
        ax.set_xlabel(f"expected {label} of a random ranking (REB)")
        ax.set_ylabel("queries")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def plot_actual_vs_expected(parts: dict[str, pa.Table], measures: list[tuple[str, str]], path: Path) -> None:
    """Mean actual metric over systems vs REB per query, coloured by query type (paper Fig. 1).

    ``parts`` maps the REB mode ("exact", "paper") to the partition table (``measure, qid,
    mean_value, reb, query_type``). One panel per (measure, REB mode).
    """
    plt = _plt()
    modes = list(parts)
    fig, axes = plt.subplots(len(measures), len(modes), figsize=(4.6 * len(modes), 3.9 * len(measures)),
                             squeeze=False)
    for r, (measure, label) in enumerate(measures):
        for c, mode in enumerate(modes):
            ax = axes[r, c]
            t = parts[mode].filter(pc.equal(parts[mode]["measure"], measure))
            x, y = t["reb"].to_numpy(), t["mean_value"].to_numpy()
            types = np.asarray(t["query_type"].to_pylist())
            for name, colour in _TYPE_COLOURS.items():
                sel = types == name
                if sel.any():
                    ax.scatter(x[sel], y[sel], s=9, c=colour, label=f"{name} ({sel.sum()})", alpha=0.8)
            _reb_axis(ax, x, y)
            ax.set_xlabel(f"expected {label} (REB, {mode})" + (
                ", log scale" if ax.get_xscale() == "symlog" else ""))
            ax.set_ylabel(f"mean actual {label} over systems")
            ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def _reb_axis(ax, x: np.ndarray, y: np.ndarray) -> None:
    """The REB (x) axis of Fig. 1 and the diagonal y = x. Pooled TREC data puts most REB values
    within a few hundredths of 0 (a random order of hundreds of judged documents finds few
    relevant ones early) while a few queries reach far more: where the median is below a tenth of
    the largest value, the axis is logarithmic (symlog, linear below the smallest positive REB,
    so that REB = 0 stays on the plot); otherwise linear. Either way it spans the REB values (not
    the larger actual values, which left the points in a narrow band at the left)."""
    pos = x[x > 0]
    xmax = float(x.max(initial=0))
    if pos.size > 1 and float(np.median(x)) < 0.1 * xmax:
        lin = float(pos.min())
        ax.set_xscale("symlog", linthresh=lin)
        ax.set_xlim(0, xmax * 1.3)
        d = np.concatenate(([0.0], np.geomspace(lin, xmax * 1.3, 200)))
    else:
        top = max(xmax, 1e-9) * 1.08
        ax.set_xlim(-0.02 * top, top)
        d = np.array([0.0, top])
    ax.plot(d, d, color="black", lw=0.7, ls="--", label="actual = expected")


def plot_asl_curves(curves: dict[str, np.ndarray], alpha: float, path: Path, title: str) -> None:
    """Sakai's ASL curves: sorted p-values against system-pair rank, one line per metric."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for name, curve in curves.items():
        style = "-" if "UE" not in name else ("--" if "V1" in name else ":")
        ax.plot(np.arange(1, curve.size + 1), curve, style, label=name, lw=1.4)
    ax.axhline(alpha, color="grey", lw=0.7)
    ax.set_xlabel("system pair, sorted by p-value")
    ax.set_ylabel("ASL (p-value)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
