"""Bounds on the values a person types: every number checked the same way by every front.

Owns the value checks the `kvstudio` command, the window and the notebook
share (no argparse, no Qt, so every front can import them): a count is a
whole number as typed (``1e11`` and ``abc`` are refused), at least its lowest
value, and at most a bound that no index arithmetic can overflow
(``99999999999999999999999`` is a sentence, not a traceback from torch).
Lengths are bounded by `limits.MAX_TOKENS` here; the model's own positions
and the free memory are checked once the model is known
(`limits.check_run`). Thread counts go through `limits.check_threads`.

A refusal raises ValueError with the sentence to show (``must be at most
16,777,216 tokens, got 20,000,000``); ``kvstudio.cli.args`` turns it into
argparse's one ``error:`` line, the window's start-up does the same for its
own options.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kvstudio.engine import limits
from kvstudio.engine.records import check_temperature

MAX_COUNT = 1 << 31  # a plain count (repeats, rows to show …): far past anything useful
MAX_VALUES = 1000  # items in a comma-separated list (temperatures, sweep lengths)
MAX_SEED = (1 << 64) - 1  # torch seeds are 64-bit


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _shown(value: int) -> str:
    digits = str(abs(value))
    return f"{value:,}" if len(digits) <= 20 else f"a number of {len(digits)} digits"


def whole(text: str) -> int:
    """A whole number as typed (``12``, ``-3``); '1e11', '2.5' and 'abc' are refused."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {_quoted(text)}") from None


def bounded(low: int, high: int, unit: str = "") -> Callable[[str], int]:
    """A check: a whole number from `low` to `high` (`unit` names what is counted)."""
    after = f" {unit}" if unit else ""

    def check(text: str) -> int:
        value = whole(text)
        if value < low:
            raise ValueError(f"must be at least {low:,}, got {_shown(value)}")
        if value > high:
            raise ValueError(f"must be at most {high:,}{after}, got {_shown(value)}")
        return value

    return check


positive = bounded(1, MAX_COUNT)
tokens = bounded(1, limits.MAX_TOKENS, "tokens")  # prompt, new tokens, windows, blocks, limits
rows = bounded(1, limits.MAX_ROWS, "rows")  # samples in one batch
seed = bounded(0, MAX_SEED)
# A serving block: the window's box, the notebook (through it) and `kvstudio serving`
# take the same 1 … 256 tokens; the model's positions are checked once it is known
# (``engine/serving/engine.check_requests``).
MAX_BLOCK_SIZE = 256
block_size = bounded(1, MAX_BLOCK_SIZE, "tokens")
# A served engine (`kvstudio serve-bench`, ``labs/serving/served``): how long one read from
# the server may take, and the time one '@K' arrival step stands for.
MAX_SERVER_TIMEOUT_S = 3600
server_timeout = bounded(1, MAX_SERVER_TIMEOUT_S, "seconds")
MAX_ARRIVAL_STEP_MS = 60_000
arrival_step_ms = bounded(0, MAX_ARRIVAL_STEP_MS, "ms")


def thread_count(text: str) -> int:
    """1 … the CPU cores (`limits.check_threads`), for every front alike."""
    count = whole(text)
    try:
        return limits.check_threads(count)
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("--threads ")) from None


def number(text: str) -> float:
    """A finite number (Python's float takes nan and inf)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {_quoted(text)}") from None
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {_quoted(text)}")
    return value


def temperature(text: str) -> float:
    """0 (greedy) or a finite number within `records.check_temperature`'s range, as every
    command, the window and the notebook take it (-1 is refused, never greedy)."""
    return check_temperature(number(text))


def _items(text: str) -> list[str]:
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items:
        raise ValueError("give at least one value")
    if len(items) > MAX_VALUES:
        raise ValueError(f"give at most {MAX_VALUES:,} values, got {len(items):,}")
    return items


def token_list(text: str) -> list[int]:
    """Comma-separated lengths, each 1 … `limits.MAX_TOKENS`, at most `MAX_VALUES` of them."""
    try:
        return [tokens(v) for v in _items(text)]
    except ValueError as exc:
        raise ValueError(
            f"expected comma-separated whole numbers 1 … {limits.MAX_TOKENS:,}, got "
            f"{_quoted(text)} ({exc})"
        ) from None


def number_list(text: str) -> list[float]:
    """Comma-separated finite numbers, at most `MAX_VALUES` of them."""
    items = _items(text)
    try:
        values = [float(v) for v in items]
    except ValueError:
        raise ValueError(f"expected comma-separated numbers, got {_quoted(text)}") from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"expected finite numbers, got {_quoted(text)}")
    return values
