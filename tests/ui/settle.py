"""Wait for the window's layout to come to rest before measuring it.

Titles wrap, legends re-flow and axes learn their tick labels' widths in
later event-loop passes (a `QTimer.singleShot(0)` each, then a layout
request), so a chart reaches its final geometry a few passes after the data
arrives: under load, more passes than a fixed count allows. `settle` runs
the event loop until every plot in every visible window has kept the same
geometry for a few passes in a row (or a time limit passes, and the test
measures what is there).
"""

from __future__ import annotations

import time
from typing import Any

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication, QGraphicsView

STABLE_PASSES = 3  # passes in a row with the same geometry
LIMIT_S = 5.0  # at most this long (a layout that keeps moving fails the test's own checks)


def _rect(item: Any) -> tuple[float, ...]:
    rect = item.sceneBoundingRect()
    return (round(rect.x(), 2), round(rect.y(), 2), round(rect.width(), 2), round(rect.height(), 2))


def layout_signature() -> tuple[object, ...]:
    """Where every plot of every visible view is, with its axes, title and legend."""
    signature: list[object] = []
    for widget in QApplication.topLevelWidgets():
        if not widget.isVisible():
            continue
        signature.append(widget.geometry().getRect())
        for view in widget.findChildren(QGraphicsView):
            if not view.isVisible() or view.scene() is None:
                continue
            signature.append(view.geometry().getRect())
            for item in view.scene().items():
                if not isinstance(item, pg.PlotItem):
                    continue
                signature.append(_rect(item))
                signature.append(_rect(item.titleLabel))
                signature.extend(_rect(item.getAxis(side)) for side in ("left", "bottom"))
                if item.legend is not None:
                    signature.append(_rect(item.legend))
    return tuple(signature)


def settle(qtbot: Any, pass_ms: int = 10) -> None:
    """Run the event loop until the layout has not moved for `STABLE_PASSES` passes."""
    deadline = time.monotonic() + LIMIT_S
    previous: tuple[object, ...] | None = None
    stable = 0
    while time.monotonic() < deadline:
        QApplication.processEvents()
        qtbot.wait(pass_ms)
        current = layout_signature()
        stable = stable + 1 if current == previous else 0
        if stable >= STABLE_PASSES:
            return
        previous = current
