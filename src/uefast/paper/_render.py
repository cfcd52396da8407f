"""Rendering of a :class:`uefast.paper.table.PaperTable`: Markdown, LaTeX, HTML, CSV, Arrow.

Every format shows the same cells: the mean rounded to ``digits``, ``± h`` (half-width of the
confidence interval, symmetric for the Student-t interval), a marker (†/‡ against a baseline, or
the letters of the systems a system beats) and bold for the best mean of a column.
"""
from __future__ import annotations

import html as _html
from pathlib import Path

import numpy as np
import pyarrow as pa

from uefast.errors import InputError

__all__ = ["markdown", "latex", "html", "csv_text", "arrow_table", "save", "FORMATS"]

FORMATS = {".md": "markdown", ".markdown": "markdown", ".tex": "latex", ".html": "html",
           ".htm": "html", ".csv": "csv"}
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _parts(t, system, key):
    """(mean text, ± text or "", marker, bold) of one cell, markup-free."""
    c = t.cells[(system, key)]
    f = 100.0 if t.percent else 1.0
    mean = f"{f * c.mean:.{t.digits}f}"
    pm = f"{f * (c.ci_high - c.ci_low) / 2:.{t.digits}f}" if t.show_ci else ""
    if t.baseline is not None:  # the baseline's own row carries no marker
        marker = "" if system == t.baseline else (
            "†" if c.better_than else ("‡" if c.worse_than else ""))
    else:
        marker = "".join(sorted(t.letters[s] for s in c.better_than))
    return mean, pm, marker, t.bold_best and c.best


def _row_label(t, system, esc=str):
    name = esc(system)
    if t.baseline is None:
        return f"({t.letters[system]}) {name}"
    return name + (" (baseline)" if system == t.baseline else "")


def markdown(t) -> str:
    head = ["System"] + [t.header(k) for k in t.keys]
    lines = ["| " + " | ".join(_md_escape(h) for h in head) + " |",
             "|" + "---|" + "---:|" * len(t.keys)]
    for s in t.systems:
        cells = [_row_label(t, s, _md_escape)]
        for k in t.keys:
            mean, pm, marker, bold = _parts(t, s, k)
            v = f"**{mean}**" if bold else mean
            if marker:
                v += marker if t.baseline is not None else f"<sup>{marker}</sup>"
            if pm:
                v += f" ± {pm}"
            cells.append(v)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + t.legend() + "\n"


def _md_escape(s) -> str:
    return str(s).replace("|", r"\|").replace("*", r"\*").replace("_", r"\_")


def _tex(s) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(s))


def _tex_text(s: str) -> str:
    """Legend prose: LaTeX specials escaped, † ‡ ± α as commands."""
    out = _tex(s)
    for a, b in (("†", r"$^{\dagger}$"), ("‡", r"$^{\ddagger}$"), ("±", r"$\pm$"),
                 ("α", r"$\alpha$")):
        out = out.replace(a, b)
    return out


def latex(t, caption=None, label=None) -> str:
    cols = "l" + "r" * len(t.keys)
    head = " & ".join(["System"] + [_tex(t.header(k)) for k in t.keys]) + r" \\"
    body = []
    for s in t.systems:
        cells = [_row_label(t, s, _tex)]
        for k in t.keys:
            mean, pm, marker, bold = _parts(t, s, k)
            v = rf"\textbf{{{mean}}}" if bold else mean
            if marker:
                sup = {"†": r"\dagger", "‡": r"\ddagger"}.get(marker, rf"\mathrm{{{marker}}}")
                v += rf"$^{{{sup}}}$"
            if pm:
                v += rf" {{\scriptsize $\pm${pm}}}"
            cells.append(v)
        body.append(" & ".join(cells) + r" \\")
    cap = (_tex_text(caption) + " " if caption else "") + _tex_text(t.legend())
    lines = ["% needs \\usepackage{booktabs}", r"\begin{table}[t]", r"\centering",
             rf"\caption{{{cap}}}"]
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{cols}}}", r"\toprule", head, r"\midrule", *body,
              r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def html(t) -> str:
    e = _html.escape
    rows = ["<table>", f"<caption>{e(t.legend())}</caption>", "<thead><tr><th>System</th>"
            + "".join(f"<th>{e(t.header(k))}</th>" for k in t.keys) + "</tr></thead>", "<tbody>"]
    for s in t.systems:
        cells = [f"<th scope=\"row\">{_row_label(t, s, e)}</th>"]
        for k in t.keys:
            mean, pm, marker, bold = _parts(t, s, k)
            v = f"<b>{mean}</b>" if bold else mean
            if marker:
                v += f"<sup>{e(marker)}</sup>"
            if pm:
                v += f" <small>± {pm}</small>"
            cells.append(f"<td>{v}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rows += ["</tbody>", "</table>"]
    return "\n".join(rows) + "\n"


def arrow_table(t) -> pa.Table:
    from uefast.inputs import numeric_array, text_array

    rows = [(s, k, t.cells[(s, k)]) for k in t.keys for s in t.systems]

    def num(values, dtype):
        return pa.array(values, type=dtype)

    cols = {
        "system": text_array([s for s, _, _ in rows]),
        "measure": text_array([k[0] for _, k, _ in rows]),
        "column": text_array([k[1] for _, k, _ in rows]),
        "mean": numeric_array(np.array([c.mean for _, _, c in rows], dtype=np.float64)),
        "ci_low": num([c.ci_low for _, _, c in rows], pa.float64()),
        "ci_high": num([c.ci_high for _, _, c in rows], pa.float64()),
        "n_topics": num([c.n_topics for _, _, c in rows], pa.int64()),
        "best": num([c.best for _, _, c in rows], pa.bool_()),
        "marker": text_array([_parts(t, s, k)[2] for s, k, _ in rows]),
        "better_than": text_array([";".join(c.better_than) for _, _, c in rows]),
        "worse_than": text_array([";".join(c.worse_than) for _, _, c in rows]),
        "pvalue_adjusted": num([c.pvalue_adjusted for _, _, c in rows], pa.float64()),
        "n_better": num([c.n_better for _, _, c in rows], pa.int64()),
        "n_worse": num([c.n_worse for _, _, c in rows], pa.int64()),
    }
    meta = {b"uefast.report": t.legend().encode()}
    return pa.table(cols).replace_schema_metadata(meta)


def csv_text(t) -> str:
    import io

    import pyarrow.csv as pacsv

    buf = io.BytesIO()
    pacsv.write_csv(arrow_table(t), buf)
    return buf.getvalue().decode()


def render(t, fmt: str) -> str:
    """The table as text in ``fmt``: markdown, latex, html or csv."""
    fns = {"markdown": markdown, "latex": latex, "html": html, "csv": csv_text}
    if fmt not in fns:
        raise InputError(f"format must be one of {sorted(fns)}; got {fmt!r}")
    return fns[fmt](t)


def save(t, path, fmt=None) -> None:
    p = Path(path)
    if fmt is None:
        fmt = FORMATS.get(p.suffix.lower())
        if fmt is None:
            raise InputError(f"cannot tell the format of {str(path)!r} from its suffix; use one of "
                             f"{sorted(FORMATS)} or give the format")
    p.write_text(render(t, fmt), encoding="utf-8")
