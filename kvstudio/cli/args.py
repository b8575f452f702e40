"""Argument types for the `kvstudio` command: every number bounded before any work.

Owns the argparse ``type=`` functions all subcommands share (``main``,
``chat``, ``project``, ``bench``, ``train``), so a count is
checked the same way everywhere: a whole number (``1e11`` and ``abc`` are
refused), at least its lowest value, and at most a bound that no index
arithmetic can overflow (``99999999999999999999999`` is an `error:` line, not
a traceback from torch). Lengths are bounded by `limits.MAX_TOKENS` here; the
model's own positions and the free memory are checked once the model is
known (`limits.check_run`). Thread counts go through `limits.check_threads`.
A refusal raises `argparse.ArgumentTypeError`, which the parser prints as
one ``error:`` line with exit status 2.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from kvstudio.engine import limits

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
        raise argparse.ArgumentTypeError(f"expected a whole number, got {_quoted(text)}") from None


def bounded(low: int, high: int, unit: str = "") -> Callable[[str], int]:
    """A type function: a whole number from `low` to `high` (`unit` names what is counted)."""
    after = f" {unit}" if unit else ""

    def parse(text: str) -> int:
        value = whole(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:,}, got {_shown(value)}")
        if value > high:
            raise argparse.ArgumentTypeError(
                f"must be at most {high:,}{after}, got {_shown(value)}"
            )
        return value

    parse.__name__ = "whole number"  # argparse names the type in some messages
    return parse


positive = bounded(1, MAX_COUNT)
tokens = bounded(1, limits.MAX_TOKENS, "tokens")  # prompt, new tokens, windows, blocks, limits
rows = bounded(1, limits.MAX_ROWS, "rows")  # samples in one batch
seed = bounded(0, MAX_SEED)


def thread_count(text: str) -> int:
    """1 … the CPU cores (`limits.check_threads`), for every subcommand alike."""
    try:
        return limits.check_threads(whole(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--threads ")) from exc


def number(text: str) -> float:
    """A finite number (argparse's float takes nan and inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {_quoted(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {_quoted(text)}")
    return value


def _items(text: str) -> list[str]:
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("give at least one value")
    if len(items) > MAX_VALUES:
        raise argparse.ArgumentTypeError(
            f"give at most {MAX_VALUES:,} values, got {len(items):,}"
        )
    return items


def token_list(text: str) -> list[int]:
    """Comma-separated lengths, each 1 … `limits.MAX_TOKENS`, at most `MAX_VALUES` of them."""
    try:
        return [tokens(v) for v in _items(text)]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated whole numbers 1 … {limits.MAX_TOKENS:,}, got "
            f"{_quoted(text)} ({exc})"
        ) from None


def number_list(text: str) -> list[float]:
    """Comma-separated finite numbers, at most `MAX_VALUES` of them."""
    items = _items(text)
    try:
        values = [float(v) for v in items]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {_quoted(text)}"
        ) from None
    if not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"expected finite numbers, got {_quoted(text)}")
    return values
