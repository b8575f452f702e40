"""The requests file: its format, and one clear message for each bad file (nothing runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvstudio.engine.serving.request_file import (
    MAX_REQUESTS,
    RequestLine,
    build_requests,
    read_request_lines,
)
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.serving.lab import EXAMPLE_REQUESTS


def write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "requests.txt"
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_lines_arrivals_and_budgets(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff첫 질문\n\n@3 둘째 질문\r\n@0 +48 셋째 질문 +5\n  @12   넷째  \n")
    assert read_request_lines(path) == (
        RequestLine(1, "첫 질문", 0, None),
        RequestLine(3, "둘째 질문", 3, None),
        RequestLine(4, "셋째 질문 +5", 0, 48),
        RequestLine(5, "넷째", 12, None),
    )


def test_the_shipped_example_has_four_to_eight_questions_arriving_apart() -> None:
    lines = read_request_lines(EXAMPLE_REQUESTS)
    assert 4 <= len(lines) <= 8
    assert len({line.arrival for line in lines}) > 2
    assert len({len(line.text) for line in lines}) == len(lines)  # different lengths


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("", "holds no requests"),
        ("\n  \n\t\n", "holds no requests"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "is not UTF-8 text"),
        ("질문\x00질문\n", "holds NUL bytes: it is a binary file"),
        ("안녕\n" * 100_000, f"holds 100,000 requests; the serving lab runs at most "
                            f"{MAX_REQUESTS}"),
        ("@x 질문\n", "line 1: '@x' is not an arrival step"),
        ("질문\n@-1 질문\n", "line 2: '@-1' is not an arrival step"),
        ("@999999 질문\n", "'@999999' is not an arrival step"),
        ("@3\n", "line 1: '@3' has no question after it"),
        ("@3 +0 질문\n", "line 1: '+0' is not a token budget"),
    ],
    ids=["empty", "blank", "binary", "nul", "100k-lines", "bad-k", "negative-k", "huge-k",
         "no-question", "zero-budget"],
)
def test_each_bad_file_has_one_clear_message(tmp_path: Path, data: bytes | str,
                                             message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match="^" + str(path)) as caught:
        read_request_lines(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_line_past_the_context_is_refused(tmp_path: Path, tokenizer: TextTokenizer) -> None:
    path = write(tmp_path, "짧은 질문\n" + "아주 긴 질문 " * 200 + "\n")
    lines = read_request_lines(path)
    with pytest.raises(ValueError, match=r"line 2: its prompt is [\d,]+ tokens \(system prompt "
                       r"and template included\) \+ 8 new = [\d,]+ positions, past the model's "
                       "512"):
        build_requests(lines, tokenizer, system="도우미", max_new_tokens=8, max_positions=512,
                       where=str(path))
    requests = build_requests(lines[:1], tokenizer, system="도우미", max_new_tokens=8,
                              max_positions=512)
    assert requests[0].prompt_ids == tuple(tokenizer.chat_ids("짧은 질문", "도우미"))


def test_a_folder_or_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a regular file"):
        read_request_lines(tmp_path)
    with pytest.raises(ValueError, match="does not exist; choose a requests file"):
        read_request_lines(tmp_path / "nothing.txt")
