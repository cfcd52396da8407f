"""One options object (uefast.options.EvalOptions) for every front end; the backend seam; no
import between evaluate and streaming."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from uefast.backends import BACKENDS, get_backend
from uefast.errors import InputError
from uefast.options import EvalOptions

SRC = Path(__file__).resolve().parent.parent / "src" / "uefast"


@pytest.mark.parametrize("kw,match", [
    (dict(ties="random"), r"`ties` must be one of \['trec_eval', 'input', 'expected'\], got 'random'"),
    (dict(reb="approx"), r"`reb` must be one of \['exact', 'paper'\]"),
    (dict(degenerate="skip"), "`degenerate` must be one of"),
    (dict(queries="all"), "`queries` must be one of"),
    (dict(negative_labels="drop"), "`negative_labels` must be one of"),
    (dict(backend="tpu"), "`backend` must be one of"),
    (dict(rel_level=0), "`rel_level` must be an integer >= 1, got 0"),
    (dict(rel_level=True), "`rel_level` must be an integer >= 1, got True"),
    (dict(reb_universe="collection"), "needs `collection_size`"),
])
def test_every_option_is_checked_once_with_its_name(kw, match):
    with pytest.raises(InputError, match=match):
        EvalOptions(**kw).validated()


def test_validated_options_parse_measures_and_record_settings():
    o = EvalOptions(measures="nDCG@10 F(beta=2)@5", reb_universe="collection",
                    collection_size=1000).validated()
    assert [str(m) for m in o.measures] == ["nDCG@10", "F(beta=2.0)@5"]
    s = o.settings("trec")
    assert s["reb_universe"] == "collection" and s["collection_size"] == 1000
    assert s["style"] == "trec" and s["measures"] == ["nDCG@10", "F(beta=2.0)@5"]


def test_collection_universe_refuses_measures_without_closed_form():
    with pytest.raises(InputError, match="'Q': REB over a collection"):
        EvalOptions(measures=["Q"], reb_universe="collection", collection_size=10).validated()


def test_backend_seam():
    assert get_backend("cpu").unavailable_reason() is None
    assert set(BACKENDS) >= {"cpu", "cuda"}
    with pytest.raises(InputError, match=r"`backend` must be one of \['cpu', 'cuda'\]"):
        get_backend("tpu")


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_streaming_does_not_import_evaluate():
    for f in (SRC / "streaming").glob("*.py"):
        assert "uefast.evaluate" not in _imports(f), f.name
