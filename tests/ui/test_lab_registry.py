"""One registry, three fronts: every lab's parameters are declared once and shown alike.

`kvstudio.labs.registry.LABS` declares each lab's parameters (default, bounds, kind).
This test iterates it and holds each front to it: the window panel's box for the
parameter (range, default, choices, and its label in English and Korean, in declared
order), the notebook function's keyword arguments, and, where the ``kvstudio``
command has the option, its default and its bounds.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

import pytest
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from kvstudio import notebook as kv
from kvstudio.charts.i18n import LanguageSwitcher
from kvstudio.charts.labs import VIEW_TYPES
from kvstudio.cli.main import build_parser
from kvstudio.labs.course import CACHE_PRESETS
from kvstudio.labs.params import LabSpec, Param
from kvstudio.labs.registry import LABS
from kvstudio.ui.app.shutdown import delete_widget
from kvstudio.ui.labs import PANEL_TYPES
from kvstudio.ui.slides.export_menu import ChartExporter


def _subcommand(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def _box_value(box: Any) -> Any:
    if isinstance(box, QAbstractSpinBox):
        return box.value()  # type: ignore[attr-defined]
    if isinstance(box, QCheckBox):
        return box.isChecked()
    if isinstance(box, QComboBox):
        return box.currentData()
    if isinstance(box, QLineEdit):
        return box.text()
    raise AssertionError(f"not a box: {type(box).__name__}")


def _expected_box_value(param: Param) -> Any:
    if param.kind in ("text", "ints", "floats"):
        return param.text()
    return param.default


def test_every_lab_has_one_view_the_window_and_the_notebook_share() -> None:
    assert set(VIEW_TYPES) == {lab.key for lab in LABS}
    for key, panel in PANEL_TYPES.items():
        assert panel.view_type is VIEW_TYPES[key], key
    for lab in LABS:
        assert lab.runner, f"{lab.key}: no run declared"


@pytest.mark.parametrize("lab", LABS, ids=[lab.key for lab in LABS])
def test_the_notebook_takes_exactly_the_declared_parameters(lab: LabSpec) -> None:
    function = getattr(kv, lab.key)
    keywords = {n for n, p in inspect.signature(function).parameters.items()
                if p.kind == p.KEYWORD_ONLY} - {"show", "preset", "requests", "turns"}
    declared = {p.name for p in lab.params} - {"preset"}
    assert keywords == declared, lab.key


@pytest.mark.parametrize("lab", LABS, ids=[lab.key for lab in LABS])
def test_the_window_shows_each_parameter_with_its_declared_range_and_default(
    lab: LabSpec, qapp: Any
) -> None:
    panel = PANEL_TYPES[lab.key](ChartExporter(save_chooser=lambda *a: "",
                                               folder_chooser=lambda *a: ""))
    try:
        for param in lab.params:
            box = getattr(panel, param.box_name, None)
            assert box is not None, f"{lab.key}: no box {param.box_name}"
            assert _box_value(box) == pytest.approx(_expected_box_value(param)) \
                if param.kind in ("int", "float") else \
                _box_value(box) == _expected_box_value(param), (lab.key, param.name)
            if param.kind in ("int", "float"):
                assert (box.minimum(), box.maximum()) == (param.low, param.high), \
                    (lab.key, param.name)
            if param.kind == "choice":
                items = [box.itemData(i) for i in range(box.count())]
                assert tuple(items) == param.choices, (lab.key, param.name)
    finally:
        assert panel.shutdown()
        delete_widget(qapp, panel)


def _shown_label(panel: QWidget, box: QWidget) -> tuple[int, str]:
    """The form row that shows `box`, and the label the reader sees for it: the row's own,
    the one just before it on a row of several, or a tick box's text."""
    form = panel.form  # type: ignore[attr-defined]
    field = box if form.getWidgetPosition(box)[0] >= 0 else box.parentWidget()
    row = form.getWidgetPosition(field)[0]
    assert row >= 0, f"{type(box).__name__} is on no form row"
    row_label = form.itemAt(row, QFormLayout.ItemRole.LabelRole).widget().text()
    if field is box:
        return row, row_label
    layout = field.layout()
    widgets = [layout.itemAt(i).widget() for i in range(layout.count())]
    index = widgets.index(box)
    before = widgets[index - 1] if index > 0 else None
    if isinstance(before, QLabel):
        return row, before.text()
    if isinstance(box, QCheckBox) and box.text():
        return row, box.text()
    assert index == 0, f"nothing labels the {type(box).__name__} on row {row_label!r}"
    return row, row_label


