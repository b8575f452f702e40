"""The tick labels an axis draws, as its paint would draw them (for the chart tests)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QPainter, QPicture


def drawn_tick_labels(axis: pg.AxisItem) -> list[str]:
    """The tick labels `axis` draws at its range (once its view fits the data) and size,
    sorted: pyqtgraph's draw specs, which leave out a label that would reach past the
    axis' bounding rect."""
    axis.scene().prepareForPaint()  # the view's auto-range, as before a paint
    picture = QPicture()  # the device pyqtgraph paints axes into
    painter = QPainter(picture)
    try:
        painter.setFont(axis.style["tickFont"] or painter.font())
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else sorted(str(text) for _, _, text in specs[2])
