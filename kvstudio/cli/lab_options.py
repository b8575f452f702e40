"""A lab parameter's command-line option, built from its declaration (`kvstudio.labs.params`).

Owns `add_lab_option`: the option named in the lab's registry entry, with the
parameter's own parsing and bounds as argparse's ``type`` (its ValueError becomes
the one ``error:`` line), its default and, in ``--help``, its default, bounds and
unit. The window's boxes and the notebook's arguments come from the same `Param`,
so the three fronts cannot drift apart (``tests/ui/test_lab_registry.py``).
"""

from __future__ import annotations

import argparse
from typing import Any

from kvstudio.cli.args import argument_type
from kvstudio.labs.params import Param, number_text

_TYPE_NAMES = {"int": "whole number", "float": "number", "ints": "list of whole numbers",
               "floats": "list of numbers", "choice": "choice", "text": "text", "bool": "flag"}


def lab_option_help(param: Param, extra: str = "") -> str:
    """``--help``'s line: what it is, its default, its bounds."""
    parts = [param.help]
    if param.low is not None and param.high is not None:
        unit = f" {param.unit}" if param.unit else ""
        parts.append(f"{number_text(param.low)}–{number_text(param.high)}{unit}")
    parts.append(f"default {param.text()}")
    return f"{'; '.join(parts)}{extra}"


def add_lab_option(parser: argparse._ActionsContainer, param: Param, extra_help: str = "",
                   **overrides: Any) -> None:
    """Add `param`'s option to `parser` (its type, default and help from the declaration)."""
    if param.option is None:
        raise ValueError(f"{param.name} has no command-line option")
    default = list(param.default) if param.kind in ("ints", "floats") else param.default
    settings: dict[str, Any] = {"default": default, "help": lab_option_help(param, extra_help)}
    if param.kind == "choice":
        settings["choices"] = param.choices
        if not all(isinstance(choice, str) for choice in param.choices):  # read "8" as 8
            settings["type"] = argument_type(param.parse, _TYPE_NAMES[param.kind])
    elif param.kind == "bool":  # --name / --no-name
        settings["action"] = argparse.BooleanOptionalAction
    else:
        settings["type"] = argument_type(param.parse, _TYPE_NAMES[param.kind])
    settings.update(overrides)
    parser.add_argument(param.option, **settings)
