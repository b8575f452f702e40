"""Number boxes made in one call: the range, the starting value and the step of a spin box.

Owns `int_box` and `float_box`, used wherever the window asks for a number (the
sampling knobs, the answer sampler), and the boxes of a lab's parameters built from
their declaration (`param_int_box`, `param_float_box`, `param_line`, `param_check`:
``kvstudio.labs.registry``), so a lab's range and default are written once, and
`param_value`, what such a box holds.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from kvstudio.labs.params import Param


def int_box(lo: int, hi: int, value: int, step: int = 1) -> QSpinBox:
    """A whole-number box from `lo` to `hi`, showing `value`; arrows move by `step`."""
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setSingleStep(step)
    return box


def float_box(lo: float, hi: float, value: float, step: float, decimals: int = 2) -> QDoubleSpinBox:
    """A decimal box from `lo` to `hi` with `decimals` places, showing `value`; arrows move by
    `step`."""
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setValue(value)
    return box



# ---- a lab parameter's box, from its declaration (kvstudio.labs.registry) ------------------
def param_int_box(param: Param) -> QSpinBox:
    """A whole-number parameter's box: its bounds, default and step as declared."""
    assert param.kind == "int" and param.low is not None and param.high is not None
    return int_box(int(param.low), int(param.high), int(param.default), int(param.step))


def param_float_box(param: Param) -> QDoubleSpinBox:
    """A decimal parameter's box: its bounds, default, step and places as declared."""
    assert param.kind == "float" and param.low is not None and param.high is not None
    return float_box(param.low, param.high, float(param.default), param.step, param.decimals)


def param_line(param: Param) -> QLineEdit:
    """A text or list parameter's box, showing its default (a list comma-separated)."""
    assert param.kind in ("text", "ints", "floats")
    return QLineEdit(param.text())


def param_check(param: Param) -> QCheckBox:
    """A yes/no parameter's box, ticked as its default says."""
    assert param.kind == "bool"
    box = QCheckBox()
    box.setChecked(bool(param.default))
    return box


def param_value(param: Param, box: QWidget) -> Any:
    """What `box` holds for `param`: a number, a tick, a choice's data, text, or a list read
    from its text (a ValueError says what is wrong with it)."""
    if isinstance(box, QSpinBox | QDoubleSpinBox):
        return box.value()
    if isinstance(box, QCheckBox):
        return box.isChecked()
    if isinstance(box, QComboBox):
        return box.currentData()
    if isinstance(box, QLineEdit):
        return param.parse(box.text()) if param.kind in ("ints", "floats") else box.text()
    raise TypeError(f"{param.name}: no value in a {type(box).__name__}")
