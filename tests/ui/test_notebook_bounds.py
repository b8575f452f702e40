"""Every notebook function refuses what it cannot finish, at once, with a ValueError.

Issue 32.3: the notebook API had none of the command line's bounds (`kv.threads(10**9)`
killed the kernel, `kv.chat(turns=10**9)` ran for hours, a 1 MB prompt was cut at
32,767 characters without a word, wrong types raised Python's own errors). Here every
argument of every notebook function gets absurd values; each must be refused with a
ValueError naming the argument before any model is loaded or any step runs.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import pytest

from kvstudio import notebook as kv

LAB_FUNCTIONS = ("compare", "sample", "cutoff", "cache_kinds", "sweep", "paged", "quantized",
                 "chat", "serving", "beam", "speculative", "twin")
MEGABYTE = "x" * 1_000_000
ABSURD: tuple[Any, ...] = (10**9, -1, math.nan, math.inf, object(), MEGABYTE, [0.5] * 10**6)
# Values that look absurd but are in range: a 64-bit seed, transformers' negative length
# penalty (it favours short beams).
IN_RANGE = {("seed", 10**9), ("length_penalty", -1)}


def refuses(call: Any, name: str, value: Any) -> str:
    """The ValueError `call` raises (a refusal before any model loads: the suite's
    faulthandler timeout ends a call that runs on instead)."""
    with pytest.raises(ValueError) as caught:
        call()
    message = str(caught.value)
    assert len(message) < 400, f"{name}={value!r:.40}: message {len(message)} characters long"
    return message


@pytest.mark.parametrize("function", LAB_FUNCTIONS)
def test_every_argument_refuses_absurd_values(function: str, qapp: Any) -> None:
    lab = getattr(kv, function)
    names = [n for n, p in inspect.signature(lab).parameters.items()
             if p.kind == p.KEYWORD_ONLY and n != "show"]
    assert names, function
    # Each argument gets two of the absurd values, in rotation, so every value meets every
    # kind of box across the functions (a panel is built per call: about 0.1 s each).
    for index, name in enumerate(["model", *names]):
        for value in (ABSURD[index % len(ABSURD)], ABSURD[(index + 3) % len(ABSURD)]):
            if isinstance(value, int) and (name, value) in IN_RANGE:
                continue
            message = refuses(lambda n=name, v=value: lab(**{n: v}, show=False), name, value)
            said = message.replace("_", " ").lower()
            assert name.replace("_", " ") in said or name == "model", \
                f"{function}({name}=…): {message}"


def test_threads_refuses_what_the_command_line_refuses(qapp: Any) -> None:
    for value in (10**9, 0, -1, 1.5, math.nan, "a", True):
        message = refuses(lambda v=value: kv.threads(v), "threads", value)
        assert "threads" in message
    assert kv.threads(1) == 1


def test_chat_turns_are_bounded_by_count_and_type(qapp: Any) -> None:
    for value in (10**9, 0, 5.5, "hello", [""], ["x" * 40_000], ["hi"] * 100_001):
        message = refuses(lambda v=value: kv.chat(turns=v, show=False), "turns", value)
        assert "turn" in message
