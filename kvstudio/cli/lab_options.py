"""A lab parameter's command-line option, built from its declaration (`kvstudio.labs.params`).

Owns `add_lab_option`: the option named in the lab's registry entry, with the
parameter's own parsing and bounds as argparse's ``type`` (its ValueError becomes
the one ``error:`` line), its default and, in ``--help``, its default, bounds and
unit; `add_lab_options`, every option of a lab's spec in its declared order, and
`lab_params`, the parsed options back as the parameters the lab's declared run
takes (``LabSpec.run``, the window's and the notebook's run too). The window's boxes
and the notebook's arguments come from the same `Param`, so the three fronts cannot
drift apart (``tests/ui/test_lab_registry.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from kvstudio.cli.args import argument_type
from kvstudio.labs.params import LabSpec, Param, number_text

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


def option_dest(param: Param) -> str:
    """The attribute argparse stores `param`'s option in (``--top-k`` → ``top_k``)."""
    assert param.option is not None
    return param.option.lstrip("-").replace("-", "_")


def add_lab_options(parser: argparse._ActionsContainer, spec: LabSpec,
                    extra_help: Mapping[str, str] | None = None,
                    overrides: Mapping[str, Mapping[str, Any]] | None = None,
                    skip: tuple[str, ...] = ()) -> None:
    """Every parameter of `spec` that has an option (but `skip`), in its declared order;
    `extra_help` and `overrides` per parameter name, as `add_lab_option` takes them."""
    for param in spec.params:
        if param.option is not None and param.name not in skip:
            add_lab_option(parser, param, (extra_help or {}).get(param.name, ""),
                           **(overrides or {}).get(param.name, {}))


def lab_params(spec: LabSpec, args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options of `spec`'s parameters, by parameter name (None: the default)."""
    return {p.name: getattr(args, option_dest(p)) for p in spec.params
            if p.option is not None and hasattr(args, option_dest(p))}
