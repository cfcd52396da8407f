"""Compile the suite's big Numba kernels once, split between the pytest-xdist workers.

With ``-n 2`` and an empty Numba cache, both workers would start by compiling the same kernels
(the evaluate kernels of every family, the trec_eval readers, ...) at the same time, each ~10-40
s of CPU. Instead each worker first compiles its share of them, on tiny inputs through the
public entry points (``uefast.evaluate``, the CLI), writes them to the shared on-disk cache
(``NUMBA_CACHE_DIR``), and waits until the other workers are done too; the tests then load the
kernels from the cache. Shares are balanced by the compile CPU measured in
benchmarks/RESULTS_tests.md. A share that fails (an API changed) is skipped: the tests compile
what they need themselves, as without this module. Nothing here runs outside xdist, on a narrow
selection of tests, or when ``UEFAST_TEST_PREWARM=0``.

``lock_numba_cache`` serialises Numba's cache index and data writes between processes: two
processes saving different signatures of one function at the same moment can otherwise leave
an index entry pointing at the other signature's data (numba.core.caching.IndexDataCacheFile
reads the index, picks the first free data file name, then writes both without a lock).
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

import pyarrow as pa

#: a run collecting fewer test files than this is a narrow one: no prewarming
MIN_FILES = 20
#: the longest a worker waits for the others' shares (seconds)
WAIT_S = 900


def _letor(string_docids: bool):
    docids = [f"d{i}" for i in range(6)] if string_docids else list(range(6))
    return pa.table({"qid": [1, 1, 1, 2, 2, 2], "docid": docids, "label": [2, 0, 1, 1, 0, 0],
                     "s": [0.5, 0.5, 0.1, 0.3, 0.2, 0.9]})


def _evaluate():
    """The chunk kernels of every family (tests/conftest.py sets UEFAST_KERNEL_FAMILIES=all),
    int8 labels, integer and string docids, every tie policy the suite uses; int64 labels (labels
    beyond int8: test_inputs.py's exponential-gain and canonical-type tests)."""
    import uefast

    for string_docids in (False, True):
        for ties in ("trec_eval", "expected"):
            uefast.evaluate(_letor(string_docids), measures=["nDCG@10", "AP"], ties=ties)
    wide = _letor(False)
    wide = wide.set_column(2, "label", pa.array([200, 0, 1, 1, 0, 0], pa.int64()))
    uefast.evaluate(wide, measures=["nDCG@10", "AP"])


def _text():
    import pyarrow as pa

    import uefast.text

    texts = pa.table({"doc_id": ["d1", "d1"], "system": ["A", "B"],
                      "candidate": ["the cat sat on the mat", "a dog barked"],
                      "reference": ["the cat was on the mat", "the cat was on the mat"],
                      "source": ["the cat sat on the mat while a dog barked at the cat"] * 2})
    uefast.text.evaluate(texts, ["ROUGE-1", "ROUGE-2", "ROUGE-L"])


def _cli(*argv):
    from uefast.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = main([str(a) for a in argv])
    if rc:
        raise RuntimeError(f"uefast {argv[0]}: exit status {rc}")


def _trec_files(tmp: Path):
    q = tmp / "q.txt"
    q.write_text("301 0 a 1\n301 0 b 0\n301 0 c 2\n302 0 x 1\n302 0 y 0\n")
    r = tmp / "r.txt"
    r.write_text("301 Q0 a 1 1.5 s\n301 Q0 b 2 1.5 s\n301 Q0 z 3 0.2 s\n"
                 "302 Q0 y 1 3 s\n302 Q0 x 2 2 s\n")
    return q, r


def _trec_eval(tmp: Path):
    """The fused trec_eval readers and measures (default measures, -q, -c, all measures)."""
    q, r = _trec_files(tmp)
    _cli("trec_eval", q, r)
    _cli("trec_eval", "-q", "-c", "-m", "all_trec", q, r)


def _diversity(tmp: Path):
    """The intent-aware batch kernel and ndeval's scan."""
    q = tmp / "dq.txt"
    q.write_text("1 1 a 1\n1 2 b 2\n1 2 c 0\n2 1 x 1\n2 3 y -2\n2 3 z 1\n")
    r = tmp / "dr.txt"
    r.write_text("1 Q0 c 1 3 s\n1 Q0 b 2 2 s\n1 Q0 a 3 1 s\n2 Q0 z 1 5 s\n2 Q0 q 2 4 s\n")
    _cli("evaluate", "--run", r, "--diversity-qrels", q, "-m", "alpha-nDCG@5", "RBU@5")
    q.write_text("1 1 a 1\n1 2 b 2\n1 2 c 0\n2 1 x 1\n2 3 y 0\n2 3 z 1\n")
    _cli("ndeval", q, r)


def _gpu_emulated():
    """The GPU backend's emulated passes (UEFAST_CUDA_EMULATE=1): judged, grouping, counting and
    sorting ranking."""
    import uefast
    from uefast.gpu.ranking import EMULATE_ENV

    old = os.environ.get(EMULATE_ENV)
    os.environ[EMULATE_ENV] = "1"
    try:
        for string_docids in (False, True):
            uefast.evaluate(_letor(string_docids), measures=["nDCG@10", "AP"], backend="cuda")
    finally:
        if old is None:
            os.environ.pop(EMULATE_ENV, None)
        else:
            os.environ[EMULATE_ENV] = old


#: each worker's share, by worker index modulo the number of shares
SHARES = [[_evaluate, _text], [_trec_eval, _diversity, _gpu_emulated]]


def lock_numba_cache():
    """Serialise numba's cache index/data reads and writes with an ``flock`` per index file."""
    import fcntl

    from numba.core import caching

    cls = getattr(caching, "IndexDataCacheFile", None)
    if cls is None or not all(hasattr(cls, f) for f in ("save", "load")) \
            or getattr(cls, "_uefast_tests_locked", False):
        return  # another numba layout: run unlocked rather than fail the session

    def locked(fn):
        def call(self, *args, **kwargs):
            try:
                fh = open(self._index_path + ".lock", "a")  # noqa: SIM115
            except OSError:  # no cache directory yet (a load before any save): nothing to race
                return fn(self, *args, **kwargs)
            with fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                return fn(self, *args, **kwargs)
        return call

    cls.save = locked(cls.save)
    cls.load = locked(cls.load)
    cls._uefast_tests_locked = True


def _done_dir(session) -> Path:
    """Where the workers of this run mark their shares done (one file per worker)."""
    uid = session.config.workerinput.get("testrunuid", "run")
    return Path(tempfile.gettempdir()) / f"uefast-tests-prewarm-{uid}"


def cleanup(session) -> None:
    """Worker gw0 removes the marks at the end of the run (every worker is past the wait)."""
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw0":
        import shutil

        shutil.rmtree(_done_dir(session), ignore_errors=True)


def prewarm(session) -> None:
    """Run this xdist worker's share of the compilations, then wait for the other workers'."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if worker is None or count < 2 or os.environ.get("UEFAST_TEST_PREWARM") == "0":
        return
    if len({item.path for item in session.items}) < MIN_FILES:
        return
    done = _done_dir(session)
    done.mkdir(exist_ok=True)
    index = int(worker.removeprefix("gw"))
    with tempfile.TemporaryDirectory() as tmp:
        for share in range(index, len(SHARES), count):
            for step in SHARES[share]:
                try:
                    if step.__code__.co_argcount:
                        step(Path(tmp))
                    else:
                        step()
                except Exception:  # noqa: BLE001 -- an optimisation only: the tests compile it
                    pass
    (done / worker).touch()
    deadline = time.monotonic() + WAIT_S
    while len(list(done.iterdir())) < count and time.monotonic() < deadline:
        time.sleep(0.5)
