"""The adapters' optional dependencies: without Dask / pyspark every public function of
uefast.dask / uefast.spark raises uefast's MissingDependencyError, one line naming the extra
(the import is made to fail by a ``None`` entry in ``sys.modules``, as for a missing package);
runs whether or not the extras are installed."""
from __future__ import annotations

import sys

import pytest

from uefast.errors import MissingDependencyError

CALLS = ["evaluate", "aggregate", "compare", "tukey_hsd", "swap_rate"]


def _hide(monkeypatch, *modules: str) -> None:
    for m in list(sys.modules):
        if any(m == x or m.startswith(x + ".") for x in modules):
            monkeypatch.delitem(sys.modules, m)
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)  # `import m` raises ImportError


@pytest.mark.parametrize("fn", CALLS)
@pytest.mark.parametrize("module, hidden, extra", [
    ("uefast.dask", ("dask", "dask.dataframe"), "dask"),
    ("uefast.dask", ("dask.dataframe",), "dask"),   # Dask without its DataFrame part
    ("uefast.spark", ("pyspark", "pyspark.sql"), "spark"),
])
def test_missing_extra_raises_missing_dependency_error(monkeypatch, module, hidden, extra, fn):
    import importlib

    _hide(monkeypatch, *hidden)
    monkeypatch.delitem(sys.modules, module, raising=False)
    mod = importlib.import_module(module)  # importable without the extra (lazy imports)
    with pytest.raises(MissingDependencyError) as ei:
        getattr(mod, fn)(None)
    msg = str(ei.value)
    assert f'pip install "uefast[{extra}]"' in msg
    assert "\n" not in msg
    assert not isinstance(ei.value, ImportError)
    assert ei.value.__cause__ is None  # `from None`: no chained ImportError
