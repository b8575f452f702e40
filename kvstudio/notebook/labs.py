"""The labs as notebook functions, made from the registry: one function per lab.

Owns `run_lab` (a lab's key, a model and its parameters → a `LabRun`: the
course's model when none is given, the lab's own run, progress, the live chart,
the table) and one function per lab of ``kvstudio.labs.registry.LABS``, named by
its key (`compare`, `sample`, `cutoff`, `cache_kinds`, `sweep`, `paged`,
`quantized`, `projector`, `serving`, `beam`, `speculative`), whose keyword
arguments are the lab's declared parameters; `chat` runs several turns on one
conversation. Every argument left at None keeps the course preset's value (the
declaration's default, `kvstudio.labs.course.COURSE`), and every value is
checked against the same bounds as the window's box and the command's option.

A new lab needs nothing here: its `LabSpec` (with a `runner`) and its view
(``kvstudio.charts.labs.VIEW_TYPES``) make its function.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvstudio.charts.labs import VIEW_TYPES
from kvstudio.labs.params import LabSpec
from kvstudio.labs.registry import LABS, spec
from kvstudio.notebook.chart_view import LiveCharts
from kvstudio.notebook.environment import application
from kvstudio.notebook.models import as_model
from kvstudio.notebook.runner import LabRun, drive

if TYPE_CHECKING:
    from kvstudio.files.loaded import LoadedModel

ModelArg = "LoadedModel | str | Path | None"


def run_lab(key: str, model: LoadedModel | str | Path | None = None, *, show: bool = True,
            **params: Any) -> LabRun:
    """Run the lab `key` (``kvstudio.labs.registry``'s keys) on `model` with `params`.

    Unknown or out-of-bounds parameters raise a ValueError that names them, before
    any model is loaded; the lab's own checks (a prompt longer than the model's
    positions …) raise theirs before it runs.
    """
    lab = spec(key)
    given = {name: value for name, value in lab.check(params).items() if value is not None}
    application()  # the charts are Qt items: an offscreen application draws them
    # A lab that can run without a model (the projector on a published preset) loads none.
    role: Any = lab.course_role  # one of CourseRole's names, or None
    handle = as_model(model, role) if model is not None or lab.needs_model else None
    job = lab.run(handle, given)
    view = VIEW_TYPES[key]()
    view.start(given, handle.tokenizer if handle is not None else None)
    started = time.perf_counter()
    result, steps = drive(view, job, key.replace("_", " "), show=show)
    return LabRun(key, view, result, handle.name if handle is not None else "no model",
                  time.perf_counter() - started, steps)


def _signature(lab: LabSpec, extra: Sequence[str]) -> inspect.Signature:
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [inspect.Parameter("model", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                           annotation=ModelArg),
         *(inspect.Parameter(name, keyword, default=None) for name in extra),
         *(inspect.Parameter(p.name, keyword, default=None) for p in lab.params),
         inspect.Parameter("show", keyword, default=True, annotation="bool")],
        return_annotation="LabRun")


def _doc(lab: LabSpec, lead: str = "") -> str:
    lines = [lead or f"The {lab.title} lab: run it and return its `LabRun`.", "",
             "Arguments (None: the course preset's value):"]
    if "requests" in lab.extras:
        lines.append("- `requests`: a requests file's path (one question a line, ``@K`` the "
                     "step it arrives at, ``+N`` its answer budget); None: the shipped example.")
    for p in lab.params:
        bounds = ""
        if p.low is not None and p.high is not None:
            bounds = f" ({p.low:g} to {p.high:g}{' ' + p.unit if p.unit else ''})"
        elif p.choices:
            bounds = f" (one of {', '.join(repr(c) for c in p.choices)})"
        lines.append(f"- `{p.name}`: {p.help}{bounds}; default {p.default!r}.")
    lines.append("- `show`: a progress bar and the live chart (Jupyter) or a text line.")
    return "\n".join(lines)


def lab_function(lab: LabSpec) -> Callable[..., LabRun]:
    """The notebook function of `lab`: its keyword arguments are the lab's parameters."""

    def function(model: LoadedModel | str | Path | None = None, *, show: bool = True,
                 **params: Any) -> LabRun:
        return run_lab(lab.key, model, show=show, **params)

    function.__name__ = function.__qualname__ = lab.key
    function.__module__ = __name__
    function.__doc__ = _doc(lab)
    function.__signature__ = _signature(lab, lab.extras)  # type: ignore[attr-defined]
    return function


