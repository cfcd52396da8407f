"""What a command process imports at start-up (benchmarks/RESULTS_startup.md): ``import uefast``
loads no engine, ``uefast trec_eval`` loads neither SciPy's ``linalg`` (Numba's BLAS probe,
deferred by :func:`uefast.cli._startup.defer_numba_blas_probe`), nor ``pyarrow.compute``, nor the
evaluation engine; Numba's BLAS users still work after the deferral, with the same results; the
lazy ``uefast.evaluate`` stays the function when the module of that name is imported; ``uefast
trec_eval`` / ``ndeval`` run as a process (ended by ``os._exit``) write what they write
in-process. Each check runs in a fresh interpreter (the module table of this one is shared by
every test)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _python(code: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_uefast_loads_no_engine():
    got = _python("import sys, json, uefast\n"
                  "print(json.dumps({m: m in sys.modules for m in "
                  "('numba', 'pyarrow', 'scipy', 'uefast.engine')}))")
    assert got == {"numba": False, "pyarrow": False, "scipy": False, "uefast.engine": False}


def test_lazy_evaluate_stays_the_function():
    got = _python(
        "import json, uefast\n"
        "from uefast.evaluate import _build_table\n"    # imports the module uefast.evaluate first
        "import uefast.evaluate as ev\n"
        "from uefast import evaluate, aggregate, parse_measure, Measure\n"
        "print(json.dumps([callable(uefast.evaluate), uefast.evaluate is evaluate, ev is evaluate,\n"
        "                  evaluate.__module__, aggregate.__module__, str(parse_measure('AP')),\n"
        "                  Measure.__module__, sorted(set(uefast.__all__) - set(dir(uefast)))]))")
    assert got == [True, True, True, "uefast.evaluate", "uefast.evaluate", "AP",
                   "uefast.measures._parse", []]


def test_trec_eval_command_imports(tmp_path):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n")
    run.write_text("1 Q0 d1 1 0.9 r\n1 Q0 d2 2 0.5 r\n2 Q0 d4 1 0.7 r\n2 Q0 d3 2 0.1 r\n")
    got = _python(
        "import contextlib, io, json, sys\n"
        "from uefast.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    code = main(['trec_eval', '-m', 'map', sys.argv[1], sys.argv[2]])\n"
        "print(json.dumps([code, buf.getvalue(), {m: m in sys.modules for m in\n"
        "    ('scipy.linalg', 'pyarrow.compute', 'uefast.engine', 'uefast.cli.cmd_evaluate')}]))",
        str(qrels), str(run))
    code, text, mods = got
    assert code == 0
    # AP: topic 1 = 1.0; topic 2: d3 relevant at rank 2 -> 0.5; mean 0.75
    assert text == "map                   \tall\t0.7500\n"
    assert mods == {"scipy.linalg": False, "pyarrow.compute": False, "uefast.engine": False,
                    "uefast.cli.cmd_evaluate": False}


def test_blas_after_the_deferred_probe():
    """After the deferral Numba's flag is what the probe gives with SciPy installed, ``np.dot``
    compiles (importing SciPy's BLAS then) and ``np.correlate`` of floats takes the BLAS path
    (``_dot_wrap``), as without the deferral; both equal NumPy's results."""
    got = _python(
        "import json, sys\n"
        "from uefast.cli._startup import defer_numba_blas_probe\n"
        "done = defer_numba_blas_probe()\n"
        "hidden = 'scipy.linalg' in sys.modules\n"
        "import numba, numpy as np, numba.np.arraymath as am\n"
        "from numba.core import types\n"
        "f = numba.njit(lambda a, b: np.dot(a, b))\n"
        "a = np.arange(5.0); b = np.linspace(0.1, 0.9, 5)\n"
        "inner = am._get_inner_prod(types.float64, types.float64).__name__\n"
        "print(json.dumps([done, hidden, am._HAVE_BLAS, float(f(a, b)) == float(np.dot(a, b)),\n"
        "                  'scipy.linalg' in sys.modules, inner]))")
    assert got == [True, False, True, True, True, "_dot_wrap"]


def test_deferral_is_a_no_op_once_numba_target_is_loaded():
    got = _python(
        "import json\n"
        "import numba.np.arraymath\n"
        "from uefast.cli._startup import defer_numba_blas_probe\n"
        "print(json.dumps(defer_numba_blas_probe()))")
    assert got is False


def test_version_and_help_import_no_numba():
    got = _python(
        "import contextlib, io, json, sys\n"
        "from uefast.cli import main\n"
        "codes = []\n"
        "for argv in (['--version'], ['--help'], ['evaluate', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit as exc:\n"
        "            codes.append(exc.code)\n"
        "print(json.dumps([codes, 'numba' in sys.modules, 'pyarrow' in sys.modules]))")
    assert got == [[0, 0, 0], False, False]


def _files(tmp_path):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"{t} 0 d{d} {d % 3}\n" for t in range(1, 40) for d in range(30)))
    run.write_text("".join(f"{t} Q0 d{d} {d} {1.0 / (d + 1)} r\n" for t in range(1, 40) for d in range(25)))
    return str(qrels), str(run)


def _in_process(argv):
    import contextlib
    import io

    from uefast.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))


def test_trec_eval_process_exit_flushes_everything(tmp_path):
    """``python -m uefast trec_eval`` ends with ``os._exit`` after flushing: the same bytes and
    exit code as the command run in-process, to stdout and to ``--output``; an error's line on
    stderr and trec_eval's exit status."""
    qrels, run = _files(tmp_path)
    for argv in (["trec_eval", "-q", qrels, run], ["trec_eval", "-m", "all_trec", qrels, run, run]):
        code, text = _in_process(argv)
        proc = subprocess.run([sys.executable, "-m", "uefast", *argv], env=_env(), capture_output=True,
                              timeout=600)
        assert (proc.returncode, proc.stdout.decode(), proc.stderr) == (code, text, b"")
        out = tmp_path / "out.txt"
        proc = subprocess.run([sys.executable, "-m", "uefast", *argv, "--output", str(out)], env=_env(),
                              capture_output=True, timeout=600)
        assert proc.returncode == code and out.read_text() == text
    proc = subprocess.run([sys.executable, "-m", "uefast", "trec_eval", qrels, str(tmp_path / "missing")],
                          env=_env(), capture_output=True, timeout=600)
    assert proc.returncode == 2 and b"missing" in proc.stderr and proc.stdout == b""


def test_trec_eval_process_into_a_closed_pipe(tmp_path):
    """The reader stops after one line (``| head -1``): exit 0, nothing on stderr."""
    qrels, run = _files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "uefast", "trec_eval", "-q", "-m", "all_trec", qrels, run],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 0
    assert first.count(b"\t") == 2, first
    assert err == b""


def test_ndeval_process_exit_flushes_everything(tmp_path):
    """``python -m uefast ndeval`` (also ended by ``os._exit``): the bytes and exit code of the
    command run in-process."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 1 a 1\n1 2 b 2\n1 2 c 0\n2 1 x 1\n2 3 y 1\n2 3 z 1\n")
    r.write_text("1 Q0 c 1 3 s\n1 Q0 b 2 2 s\n1 Q0 a 3 1 s\n2 Q0 z 1 5 s\n2 Q0 q 2 4 s\n")
    argv = ["ndeval", str(q), str(r)]
    code, text = _in_process(argv)
    proc = subprocess.run([sys.executable, "-m", "uefast", *argv], env=_env(), capture_output=True, timeout=600)
    assert code == 0 and text.count("\n") >= 3
    assert (proc.returncode, proc.stdout.decode(), proc.stderr) == (code, text, b"")
