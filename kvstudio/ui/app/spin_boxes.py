"""Number boxes made in one call: the range, the starting value and the step of a spin box.

Owns `int_box` and `float_box`, used wherever the window or a lab asks for a
number (the sampling knobs, the answer sampler, every lab's parameters), so
each box is set up the same way.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox


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