@pytest.mark.parametrize("lab", LABS, ids=[lab.key for lab in LABS])
def test_the_window_labels_each_parameter_as_declared_in_both_languages(
    lab: LabSpec, qapp: Any, qtbot: Any
) -> None:
    """Each box's label is its parameter's `label` (`label_ko` in a Korean window, switched
    live), and the form shows the boxes in declared order."""
    panel = PANEL_TYPES[lab.key](ChartExporter(save_chooser=lambda *a: "",
                                               folder_chooser=lambda *a: ""))
    languages = LanguageSwitcher(qapp)

    def shown() -> list[tuple[int, str]]:
        return [_shown_label(panel, getattr(panel, p.box_name)) for p in lab.params]

    try:
        for code in ("en", "ko", "en"):
            languages.apply(code)
            wanted = [p.window_label(code) for p in lab.params]
            assert all(wanted), (lab.key, code, "a parameter has no label")
            qtbot.waitUntil(lambda w=wanted: [text for _, text in shown()] == w, timeout=5000)
            rows = [row for row, _ in shown()]
            assert rows == sorted(rows), (lab.key, "the boxes are not in declared order")
    finally:
        languages.apply("en")
        assert panel.shutdown()
        delete_widget(qapp, panel)


OPTIONS = [(lab, p) for lab in LABS for p in lab.params if p.option is not None]
# Window-only on purpose: the command line's chat always runs both ways and prints them side
# by side (its table is the comparison), so it has no switch to run one.
WINDOW_ONLY = {("chat", "reuse"), ("chat", "refeed")}
# Said otherwise on the command line: `kvstudio project` projects its --preset, its --config
# or the --model it loads (then checked by a real run), which the window's source box chooses.
OWN_OPTIONS = {("projector", "source")}
# None on the command line: the preset's value (the window's preset box fills its boxes alike).
FROM_PRESET = {("compare", "prompt_tokens"), ("compare", "new_tokens")}


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.command],
                         ids=[lab.key for lab in LABS if lab.command])
def test_the_command_has_an_option_for_every_parameter(lab: LabSpec) -> None:
    missing = {p.name for p in lab.params if p.option is None} - \
        {name for key, name in WINDOW_ONLY | OWN_OPTIONS if key == lab.key}
    assert not missing, f"kvstudio {lab.command} has no option for {sorted(missing)}"


@pytest.mark.parametrize(("lab", "param"), OPTIONS,
                         ids=[f"{lab.key}-{p.name}" for lab, p in OPTIONS])
def test_the_command_line_option_has_the_declared_default_and_bounds(
    lab: LabSpec, param: Param, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lab.command is not None
    parser = _subcommand(lab.command)
    action = next((a for a in parser._actions if param.option in a.option_strings), None)
    assert action is not None, f"kvstudio {lab.command} has no {param.option}"
    default = tuple(action.default) if isinstance(action.default, list) else action.default
    if (lab.key, param.name) in FROM_PRESET:
        assert default is None
        assert getattr(CACHE_PRESETS["course"], param.name) == param.default
    else:
        assert default == param.default, (lab.command, param.option)
    assert f"default {param.text()}" in (action.help or ""), (lab.command, param.option)
    for outside in ([param.low - 1] if param.low is not None else []) + \
                   ([param.high + 1] if param.high is not None else []):
        text = f"{outside:g}" if param.kind in ("int", "ints") else str(outside)
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args([param.option, text])
        assert stopped.value.code == 2, (lab.command, param.option, text)
        capsys.readouterr()
