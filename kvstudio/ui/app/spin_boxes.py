"""Number boxes made in one call: the range, the starting value and the step of a spin box.

Owns `int_box` and `float_box`, used wherever the window asks for a number (the
sampling knobs, the answer sampler), `param_box`, the box of a lab's parameter
built from its declaration (``kvstudio.labs.registry``: by its kind, with its range,
default, step and choices, so a lab's are written once; `LabPanel` builds every
lab's boxes with it), and `param_value`, what such a box holds.
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
def param_box(param: Param) -> QWidget:
    """`param`'s box, by its kind, as declared: a number's bounds, default, step (and a
    decimal's places); a yes/no tick; a choice's values (each item's data: the value itself,
    its text: the value as written, which a panel may say in words); a text or a list in a
    line (a list comma-separated)."""
    if param.kind in ("int", "float"):
        assert param.low is not None and param.high is not None
        if param.kind == "int":
            return int_box(int(param.low), int(param.high), int(param.default), int(param.step))
        return float_box(param.low, param.high, float(param.default), param.step, param.decimals)
    if param.kind == "bool":
        check = QCheckBox()
        check.setChecked(bool(param.default))
        return check
    if param.kind == "choice":
        combo = QComboBox()
        for choice in param.choices:
            combo.addItem(str(choice), choice)
        default = param.check(param.default)  # the very choice (False is not 0 here)
        combo.setCurrentIndex(next(i for i, c in enumerate(param.choices) if c is default))
        return combo
    return QLineEdit(param.text())


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


def set_param_value(param: Param, box: QWidget, value: Any) -> None:
    """Put `value` (checked as declared: a ValueError names what is wrong) into `box`, as a
    user would type, tick or pick it; the inverse of `param_value`."""
    value = param.check(value)
    if isinstance(box, QSpinBox | QDoubleSpinBox):
        box.setValue(value)
    elif isinstance(box, QCheckBox):
        box.setChecked(value)
    elif isinstance(box, QComboBox):
        data = [box.itemData(i) for i in range(box.count())]  # (False is not 0 here)
        box.setCurrentIndex(next(i for i, d in enumerate(data)
                                 if type(d) is type(value) and d == value))
    elif isinstance(box, QLineEdit):
        box.setText(param.text(value) if param.kind in ("ints", "floats") else value)
    else:
        raise TypeError(f"{param.name}: cannot show a value in a {type(box).__name__}")
