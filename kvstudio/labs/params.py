"""A lab's parameters, declared once: name, kind, default, bounds, unit and help.

Owns `Param` (one parameter: its kind, its default from the course preset, its
bounds and unit, its help in English and Korean, the window's box and its field
label in English and Korean, and the command line's option that show it; `check`,
which every front runs before a lab starts, and `parse`, the command line's
reading of its text) and `LabSpec` (a lab's key, title and parameters).
``kvstudio.labs.registry`` declares every lab's spec; the window builds a lab's
boxes from it (kind, range, default, step, choices) and labels them with `label`
or `label_ko` in the window's language (``LabPanel``), the notebook checks
its keyword arguments with it, the ``kvstudio`` command takes its options' types
and defaults from it where it has the option, and ``tests/ui/test_lab_registry.py``
holds all three to it. It never imports Qt or argparse.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kvstudio.labs.bounds import MAX_VALUES

ParamKind = Literal["int", "float", "choice", "bool", "text", "ints", "floats"]
MAX_TEXT_CHARS = 32_767  # a text box's length (Qt's QLineEdit default): longer is refused


def number_text(x: float) -> str:
    """A bound or a value in a message: whole numbers with thousands separators."""
    if float(x).is_integer() and abs(x) < 1e18:
        return f"{int(x):,}"
    return f"{x:g}"


def shown(value: object) -> str:
    """`value` for a message: its repr, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text):,} characters)"


