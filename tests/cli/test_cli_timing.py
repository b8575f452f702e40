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
