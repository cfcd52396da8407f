"""The README's Python examples run as written (in a folder holding the small files they name)."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no ```python block"
    # the files the TREC-style example reads: two runs and their qrels
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 d{d} {(d * q) % 3}\n" for q in range(1, 6) for d in range(8)))
    for name, shift in (("a.run", 0), ("b.run", 3)):
        (tmp_path / name).write_text("".join(
            f"{q} Q0 d{d} {r + 1} {float(8 - r)} {name[0]}\n"
            for q in range(1, 6) for r, d in enumerate([(i + shift) % 8 for i in range(8)])))
    monkeypatch.chdir(tmp_path)
    seen: dict = {}  # every block runs in a fresh scope; the names they define, checked below
    for code in blocks:
        scope: dict = {}
        exec(compile(code, str(README), "exec"), scope)
        seen.update(scope)
    scope = seen
    assert scope["means"].num_rows == 4 * 3
    assert scope["res"].num_rows == 2 * 5 * 3
    assert {"nDCG@10", "AP:ue_v2", "nDCG@10:value", "AP:reb"} <= set(scope["by_query"].columns)
