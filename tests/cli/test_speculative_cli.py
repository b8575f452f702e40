"""`kvstudio speculative` on the shipped ko-chat with the shipped ko-draft: α, tokens per
target call measured against the formula, and `identical to greedy: yes`, really compared."""

from __future__ import annotations

import re

import pytest

from tests.cli.running import run_cli


def test_speculative_k4_is_identical_to_greedy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "speculative", "--k", "4", "--new-tokens", "24", "--repeats", "1",
        "--draft-kind", "both", "--rounds",
    )
    assert code == 0, err
    assert out.startswith("Model: ko-chat: ")
    lines = re.findall(
        r"(model|prompt-lookup) k=4: α = ([0-9.]+) .*tokens per target call ([0-9.]+) measured "
        r"vs ([0-9.]+) formula; identical to greedy: (yes|no)", out)
    assert [line[0] for line in lines] == ["model", "prompt-lookup"]
    for _, alpha, measured, formula, identical in lines:
        assert 0.0 <= float(alpha) <= 1.0
        assert 1.0 <= float(measured) <= 5.0 and 1.0 <= float(formula) <= 5.0
        assert identical == "yes"
    assert "single measurement" in out  # --repeats 1 says so
    assert "+1/−0/" in out or "−" in out  # the per-round rows show appended and cropped rows


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--k", "0"], "between 1 and 64"),
        (["--k", "1,x"], "numbers separated by commas"),
        (["--temperature", "-1"], "Temperature"),
        (["--draft", "no-such-folder"], "not a folder"),
    ],
)
def test_bad_input_is_one_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, "speculative", *argv)
    assert code == 2
    assert err.startswith("error:") and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--layers", "0"], "at least 1"), (["--hidden", "100"], "multiple of 8")],
)
def test_pretrain_size_options_are_checked(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """`train pretrain --layers/--hidden` (how ko-draft was made) refuse sizes that cannot be."""
    code, _, err = run_cli(
        capsys, "train", "pretrain", "--data", "d", "--tokenizer", "t", "--out", "o", *argv
    )
    assert code == 2 and message in err
