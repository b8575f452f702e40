"""Issue 32 ("Bounded on every front"): the checks the CLI, the window and the notebook share.

Each refusal is one sentence (a ValueError) that names what was asked and what to change,
raised before any work: a requests file's odd lines, the serving run's size, block sizes,
temperatures, config integers, NaN weights under sampling.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvstudio.engine.serving.requests import read_request_lines


def _requests_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.txt"
    path.write_text(text, encoding="utf-8")
    return path


# ---- case 7: a requests file's lines -----------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("@" + "9" * 5000 + " hi", "line 2: '@99999999999999999999' is not an arrival step"),
        ("+5", "line 2: '+5' has no question after it"),
        ("@3 +4", "line 2: '@3 +4' has no question after it"),
        ("+abc hi", "line 2: '+abc' is not a token budget"),
        ("@3 +x 질문", "line 2: '+x' is not a token budget"),
        ("+ 질문", "line 2: '+' is not a token budget"),
        ("+" + "9" * 5000 + " hi", "line 2: '+99999999999999999999' is not a token budget"),
    ],
    ids=["huge-arrival", "bare-budget", "arrival-and-budget", "word-budget", "x-budget",
         "empty-budget", "huge-budget"],
)
def test_every_odd_request_line_is_refused_with_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = _requests_file(tmp_path, f"첫 질문\n{line}\n")
    with pytest.raises(ValueError) as caught:
        read_request_lines(path)
    text = str(caught.value)
    assert text.startswith(f"{path}, line 2: ") and message in text, text
    assert "\n" not in text and "4300" not in text and len(text) < 300


def test_a_budget_before_the_question_still_reads(tmp_path: Path) -> None:
    lines = read_request_lines(_requests_file(tmp_path, "@3 +4 질문 +5\n+7 둘째\n"))
    assert [(r.arrival, r.max_new_tokens, r.text) for r in lines] == [
        (3, 4, "질문 +5"), (0, 7, "둘째")]