MAX_TURN_CHARS = 32_767  # a chat turn, as the window's chat box holds it
# Turns in one call: the lecture has 4; the command line's cost rule asks past about 100
# and a turns file holds at most 16 MiB. Past this, a count is a typo, not a lesson.
MAX_TURNS = 100_000


def chat(model: LoadedModel | str | Path | None = None, *,
         turns: Sequence[str] | int | None = None, show: bool = True, **params: Any) -> LabRun:
    """A multi-turn conversation, the cache kept across turns next to re-feeding the history.

    `turns`: the user's lines, or how many of the lecture's scripted turns to take
    (default: all four). Every turn is one run of the chat lab on one conversation;
    returns the last turn as `result`, every turn in `turns`.
    """
    from kvstudio.labs.chat import lab as chat_lab

    lab = spec("chat")
    given = {name: value for name, value in lab.check(params).items() if value is not None}
    for name in lab.extras:
        given.pop(name, None)  # the turns and the conversation are this function's
    lines = _chat_turns(turns)
    application()
    handle = as_model(model, None)  # the chat model (the window's chat tab: its own model)
    values = {**lab.defaults(), **given}
    session = chat_lab.new_session(handle, values) if handle.tokenizer.has_chat_tokens else None
    view = VIEW_TYPES["chat"]()
    view.start(given, handle.tokenizer)
    live = LiveCharts(view.charts(), show=show)
    results: list[object] = []
    steps: list[object] = []
    started = time.perf_counter()
    for index, line in enumerate(lines, start=1):
        job = lab.run(handle, {**given, "turn": line, "session": session})
        result, items = drive(view, job, f"chat turn {index}/{len(lines)}", show=show,
                              charts=live)
        results.append(result)
        steps += items
    return LabRun("chat", view, results[-1], handle.name, time.perf_counter() - started,
                  steps, turns=results)


def _chat_turns(turns: Sequence[str] | int | None) -> list[str]:
    """The user's lines: `turns` of the lecture's script, or the lines given (each checked)."""
    if turns is None or (isinstance(turns, int) and not isinstance(turns, bool)):
        from kvstudio.labs.chat.lab import SCRIPT
        from kvstudio.labs.chat.session import read_turns

        count = 4 if turns is None else turns
        if not 1 <= count <= MAX_TURNS:
            raise ValueError(f"turns must be between 1 and {MAX_TURNS:,}, got {count:,}.")
        script = read_turns(SCRIPT)
        return [script[i % len(script)] for i in range(count)]
    if isinstance(turns, str) or not isinstance(turns, Sequence):
        raise ValueError("turns must be a number of the lecture's turns or a list of lines, "
                         f"got {type(turns).__name__}.")
    if not 1 <= len(turns) <= MAX_TURNS:
        raise ValueError(f"Give between 1 and {MAX_TURNS:,} user turns, got {len(turns):,}.")
    for line in turns:
        if not isinstance(line, str) or not line.strip():
            raise ValueError("Each turn must be a line of text.")
        if len(line) > MAX_TURN_CHARS:
            raise ValueError(f"A turn takes at most {MAX_TURN_CHARS:,} characters.")
    return list(turns)


chat.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [*list(_signature(spec("chat"), ()).parameters.values())[:1],
     inspect.Parameter("turns", inspect.Parameter.KEYWORD_ONLY, default=None),
     *list(_signature(spec("chat"), ()).parameters.values())[1:]],
    return_annotation="LabRun")

_FUNCTIONS = {lab.key: lab_function(lab) for lab in LABS if lab.key != "chat"}
compare = _FUNCTIONS["compare"]
sample = _FUNCTIONS["sample"]
cutoff = _FUNCTIONS["cutoff"]
cache_kinds = _FUNCTIONS["cache_kinds"]
sweep = _FUNCTIONS["sweep"]
paged = _FUNCTIONS["paged"]
quantized = _FUNCTIONS["quantized"]
projector = _FUNCTIONS["projector"]
serving = _FUNCTIONS["serving"]
beam = _FUNCTIONS["beam"]
speculative = _FUNCTIONS["speculative"]
twin = _FUNCTIONS["twin"]