@dataclass(frozen=True)
class Param:
    """One parameter of a lab, as every front shows and checks it."""

    name: str  # the notebook's keyword
    kind: ParamKind
    default: Any  # the course preset's value (kvstudio.labs.course)
    low: float | None = None  # inclusive bounds of a number, or of each number of a list
    high: float | None = None
    choices: tuple[Any, ...] = ()  # a "choice": the values allowed, in the window's order
    unit: str = ""  # "tokens", "rounds" …: in help and messages
    help: str = ""  # one line, English
    help_ko: str = ""  # the same line, Korean
    label: str = ""  # the window's short field label, English ("Prompt tokens P")
    label_ko: str = ""  # the same label, Korean (the window shows it in a Korean window)
    box: str = ""  # the window panel's attribute that shows it ("": `name`)
    option: str | None = None  # the command line's option that sets it (None: it has none)
    step: float = 1  # the arrows' step in the window
    decimals: int = 2  # a float's places in the window
    rule: Callable[[float], float] | None = None  # a shared rule past the bounds (temperature)
    allow_empty: bool = False  # a list that may be empty (the serving sweep's "[]: no sweep")

    @property
    def box_name(self) -> str:
        return self.box or self.name

    def window_label(self, language: str) -> str:
        """The window's field label in `language` ("ko": Korean, else English)."""
        return self.label_ko if language == "ko" and self.label_ko else self.label

    def check(self, value: Any) -> Any:
        """`value` if allowed (a list as a tuple), else a ValueError that names the parameter."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{self.name} must be True or False, got {shown(value)}.")
            return value
        if self.kind == "choice":
            for choice in self.choices:
                if type(value) is type(choice) and value == choice:
                    return choice
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ValueError(f"{self.name} must be one of {allowed}, got {shown(value)}.")
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be text, got {shown(value)}.")
            if len(value) > MAX_TEXT_CHARS:
                raise ValueError(f"{self.name} is {len(value):,} characters long; the lab takes "
                                 f"at most {MAX_TEXT_CHARS:,}: shorten it.")
            return value
        if self.kind in ("ints", "floats"):
            return self._check_list(value)
        return self._check_number(value, self.name)

    def _check_number(self, value: Any, what: str) -> int | float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{what} must be a number, got {shown(value)}.")
        if not math.isfinite(value):
            raise ValueError(f"{what} must be a finite number, got {value!r}.")
        whole = self.kind in ("int", "ints")
        if whole and int(value) != value:
            raise ValueError(f"{what} must be a whole number, got {value!r}.")
        if self.rule is not None:  # the shared rule's own message first (the temperature's)
            self.rule(value)
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if not low <= value <= high:
            unit = f" {self.unit}" if self.unit else ""
            raise ValueError(f"{what} must be between {number_text(low)} and "
                             f"{number_text(high)}{unit}, got {number_text(value)}.")
        return int(value) if whole else float(value)

    def _check_list(self, value: Any) -> tuple[int | float, ...]:
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
            raise ValueError(f"{self.name} must be a list of numbers, got {shown(value)}.")
        items: list[int | float] = []
        for item in value:
            if len(items) == MAX_VALUES:
                raise ValueError(f"{self.name} takes at most {MAX_VALUES:,} values.")
            items.append(self._check_number(item, f"each of {self.name}"))
        if not items and not self.allow_empty:
            raise ValueError(f"{self.name} needs at least one value.")
        return tuple(items)

    def parse(self, text: str) -> Any:
        """The command line's (or a text box's) text for this parameter, read and checked."""
        if self.kind in ("int", "float"):
            try:
                number = float(text) if self.kind == "float" else int(text)
            except ValueError:
                kind = "a whole number" if self.kind == "int" else "a number"
                raise ValueError(f"{self.name} must be {kind}, got {shown(text)}.") from None
            return self.check(number)
        if self.kind in ("ints", "floats"):
            parts = [p for p in re.split(r"[,;\s]+", text) if p]  # "1, 2; 4 8"
            if len(parts) > MAX_VALUES:
                raise ValueError(f"{self.name} takes at most {MAX_VALUES:,} values.")
            try:
                numbers = [int(p) if self.kind == "ints" else float(p) for p in parts]
            except ValueError:
                example = self.text()
                raise ValueError(f"{self.name} must be numbers separated by commas, e.g. "
                                 f"{example}; got {shown(text)}.") from None
            return self.check(numbers)
        if self.kind == "choice":
            for choice in self.choices:
                if str(choice) == text:
                    return choice
        return self.check(text)

    def text(self, value: Any = None) -> str:
        """`value` (else the default) as a text box and the command line's help write it."""
        value = self.default if value is None else value
        if self.kind in ("ints", "floats"):
            return ", ".join(f"{v:g}" for v in value)
        return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class LabSpec:
    """A lab's declaration: its key (the notebook's function), title and parameters."""

    key: str
    title: str  # English (the command line, the notebook, an English window)
    params: tuple[Param, ...]
    title_ko: str = ""  # the same title, Korean (a Korean window's tab and headings)
    command: str | None = None  # the ``kvstudio`` subcommand that runs it, if any
    times_model: bool = False  # its results are times: the window's live run waits meanwhile
    own_tab: bool = False  # the window shows it in a tab of its own, not in the Labs tab
    # "module:function" of its run (model, parameters) -> the items it yields, its result
    # last; imported when it runs, so the registry never loads torch.
    runner: str = ""
    # Which course model it runs on when the window runs an embedded one ("cache", "paged",
    # "sampling"; None: the model given). kvstudio.labs.course.lab_model_name says which.
    course_role: str | None = None
    needs_model: bool = True  # False: it can run on published numbers alone (the projector)
    # Names its run takes besides `params`, checked by the run itself, not shown as boxes
    # (the serving lab's requests file, also a notebook keyword): `check` passes them on.
    extras: tuple[str, ...] = ()
    # The command line's own settings its run reads (--cache, --raw …): no box or keyword
    # shows them, the run checks them, and `run` refuses a name listed in neither tuple.
    options: tuple[str, ...] = ()

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(f"{self.key} has no parameter {name!r}")

    def run(self, model: Any, params: Mapping[str, Any], **options: Any) -> Iterator[object]:
        """Start the lab on `model` (a `LoadedModel`) with `params` (missing: the default).

        The parameters are checked first and the run's own checks (a prompt longer than
        the model's positions …) raise their ValueError here, before anything runs; the
        iterator then yields progress and, last, the result record. `options` are a
        front's own settings (`extras`, `options`: the command line's ``--cache``, ``--raw``
        …), which the run reads with ``params.get`` and checks itself; an undeclared one is
        refused.
        """
        module, name = self.runner.split(":")
        values = {**self.defaults(), **{k: v for k, v in self.check(params).items()
                                        if v is not None}, **self.check_extras(options)}
        return getattr(importlib.import_module(module), name)(model, values)  # type: ignore[no-any-return]

    def check_extras(self, options: Mapping[str, Any]) -> Mapping[str, Any]:
        """`options` if declared (`extras`, `options`), else a TypeError (a front's slip)."""
        declared = (*self.extras, *self.options)
        undeclared = sorted(set(options) - set(declared))
        if undeclared:
            raise TypeError(f"{self.key}'s run takes no {', '.join(undeclared)}; its front "
                            f"settings are {', '.join(declared) or 'none'}.")
        return options

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def check(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` checked (None: left to the window's box, the default); unknown names refused."""
        names = {p.name for p in self.params}
        checked: dict[str, Any] = {}
        for name, value in values.items():
            if name in self.extras:
                checked[name] = value
                continue
            if name not in names:
                raise ValueError(f"{self.key} has no parameter {name!r}; it takes "
                                 f"{', '.join(sorted(names))}.")
            checked[name] = None if value is None else self.param(name).check(value)
        return checked
