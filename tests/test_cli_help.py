"""``uefast --help`` and every command's ``--help`` print their text and exit 0 (argparse
%-formats help strings, so a literal ``%`` in a command's HELP, "95% CI", once broke the first)."""
from __future__ import annotations

import pytest

from uefast.cli import _command_modules, main


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for mod in _command_modules():
        assert mod.NAME in out


@pytest.mark.parametrize("name", sorted(m.NAME for m in _command_modules()))
def test_command_help(name, capsys):
    try:
        code = main([name, "--help"])
    except SystemExit as exc:  # argparse's help action
        code = exc.code
    assert code in (0, None)
    assert capsys.readouterr().out.strip()
