"""The shared base of the live plots: a white PlotWidget, a legend, an optional right axis.

Owns the plumbing every plot needs (colours per mode, a second y axis linked
to the first for cumulative series, retranslation on language change) and
nothing about what is drawn.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QWidget

from kvstudio.core.records import Mode
from kvstudio.ui.run_store import RunStore

MODE_COLOURS: dict[Mode, str] = {"cached": "#1f77b4", "recompute": "#e6550d"}


def mode_pen(mode: Mode, width: float = 2.0, dashed: bool = False) -> pg.QtGui.QPen:
    pen = pg.mkPen(MODE_COLOURS[mode], width=width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


def mode_brush(mode: Mode, alpha: int = 150) -> QColor:
    colour = QColor(MODE_COLOURS[mode])
    colour.setAlpha(alpha)
    return colour


class LivePlot(pg.PlotWidget):
    """A plot that redraws from a `RunStore`. Subclasses create their items once."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setMinimumSize(280, 200)
        item = self.plot_item
        # No grid: pyqtgraph draws grid lines as part of each axis, so every range change
        # repainted the whole plot area from Python (80-100 ms stalls when playing).
        item.showGrid(x=False, y=False)
        for side in ("left", "bottom", "right"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#222"))
        self.legend = item.addLegend(offset=(8, 8), labelTextColor="#222")
        self.legend.setBrush(pg.mkBrush(255, 255, 255, 200))
        self.right_view: pg.ViewBox | None = None
        # Axes, title and legend repaint with every data update; replaying their text is the
        # costliest part of a frame, so keep them as pixmaps until they really change.
        for static in (*(item.getAxis(s) for s in ("left", "bottom", "right", "top")),
                       item.titleLabel, self.legend):
            static.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    @property
    def plot_item(self) -> pg.PlotItem:
        """The PlotItem to export (pyqtgraph exporters take it)."""
        return self.getPlotItem()

    def add_right_axis(self, label: str) -> pg.ViewBox:
        """A second ViewBox sharing x, drawn against the right axis (for cumulative totals)."""
        item = self.plot_item
        view = pg.ViewBox()
        item.showAxis("right")
        item.scene().addItem(view)
        item.getAxis("right").linkToView(view)
        item.getAxis("right").setLabel(label)
        view.setXLink(item)
        item.vb.sigResized.connect(self._sync_right_view)
        self.right_view = view
        self._sync_right_view()
        return view

    def _sync_right_view(self) -> None:
        if self.right_view is None:
            return
        self.right_view.setGeometry(self.plot_item.vb.sceneBoundingRect())
        self.right_view.linkedViewChanged(self.plot_item.vb, self.right_view.XAxis)

    def set_ranges(self, x: tuple[float, float], y: tuple[float, float] | None = None,
                   right_y: tuple[float, float] | None = None) -> None:
        """Fix the visible ranges (only when they change) so axes need not be redrawn per step.

        A growing series under auto-range rescales its axes on every redraw, and
        axis painting is the most expensive part of a pyqtgraph frame.
        """
        wanted = (x, y, right_y)
        if wanted == getattr(self, "_ranges", None):
            return
        self._ranges = wanted
        view = self.plot_item.vb
        view.disableAutoRange(pg.ViewBox.XAxis)
        view.setXRange(*x, padding=0)
        if y is not None:
            view.disableAutoRange(pg.ViewBox.YAxis)
            view.setYRange(*y, padding=0)
        if right_y is not None and self.right_view is not None:
            self.right_view.disableAutoRange()
            self.right_view.setYRange(*right_y, padding=0)

    def refresh(self, store: RunStore) -> None:
        raise NotImplementedError

    def retranslate(self) -> None:
        raise NotImplementedError

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
