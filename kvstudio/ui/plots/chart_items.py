"""What a chart is and the plot items inside it: for the export, the presenter and the labs.

Owns `ChartLike` (any chart the window shows: a PlotItem, a GraphicsLayout or the
widget showing one), `ExportError` (an export or a presenter page that cannot be made;
its message says what to do), `chart_item` (the graphics item to draw) and
`plot_items` (every PlotItem inside, top-left first). It sits with the plots, below
``kvstudio.ui.slides``, so a plot can find its own items without importing the export.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

ChartLike = Any  # PlotItem | GraphicsLayout | PlotWidget | GraphicsLayoutWidget



class ExportError(RuntimeError):
    """An export could not be written; the message says why and what to do."""


# ---- finding the chart ---------------------------------------------------------------------
def chart_item(chart: ChartLike) -> QGraphicsItem:
    """The graphics item to export for a chart or the widget that shows it."""
    if isinstance(chart, QGraphicsItem):
        return chart
    if isinstance(chart, pg.PlotWidget):
        return chart.getPlotItem()
    if isinstance(chart, pg.GraphicsLayoutWidget):
        return chart.ci
    if isinstance(chart, pg.GraphicsView) and chart.centralWidget is not None:
        return chart.centralWidget
    plot_item = getattr(chart, "plot_item", None)  # our Plot classes expose their PlotItem
    if isinstance(plot_item, QGraphicsItem):
        return plot_item
    raise ExportError(
        f"Cannot export a {type(chart).__name__}: pass a pyqtgraph PlotItem, GraphicsLayout "
        "or the widget that shows one."
    )


def plot_items(chart: ChartLike) -> list[pg.PlotItem]:
    """Every PlotItem inside a chart, in layout order (top-left first)."""
    root = chart_item(chart)
    found: list[pg.PlotItem] = []
    stack = [root]
    while stack:
        item = stack.pop(0)
        if isinstance(item, pg.PlotItem):
            found.append(item)
            continue
        stack.extend(item.childItems())
    found.sort(key=lambda p: (round(p.sceneBoundingRect().top()), p.sceneBoundingRect().left()))
    return found
