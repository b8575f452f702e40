"""A requests file: one question per line, each arriving at its step, to `RequestSpec`s.

Owns the file's format and every refusal, each one clear message naming the
file and the line (a `ValueError`; nothing runs):

- UTF-8 text (a BOM is fine), one request per line; blank lines are skipped.
- ``@K`` first (then a space) makes the request arrive at scheduler step K
  (default 0); ``+N`` next (then a space) gives it its own budget of N new
  tokens (default: the run's). E.g. ``@3 +48 서울에서 부산까지 얼마나 걸려?``. A
  line that starts with ``+`` (after ``@K``) must be such a budget and a question.
- At most `MAX_REQUESTS` requests and `MAX_FILE_BYTES` bytes; no NUL bytes (a
  binary file); every prompt, with the system prompt and the chat template,
  plus its budget within the model's positions.

`read_request_lines` reads and checks the file; `build_requests` turns its
lines into token ids (ChatML with the shared system prompt when the tokenizer
has the chat tokens, as the chat model was trained).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kvstudio.engine.serving.records import RequestSpec
from kvstudio.engine.small_files import read_text
from kvstudio.engine.tokenizer import TextTokenizer

MAX_FILE_BYTES = 1024 * 1024  # a few hundred questions are a few KB
MAX_REQUESTS = 256  # requests in one file: a lecture shows a handful
MAX_ARRIVAL_STEP = 100_000  # @K
MAX_NEW_TOKENS = 4096  # +N
EXPECTED = "a requests file (UTF-8 text, one question per line)"
FORMAT = "one question per line in UTF-8, '@K ' first to make it arrive at step K"

_PREFIX = re.compile(r"@(\S*)\s*")  # "@K " at the start of a line
_BUDGET = re.compile(r"\+(\S*)\s*")  # "+N " after it (anything after a '+' is checked)
_MAX_DIGITS = 7  # more digits than any bound here: refused before int() reads them


@dataclass(frozen=True)
class RequestLine:
    """One request as written in the file."""

    line: int  # its line number (1, 2, …)
    text: str  # the question
    arrival: int  # @K (0 when not given)
    max_new_tokens: int | None  # +N, or None for the run's budget


def parse_request_lines(text: str, where: str) -> tuple[RequestLine, ...]:
    """The requests in `text` (a file's contents; `where` names it in messages)."""
    if "\x00" in text:
        raise ValueError(
            f"{where} holds NUL bytes: it is a binary file; write {FORMAT}."
        )
    numbered = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    lines = [(n, line) for n, line in numbered if line]
    if not lines:
        raise ValueError(f"{where} holds no requests; write {FORMAT}.")
    if len(lines) > MAX_REQUESTS:
        raise ValueError(
            f"{where} holds {len(lines):,} requests; the serving lab runs at most "
            f"{MAX_REQUESTS:,}: keep the first ones or split the file."
        )
    return tuple(_parse_line(n, line, where) for n, line in lines)


def _parse_line(number: int, line: str, where: str) -> RequestLine:
    arrival, budget, rest = 0, None, line
    prefix = _PREFIX.match(rest)
    if prefix:
        value = prefix.group(1)
        if not _digits(value) or int(value) > MAX_ARRIVAL_STEP:
            raise ValueError(
                f"{where}, line {number}: '@{value[:20]}' is not an arrival step; write @K with "
                f"K a whole number from 0 to {MAX_ARRIVAL_STEP:,}, a space, then the question."
            )
        arrival, rest = int(value), rest[prefix.end() :]
    plus = _BUDGET.match(rest)
    if plus:  # a line that starts with '+' (after @K) names a budget, or is refused
        digits = plus.group(1)
        if not _digits(digits) or not 1 <= int(digits) <= MAX_NEW_TOKENS:
            raise ValueError(
                f"{where}, line {number}: '+{digits[:20]}' is not a token budget; write "
                f"+N with N from 1 to {MAX_NEW_TOKENS:,}, a space, then the question."
            )
        budget, rest = int(digits), rest[plus.end() :]
    if not rest.strip():
        raise ValueError(f"{where}, line {number}: '{line[:40]}' has no question after it.")
    return RequestLine(number, rest.strip(), arrival, budget)


def _digits(text: str) -> bool:
    """ASCII digits, few enough that int() reads them (5,000 digits are Python's error)."""
    return text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS


def read_request_lines(path: Path) -> tuple[RequestLine, ...]:
    """The requests in the file at `path` (size-capped, UTF-8, checked line by line)."""
    text = read_text(Path(path), MAX_FILE_BYTES, EXPECTED, encoding="utf-8-sig")
    return parse_request_lines(text, str(path))


def prompt_ids(
    tokenizer: TextTokenizer, question: str, system: str, chat: bool
) -> tuple[int, ...]:
    """What the model is fed for `question`: ChatML (with `system`) or plain text."""
    if chat:
        return tuple(tokenizer.chat_ids(question, system or None))
    return tuple(tokenizer.encode(f"{system}\n{question}" if system else question))


def build_requests(
    lines: Sequence[RequestLine],
    tokenizer: TextTokenizer,
    *,
    system: str,
    max_new_tokens: int,
    max_positions: int,
    chat: bool = True,
    where: str = "the requests file",
) -> tuple[RequestSpec, ...]:
    """`RequestSpec`s from the file's lines; ValueError for a line past the model's positions."""
    requests = []
    for index, line in enumerate(lines):
        ids = prompt_ids(tokenizer, line.text, system, chat)
        budget = line.max_new_tokens or max_new_tokens
        if not ids:
            raise ValueError(f"{where}, line {line.line}: the question encodes to no tokens.")
        if len(ids) + budget > max_positions:
            raise ValueError(
                f"{where}, line {line.line}: its prompt is {len(ids):,} tokens (system prompt "
                f"and template included) + {budget:,} new = {len(ids) + budget:,} positions, "
                f"past the model's {max_positions:,}; shorten the question or the system "
                "prompt, or lower the token budget."
            )
        requests.append(RequestSpec(index, line.text, ids, line.arrival, budget))
    return tuple(requests)
