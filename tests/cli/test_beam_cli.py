"""`kvstudio beam`: the step table, the returned beams, and one clear line for bad input.

``same as transformers: yes`` is checked in tests/hf/test_beam_hf.py (it needs the extra).
"""

from __future__ import annotations

import pytest

from tests.cli.running import run_cli


def test_beam_prints_steps_and_returned_beams(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "beam", "--beams", "3", "--new-tokens", "4", "--return", "2",
                           "--no-check")
    assert code == 0
    assert "K = 3 beams, length penalty 1, early stopping false, N = 4" in out
    step_zero = next(line for line in out.splitlines() if line.split()[:3] == ["0", "0", "0"])
    assert step_zero.split()[4] == "2"  # the prompt's row copied into rows 1 and 2
    returned = out.split("Returned")[1].splitlines()
    assert returned[1].lstrip().startswith("1.") and returned[2].lstrip().startswith("2.")
    assert "transformers: not checked" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--beams", "1"], "--beams"),
        (["--early-stopping", "maybe"], "not true, false or never"),
        (["--beams", "2", "--return", "3"], "Return between 1 and 2 sequences"),
        (["--prompt", "  "], "The prompt is empty"),
    ],
)
def test_bad_input_is_one_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        code, _, err = run_cli(capsys, "beam", "--no-check", *argv)
    except SystemExit as exc:  # the parser's own check: `error:` and exit 2, as main's
        code, err = int(exc.code or 0), capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error:") and message in err and "Traceback" not in err
