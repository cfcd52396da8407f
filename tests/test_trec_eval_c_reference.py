"""``uefast trec_eval`` against C trec_eval 10.0 and 9.0.8 built from their source, byte for byte.

Source: ``$UEFAST_TREC_EVAL_SRC``, a git repository of https://github.com/usnistgov/trec_eval
(a clone or a bare mirror holding the tags ``v10.0`` and ``v9.0.8``), or a folder with the two
unpacked source trees as ``v10.0/`` and ``v9.0.8/``.  Each version is built once per session
with ``make`` into pytest's temporary folder; the tests skip where the source, ``git``, ``make``
or a C compiler is missing.  trec_eval's source is not part of this repository.

Compared: stdout bytes and the exit status, on tiny hand-made cases (every option that changes
which topics are evaluated) and, marked slow, on the 17 TREC 2003 Robust runs and the 8 TREC
2012 Web baselines under ``$UEFAST_SHARED_DATA`` with 17 option sets (850 runs of each binary).
uefast runs in process (``cmd_trec_eval.main``), as the ``uefast`` command does.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from uefast.cli import cmd_trec_eval
from uefast.errors import UefastError

VERSIONS = ("10.0", "9.0.8")
SRC = os.environ.get("UEFAST_TREC_EVAL_SRC")


def _source_tree(version: str, dest: Path) -> Path | None:
    """The unpacked source of ``version`` (a folder of SRC, or ``git archive`` of its tag)."""
    src = Path(SRC)
    if (src / f"v{version}" / "Makefile").exists():
        return src / f"v{version}"
    if shutil.which("git") is None:
        return None
    tree = dest / f"src-v{version}"
    tree.mkdir(parents=True, exist_ok=True)
    arc = subprocess.run(["git", "--git-dir", str(src / ".git" if (src / ".git").exists() else src),
                          "archive", f"v{version}"], capture_output=True)
    if arc.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=arc.stdout, check=True)
    return tree


@pytest.fixture(scope="session")
def c_trec_eval(tmp_path_factory) -> dict[str, Path]:
    """``{version: path of the built trec_eval binary}``."""
    if not SRC or not Path(SRC).exists():
        pytest.skip("set UEFAST_TREC_EVAL_SRC to a trec_eval git repository (tags v10.0, v9.0.8)")
    if shutil.which("make") is None or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("make and a C compiler are needed to build trec_eval")
    dest = tmp_path_factory.mktemp("trec_eval_c")
    out = {}
    for v in VERSIONS:
        tree = _source_tree(v, dest)
        if tree is None:
            pytest.skip(f"trec_eval v{v} source not found in {SRC}")
        build = dest / f"build-v{v}"
        shutil.copytree(tree, build)
        made = subprocess.run(["make", "-C", str(build), "trec_eval"], capture_output=True, text=True)
        if made.returncode != 0 or not (build / "trec_eval").exists():
            pytest.skip(f"building trec_eval v{v} failed: {made.stderr[-300:]}")
        out[v] = build / "trec_eval"
    return out


def _uefast(argv: list[str]) -> tuple[int, bytes]:
    """Exit status and stdout bytes of ``uefast trec_eval ARGV`` (as ``uefast.cli.main`` maps
    errors: a ``UefastError``'s ``exit_status``, else 2)."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = cmd_trec_eval.main(argv)
    except UefastError as exc:
        rc = getattr(exc, "exit_status", 2)
    return rc, buf.getvalue().encode()


def _c(binary: Path, argv: list[str]) -> tuple[int, bytes]:
    done = subprocess.run([str(binary), *argv], capture_output=True)
    return done.returncode, done.stdout


def _same(c_trec_eval, version: str, argv: list[str]):
    """(C status, uefast status, C stdout, uefast stdout) where they differ, else None."""
    c_rc, c_out = _c(c_trec_eval[version], argv)
    u_rc, u_out = _uefast(argv + ["--trec-eval-version", version])
    if (c_rc, c_out) == (u_rc, u_out):
        return None
    return c_rc, u_rc, c_out[-400:], u_out[-400:]


# -- tiny cases: topics missing from the run, topics missing from the qrels, relevance levels --------
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 c 1\n2 0 d 2\n2 0 e 3\n3 0 f 0\n4 0 g 2\n4 0 g2 1\n"
RUNS = {
    "all": "1 Q0 a 1 3.0 r\n1 Q0 x 2 2.0 r\n1 Q0 c 3 1.0 r\n2 Q0 d 1 2.0 r\n2 Q0 e 2 1.0 r\n"
           "3 Q0 f 1 1.0 r\n4 Q0 g 1 1.0 r\n",
    "missing": "1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n4 Q0 g2 1 1.0 r\n",     # topics 2, 3 not retrieved
    "extra": "1 Q0 a 1 2.0 r\n9 Q0 x 2 1.0 r\n2 Q0 c 1 1.0 r\n3 Q0 y 1 1.0 r\n4 Q0 g 1 1.0 r\n",
    "unjudged": "1 Q0 x 1 2.0 r\n1 Q0 y 2 1.0 r\n2 Q0 d 1 1.0 r\n3 Q0 f 1 1.0 r\n4 Q0 z 1 1.0 r\n",
    "none": "7 Q0 a 1 2.0 r\n",                                          # no topic in common
}
TINY_OPTIONS = ["-q", "-q -c", "-q -J", "-q -c -J", "-q -c -l 2", "-q -c -l 3", "-q -l 2 -J -c",
                "-q -c -M 1", "-q -c -l 0", "-n -c -l 2"]


@pytest.mark.parametrize("version", VERSIONS)
def test_tiny_cases_byte_for_byte(c_trec_eval, version, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text(QRELS)
    bad = []
    for name, text in RUNS.items():
        run = tmp_path / name
        run.write_text(text)
        for opts in TINY_OPTIONS:
            for measures in (["-m", "all_trec"], ["-m", "num_q", "-m", "num_rel", "-m", "map"]):
                argv = shlex.split(opts) + measures + [str(qrels), str(run)]
                diff = _same(c_trec_eval, version, argv)
                if diff:
                    bad.append((name, opts, measures[1], diff))
    assert bad == []


# -- real runs: 25 runs x 17 option sets x 2 versions --------------------------------------------------
OPTION_SETS = ["", "-q", "-c", "-m all_trec", "-q -m all_trec", "-c -m all_trec", "-q -c -m all_trec",
               "-c -l 2", "-c -l 3", "-q -c -l 2 -m all_trec", "-M 100", "-J", "-c -J -m all_trec",
               "-q -n -m ndcg_cut.5,10,20", "-m P.5,10 -m recall.100 -m map_cut.100", "-N 100000 -m all_trec",
               "-q -c -M 100 -l 2 -m all_trec"]


def _real_pairs(tmp: Path) -> list[tuple[Path, Path]]:
    robust = SHARED_DATA / "trec2003_robust"
    web = SHARED_DATA / "trec_web2012_baseline_runs"
    web_q = SHARED_DATA / "trec_web_diversity_2009_2014" / "2012" / "qrels.adhoc.txt"
    if not (robust.exists() and web.exists() and web_q.exists()):
        pytest.skip(f"TREC 2003 Robust / 2012 Web data not found under {SHARED_DATA}")
    pairs = []
    for gz in sorted((robust / "runs").glob("input.*.gz")):  # trec_eval reads plain files only
        plain = tmp / gz.stem
        plain.write_bytes(gzip.decompress(gz.read_bytes()))
        pairs.append((robust / "robust03_qrels.txt", plain))
    pairs += [(web_q, p) for p in sorted(web.glob("*/*.txt"))]
    assert len(pairs) == 25
    return pairs


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_real_runs_byte_for_byte(c_trec_eval, version, tmp_path):
    bad = []
    for qrels, run in _real_pairs(tmp_path):
        for opts in OPTION_SETS:
            diff = _same(c_trec_eval, version, shlex.split(opts) + [str(qrels), str(run)])
            if diff:
                bad.append((run.name, opts, diff[:2]))
    assert bad == []
