"""Wait for the window's layout to come to rest before measuring it.

Titles wrap, legends re-flow and axes learn their tick labels' widths in
later event-loop passes (a `QTimer.singleShot(0)` each, then a layout
request), so a chart reaches its final geometry a few passes after the data
arrives: under load, more passes than a fixed count allows. `settle` runs
the event loop until every plot in every visible window has kept the same
geometry for a few passes in a row. Passes are counted, not time: on a busy
machine the same passes take longer (one call here took 2.7 s on an idle 2-core
machine, more than half the 5 s limit it once had), so the only time limit is
the hang guard, for a layout that never stops moving (the test then measures
what is there and its own checks fail).
"""

from __future__ import annotations

import time
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QGraphicsView, QWidget

from tests.ui.waits import HANG_GUARD_S

STABLE_PASSES = 3  # passes in a row with the same geometry
LIMIT_S = HANG_GUARD_S  # only a layout that never stops moving ends here


def _rect(item: Any) -> tuple[float, ...]:
    rect = item.sceneBoundingRect()
    return (round(rect.x(), 2), round(rect.y(), 2), round(rect.width(), 2), round(rect.height(), 2))


def visible_windows() -> list[QWidget]:
    """The visible top-level widgets (what `QApplication.topLevelWidgets()` lists and
    `isVisible()` keeps), found through their native windows: a filled window has a
    thousand top-level widgets (every menu and popup), wrapping each of them for Python
    on every settle pass cost more than the pass's own check. A visible window always
    has its native one; one that is no widget's (none here) is left out, as before."""
    widgets = (QWidget.find(handle.winId()) for handle in QGuiApplication.topLevelWindows()
               if handle.isVisible())
    return [widget for widget in widgets if widget is not None and widget.isVisible()]


def layout_signature() -> tuple[object, ...]:
    """Where every plot of every visible view is, with its axes, title and legend."""
    signature: list[object] = []
    for widget in visible_windows():
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
