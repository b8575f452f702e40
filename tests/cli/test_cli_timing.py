"""The command line's times follow the one policy: ms/token is the median decode step,
tokens/s = 1000 ÷ ms/token, and each time says whether it is a median of k rounds
or a single measurement."""

from __future__ import annotations

import pytest

from kvstudio.cli.main import main


def _row(out: str, label: str) -> list[str]:
    return next(line for line in out.splitlines() if line.strip().startswith(label)).split()


def test_compare_times_are_medians_of_rounds_or_said_single(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--prompt-tokens", "12", "--new-tokens", "5", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "median of 3 rounds" in out and "medians of 3 rounds" in out
    ms = _row(out, "decode (ms/token)")
    per_s = _row(out, "tokens/s")
    for col in (2, 3):  # cached, recompute: tokens/s follows from ms/token
        assert float(per_s[col - 1].replace(",", "")) == pytest.approx(
            1000 / float(ms[col].replace(",", "")), rel=0.02, abs=1)
    assert main(["compare", "--prompt-tokens", "12", "--new-tokens", "4", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "single measurement" in out and "rounds" not in out


def test_sweep_ms_per_token_leaves_the_prefill_apart(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--values", "4,8", "--fixed", "5"]) == 0
    out = capsys.readouterr().out
    assert "TTFT ms" in out and "tokens/s" in out and "prefill apart" in out


def test_a_logged_progress_ends_on_the_last_item_not_the_last_tick(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Off a terminal a line is written every 10 s; the log then ends on the run's last
    progress (100 %), not on whatever the last tick saw (99 % in the issue, #33)."""
    from kvstudio.cli.common import ProgressLine
    from kvstudio.labs.common import Progress

    now = [0.0]
    line = ProgressLine(clock=lambda: now[0])
    line.tty = False
    for done in range(1, 101):
        now[0] = done * 0.5  # a tick every 20 items
        line(Progress("compare", "cached", done, 100))
    line.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == "  compare, cached: 100 of 100 (100%)"
    assert lines[-2] == "  compare, cached: 80 of 100 (80%)"
    quiet = ProgressLine(clock=lambda: 0.0)  # a short run: no line at all, not even the last
    quiet.tty = False
    quiet(Progress("compare", "cached", 1, 1))
    quiet.close()
    assert capsys.readouterr().err == ""
