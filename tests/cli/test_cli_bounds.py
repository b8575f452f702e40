"""Issue 32 ("Bounded on every front") on the command line: one `error:` line, exit 2, no
traceback, for every bound the window and the notebook share (``labs/bounds.py``)."""

from __future__ import annotations

import pytest

from kvstudio.cli.main import main


def _one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's mistakes
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---- case 7: one temperature rule on every command ---------------------------------------------
@pytest.mark.parametrize("value", ["-1", "1e-9", "1000"])
def test_one_temperature_rule_on_every_command(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    said = {
        command: _one_error_line(capsys, [command, "--temperature", value])
        for command in ("serving", "speculative")
    }
    for line in said.values():
        assert "Temperature must be 0 (greedy) or between 1e-06 and 100" in line, line
    rules = {line.split(": ", 2)[-1].split(" (see: ")[0] for line in said.values()}
    assert len(rules) == 1, said  # the same sentence on both
