"""Charts on a page that scrolls: the wheel scrolls the page, never zooms a chart.

Owns `fixed_view` (no mouse zoom or pan on a chart; the wheel goes to the scroll area
holding it, so exports show what was drawn) and `live_scroll_area` (the live page's
plots in a scroll area that only scrolls down, never sideways, never takes the
keyboard focus, and scrolls when the wheel turns over one of its charts). The
readable plot area those pages keep is ``sizing.py``'s.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QFrame, QScrollArea, QWidget


class _WheelScrollsPage(QObject):
    """The wheel over a chart scrolls the page while the page can scroll (Ctrl+wheel still
    zooms the chart): a lecturer scrolling down to the lower plots zoomed a plot instead."""

    def __init__(self, scroll: QScrollArea) -> None:
        super().__init__(scroll)
        self.scroll = scroll

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (isinstance(event, QWheelEvent)
                and not event.modifiers() & Qt.KeyboardModifier.ControlModifier
                and self.scroll.verticalScrollBar().maximum() > 0):
            QApplication.sendEvent(self.scroll.verticalScrollBar(), event)
            return True
        return False


class _WheelToPage(QObject):
    """The wheel over a chart never zooms it: it goes to the scroll area holding the chart
    (the page scrolls), or nowhere. A turn of the wheel over a lab chart zoomed it, and
    the zoom went into its exports unnoticed."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(event, QWheelEvent):
            return False
        parent = watched.parent() if isinstance(watched, QWidget) else None
        while parent is not None and not (
                isinstance(parent, QScrollArea) and not isinstance(parent, pg.GraphicsView)):
            parent = parent.parent()
        if isinstance(parent, QScrollArea):
            QApplication.sendEvent(parent.verticalScrollBar(), event)
        return True


def fixed_view(chart: pg.GraphicsView) -> None:
    """No mouse zoom or pan on `chart`: the wheel scrolls the page instead, and the
    auto-range "A" button (nothing left to undo) is hidden. The right-click menu stays."""
    for view in chart.scene().items():
        if isinstance(view, pg.ViewBox):
            view.setMouseEnabled(x=False, y=False)
        if isinstance(view, pg.PlotItem):
            view.hideButtons()
    if chart.viewport().findChild(_WheelToPage) is None:
        chart.viewport().installEventFilter(_WheelToPage(chart.viewport()))


class _DownOnly(QObject):
    """Keeps the scroll area as wide as its page's minimum width (a LayoutRequest filter)."""

    def __init__(self, scroll: QScrollArea) -> None:
        super().__init__(scroll)
        self.scroll = scroll

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return False

    def fit(self) -> None:
        page = self.scroll.widget()
        if page is None:
            return
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        width = page.minimumSizeHint().width() + bar
        if width != self.scroll.minimumWidth():
            self.scroll.setMinimumWidth(width)


def live_scroll_area(page: QWidget) -> QScrollArea:
    """`page` in a scroll area that scrolls down where the screen is too low for its charts.

    It is never narrower than the page's charts need (the window's minimum width
    follows them), so it never scrolls sideways. It never takes the keyboard focus
    (→, ←, Space and Page Down stay the run's keys, and nothing scrolls unless the
    user scrolls), and the wheel over one of its charts scrolls it while it can.
    """
    scroll = QScrollArea()
    scroll.setObjectName("liveScroll")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setWidget(page)
    down_only = _DownOnly(scroll)
    page.installEventFilter(down_only)
    down_only.fit()
    wheel = _WheelScrollsPage(scroll)
    for chart in page.findChildren(pg.GraphicsView):
        chart.viewport().installEventFilter(wheel)
    return scroll
