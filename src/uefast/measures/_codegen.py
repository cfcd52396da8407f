"""Writes :mod:`uefast.kernels.dispatch` from the registry:
``UEFAST_CODEGEN=1 python -m uefast.measures._codegen``.

Numba compiles (and caches on disk) a dispatch only when it is ordinary module source, so the
registry's families are turned into that source: one ``if kind == K_<NAME>: return <routine>(...)``
line per family in each of ``measure_plain``, ``measure_tied``, ``measure_iub``, ``measure_reb``
and ``paper_reb`` (families with a paper REB), every unknown code returning NaN (or, for the
paper's REB, the exact REB it was given). Each line sits under ``if FAMS & F_<NAME>:``, ``FAMS``
a module constant (every family) that Numba's dead-branch pruning resolves before it inlines the
routines; the CPU driver compiles copies of these functions with ``FAMS`` rebound to the families
a call asks for (:func:`uefast.kernels.driver.chunk_kernels`), so a call compiles only those
families' routines. ``fparam`` is the measure's row of real parameters (``MeasurePlan.fparams[m]``):
a family's routines get its first element as their ``fp``, or the row itself where the family reads
more than one (``Family.reals``). tests/test_registry.py checks that the committed file is
what this writes, so the registry is the one source of the dispatch.
"""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

__all__ = ["render", "main"]

_SIGS = {
    "plain": ("measure_plain(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, pos, ideal)",
              "The raw value of family ``kind`` on one fully ordered list (normalised families: "
              "before the division by IUB)."),
    "tied": ("measure_tied(kind, lab, gend, ng, n, k, gtype, rel, fparam, norm, nrel, tabs, "
             "scratch, ideal)",
             "The tie-aware (expected) raw value of family ``kind`` given tie groups "
             "``gend[0:ng]``."),
    "iub": ("measure_iub(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs)",
            "IUB of family ``kind`` from the judged labels ``lab[0:n]`` sorted descending."),
    "reb": ("measure_reb(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, gsum, gend, "
            "scratch)",
            "Exact REB of family ``kind``: its expectation over uniformly random orders of the "
            "judged labels."),
    "paper_reb": ("paper_reb(kind, n, k, norm, nrel, tabs, gsum, exact)",
                  "The paper's REB (Santu & Feng 2022) of family ``kind`` where it gives one, "
                  "else ``exact``."),
}


def _const(name: str) -> str:
    return "K_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def _args(sig: str, reals: int = 1) -> str:
    """The routine's arguments: the dispatch's but ``kind``, ``fparam`` its first real unless the
    family reads several (then the row)."""
    inner = sig[sig.index("(") + 1:-1]
    return ", ".join("fparam[0]" if a == "fparam" and reals == 1 else a
                     for a in inner.split(", ") if a not in ("kind", "exact"))


def _name(sig: str) -> str:
    return sig[:sig.index("(")]


def render(families) -> str:
    """The source of :mod:`uefast.kernels.dispatch` for ``families`` (name -> Family)."""
    fams = sorted(families.values(), key=lambda f: f.code)
    imports: dict[str, set[str]] = {}
    for f in fams:
        for role in _SIGS:
            fn = getattr(f, role)
            if fn is not None:
                imports.setdefault(fn.__module__, set()).add(fn.__name__)
    out = ['"""Dispatch from a measure family\'s kernel code to its routines. GENERATED from the',
           "registry by ``UEFAST_CODEGEN=1 python -m uefast.measures._codegen``: do not edit.", "",
           "One ``if kind == K_...`` line per registered family in each function; an unknown code "
           "returns", "NaN (the paper's REB: the exact REB it was given), never another measure's "
           "numbers.", '"""', "from __future__ import annotations", "", "import numba as nb",
           "import numpy as np", ""]
    for mod in sorted(imports):
        out.append(f"from {mod} import (")
        out += [f"    {nm}," for nm in sorted(imports[mod])]
        out.append(")")
    names = [_name(sig) for sig, _ in _SIGS.values()]
    out += ["", *textwrap.wrap("__all__ = [" + ", ".join(
        f'"{nm}"' for nm in [*names, "DISPATCHED", "ALL_FAMILIES", "FAMS", "family_set"]) + "]",
        width=100, subsequent_indent="           "), ""]
    for f in fams:
        if not 0 <= f.code < 63:
            raise ValueError(f"family {f.name}: kernel code {f.code} outside 0..62 (a bit of an "
                             "int64 family set)")
        out.append(f"{_const(f.name)} = {f.code}")
    out.append("")
    for f in fams:
        out.append(f"F_{_const(f.name)[2:]} = 1 << {_const(f.name)}")
    out += ["", "#: the kernel codes the functions below handle (the registry checks a family's)",
            "DISPATCHED = frozenset({" + ", ".join(str(f.code) for f in fams) + "})", "",
            "#: the family set (bit ``code`` of each) of every family",
            *textwrap.wrap("ALL_FAMILIES = (" + " | ".join(f"F_{_const(f.name)[2:]}" for f in fams)
                           + ")", width=100, subsequent_indent="                "),
            "#: the families the functions below dispatch to: all of them here; the CPU driver "
            "rebinds it",
            "#: per family set (:func:`uefast.kernels.driver.chunk_kernels`)",
            "FAMS = ALL_FAMILIES", "", "",
            "def family_set(kinds) -> int:",
            '    """The family set (bit ``code`` per family) of the kernel codes ``kinds``."""',
            "    fams = 0",
            "    for kind in set(int(k) for k in kinds):",
            "        fams |= 1 << kind if kind in DISPATCHED else 0",
            "    return fams", "",
            "",
            "# inlined into the drivers' loops (Numba IR): a call per measure and query cost the core",
            "# benchmark ~4% CPU time; the tie-aware dispatch (the larger one) stays a call",
            '_jit = nb.njit(cache=True, nogil=True, inline="always")',
            "_call = nb.njit(cache=True, nogil=True)", ""]
    for role, (sig, doc) in _SIGS.items():
        out += ["", "@_call" if role == "tied" else "@_jit", f"def {sig}:", f'    """{doc}"""']
        for f in fams:
            fn = getattr(f, role)
            if fn is None:
                continue
            out.append(f"    if FAMS & F_{_const(f.name)[2:]}:")
            out.append(f"        if kind == {_const(f.name)}:")
            out.append(f"            return {fn.__name__}({_args(sig, f.reals)})")
        out.append("    return exact" if role == "paper_reb" else "    return np.nan")
        out.append("")
    return "\n".join(out)


def target() -> Path:
    return Path(__file__).resolve().parent.parent / "kernels" / "dispatch.py"


def main() -> int:
    """Rewrite the dispatch module from the registry. Run with ``UEFAST_CODEGEN=1`` (families
    then register without the check that the dispatch already knows their code)."""
    from uefast.measures import FAMILIES

    target().write_text(render(FAMILIES))
    print(f"wrote {target()} ({len(FAMILIES)} families)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
