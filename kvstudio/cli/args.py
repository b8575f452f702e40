"""Argument types for the `kvstudio` command: every number bounded before any work.

Owns the argparse ``type=`` functions all subcommands share (``main``,
``chat``, ``project``, ``bench``, ``train``), so a count is checked the same
way everywhere. The checks themselves are `kvstudio.labs.bounds`' (the window
and the notebook use them too): a whole number as typed, at least its lowest
value, at most a bound no index arithmetic can overflow. Here each check
becomes an argparse type: its refusal (ValueError) becomes
`argparse.ArgumentTypeError`, which the parser prints as one ``error:`` line
with exit status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from kvstudio.labs import bounds
from kvstudio.labs.bounds import MAX_COUNT, MAX_SEED, MAX_VALUES

__all__ = [
    "MAX_COUNT", "MAX_SEED", "MAX_VALUES", "argument_type", "block_size", "bounded", "number",
    "number_list", "positive", "rows", "seed", "temperature", "thread_count", "token_list",
    "tokens", "whole",
]

T = TypeVar("T")


def argument_type(check: Callable[[str], T], name: str) -> Callable[[str], T]:
    """`check` as an argparse ``type=``: its ValueError becomes the parser's ``error:`` line
    (`name` is what argparse calls the type in its own messages)."""

    def parse(text: str) -> T:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = name
    return parse


def bounded(low: int, high: int, unit: str = "") -> Callable[[str], int]:
    """A type function: a whole number from `low` to `high` (`unit` names what is counted)."""
    return argument_type(bounds.bounded(low, high, unit), "whole number")


whole = argument_type(bounds.whole, "whole number")
positive = argument_type(bounds.positive, "whole number")
tokens = argument_type(bounds.tokens, "whole number")  # prompt, new tokens, windows, blocks
rows = argument_type(bounds.rows, "whole number")  # samples in one batch
seed = argument_type(bounds.seed, "whole number")
block_size = argument_type(bounds.block_size, "whole number")  # a serving block, 1 … 256
thread_count = argument_type(bounds.thread_count, "thread count")  # 1 … the CPU cores
number = argument_type(bounds.number, "number")  # finite (argparse's float takes nan and inf)
temperature = argument_type(bounds.temperature, "temperature")  # 0 or 1e-6 … 100
token_list = argument_type(bounds.token_list, "list of whole numbers")
number_list = argument_type(bounds.number_list, "list of numbers")
