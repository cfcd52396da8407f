"""Several systems pipelined on the GPU (:mod:`uefast.gpu.pipeline`): values equal the CPU
engine's for every system and tie policy (int32 and int64 score keys mixed, segments too costly
to count, a NaN score), and the stream protocol that lets system s+1's copy overlap system s's
kernel orders every buffer's reuse after its last reader. One test body per backend: emulated
everywhere, a real GPU (marked ``gpu``) where one exists; the kernel path runs in numba's CUDA
simulator in ``tests/cuda_simulator_counting.py`` (its tables have three score columns, so every
call there goes through this pipeline)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast
import uefast.gpu.counting as counting
import uefast.gpu.pipeline as pipeline
import uefast.gpu.ranking as gpu_ranking
from gpu_counting_ref import MEASURES, small_table
from uefast.errors import InputError

TOL = 1e-12


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    else:
        monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param


def _systems(seed: int) -> pa.Table:
    """small_table's three columns plus a float32-exact one (int32 keys) and a copy of the
    first (int64 keys), so the two key widths alternate across the pipeline's two slots."""
    t = small_table(seed, nq=25, max_docs=60)
    rng = np.random.default_rng(seed)
    t = t.append_column("s_f32", pa.array(rng.normal(size=t.num_rows).astype(np.float32)
                                          .astype(np.float64)))
    return t.append_column("s_again", t["s_distinct"])


@pytest.mark.parametrize("ties", ["trec_eval", "input", "expected"])
@pytest.mark.parametrize("max_work", [counting.COUNT_MAX_WORK, 40])
def test_pipelined_systems_match_cpu(cuda_mode, ties, max_work, monkeypatch):
    """Five systems in one pipeline; with ``COUNT_MAX_WORK`` 40 most segments go to the sort
    kernel after the pipeline, per system."""
    monkeypatch.setattr(counting, "COUNT_MAX_WORK", max_work)
    seen = []
    real = pipeline.rank_systems_counting
    monkeypatch.setattr(pipeline, "rank_systems_counting",
                        lambda *a: seen.append(len(a[4])) or real(*a))
    t = _systems(2)
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")
    assert seen == [5]
    for c in ("system", "qid", "measure", "iub", "reb"):
        assert a[c].equals(b[c]), c
    assert np.abs(a["value"].to_numpy() - b["value"].to_numpy()).max() <= TOL


def test_a_nan_score_names_its_column(cuda_mode):
    t = _systems(3)
    s = t["s_f32"].to_numpy().copy()
    s[7] = np.nan
    t = t.set_column(t.column_names.index("s_f32"), "s_f32", pa.array(s))
    with pytest.raises(InputError, match="s_f32"):
        uefast.evaluate(t, measures=MEASURES, backend="cuda")


class _Recorder(pipeline._HostDevice):
    """The emulated device, logging every stream operation with the event it concerns."""

    def __init__(self):
        self.log = []
        self._n = 0

    def event(self):
        self._n += 1
        return f"e{self._n}"

    def stream(self):
        self._n += 1
        return f"s{self._n}"

    def record(self, event, stream):
        self.log.append(("record", event, stream))

    def wait(self, event, stream):
        self.log.append(("wait", event, stream))

    def host_wait(self, event):
        self.log.append(("host_wait", event))

    def h2d(self, dst, src, stream):
        self.log.append(("h2d", stream))
        dst[...] = src

    def launch(self, nblocks, tpb, stream, args):
        self.log.append(("launch", stream))
        super().launch(nblocks, tpb, stream, args)


def test_stream_protocol(monkeypatch):
    """Copies on one stream, kernels on another; kernel s waits for copy s; copy s (s >= 2)
    waits for kernel s-2 (the key buffer's last reader), and the host waits for copy s-2 before
    restaging: no buffer is overwritten while it is read."""
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    rec = _Recorder()
    monkeypatch.setattr(pipeline, "_HostDevice", lambda: rec)
    t = small_table(1, nq=6, max_docs=10)  # four systems, all with int64 keys (one buffer each)
    t = t.select(["qid", "docid", "label", "s_distinct", "s_tied"])
    t = t.append_column("s3", t["s_tied"]).append_column("s4", t["s_distinct"])
    uefast.evaluate(t, measures=["AP"], backend="cuda")
    log = rec.log
    h2d = [i for i, e in enumerate(log) if e[0] == "h2d"]
    launches = [i for i, e in enumerate(log) if e[0] == "launch"]
    assert len(h2d) == len(launches) == 4
    copy_s, comp_s = log[h2d[0]][1], log[launches[0]][1]
    assert copy_s != comp_s and all(log[i][1] == copy_s for i in h2d)
    assert all(log[i][1] == comp_s for i in launches)
    copied = [log[i + 1][1] for i in h2d]  # the event recorded right after each copy
    assert all(log[i + 1][0] == "record" for i in h2d)
    consumed = [log[i + 1][1] for i in launches]
    for s, i in enumerate(launches):
        assert ("wait", copied[s], comp_s) in log[h2d[s]:i]
    for s in range(2, 4):
        assert ("wait", consumed[s - 2], copy_s) in log[launches[s - 1]:h2d[s]]
        assert ("host_wait", copied[s - 2]) in log[launches[s - 1]:h2d[s]]
