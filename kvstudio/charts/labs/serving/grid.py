"""The serving chart's grid: its five plots in rows on a tall page, in columns on a wide one.

Owns `ServingGrid`, the chart's central layout, and `ServingChart`, the widget that
shows it. Laid out taller than `WIDE_RATIO`
(the window's Serving tab, a 4:3 slide) the timeline spans the top row and the
other four plots sit two by two below it; laid out wider (the presenter's
screen below its headline, a 16:9 slide) the timeline fills the left column and
the other four sit two by two beside it, so the chart needs two plots' height, not
three: at projector type the rows under one another needed ~1,070 px where the
presenter has ~745 px, and the page was drawn at two thirds of its size. Every
plot, legend and title is the same in both; only where they sit changes, and it
changes as the chart is given its size (the window's resize, a render's canvas).
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from kvstudio.charts.plots.legend import LEGEND_ROW, PlotLegend

WIDE_RATIO = 1.8  # width ÷ height from which the plots go in three columns
WIDE_MIN_WIDTH = 800.0  # px; narrower, three columns would not hold the plots' minimum

# (row, column, rows spanned, columns spanned) of the timeline, tokens, blocks,
# step-time and throughput plots.
Cell = tuple[int, int, int, int]
TALL_CELLS: tuple[Cell, ...] = ((0, 0, 1, 2), (1, 0, 1, 1), (1, 1, 1, 1), (2, 0, 1, 1),
                                (2, 1, 1, 1))
WIDE_CELLS: tuple[Cell, ...] = ((0, 0, 2, 1), (0, 1, 1, 1), (1, 1, 1, 1), (0, 2, 1, 1),
                                (1, 2, 1, 1))
TALL_ROW_STRETCH = (3, 2, 2)  # the timeline has a row per request
WIDE_ROW_STRETCH = (1, 1, 0)
GRID_SIZE = 3  # rows and columns either arrangement uses, at most
LEGEND_SHARE = 0.42  # of a plot's width its legend takes beside the data (a wide page)
# The step-time plot's three long entries (the floors' formulas) take more, so that they
# wrap to two lines each, not three, and the plot stays as low as the others.
LONG_LEGEND_SHARE = 0.55
BESIDE = (2, 3, 2, 1)  # the legend's cells beside the view box and bottom axis in a PlotItem
WIDE_COLUMN_STRETCH = (2, 3, 4)  # the timeline narrowest, the sweep (long legends) widest


class ServingGrid(pg.GraphicsLayout):
    """A GraphicsLayout that places its plots for the shape of the room it is given."""

    wide = False
    _placed: tuple[pg.PlotItem, ...] = ()  # (class defaults: Qt sizes it while it is built)

    def place(self, plots: tuple[pg.PlotItem, ...]) -> None:
        """Hold `plots` (timeline, tokens, blocks, step time, throughput) in the tall
        arrangement until a wide size comes."""
        for plot in plots:
            self.addItem(plot)  # (pyqtgraph's bookkeeping: its border, its cell)
        self._placed = plots
        self.arrange(wide=False, force=True)

    def setGeometry(self, *rect: Any) -> None:  # (Qt's name)
        """Arrange for the shape asked for before Qt clamps it to the current minimum
        (the tall arrangement's height would always make the room look tall)."""
        asked = QRectF(*rect)
        if asked.height() > 0:
            self.arrange(wide=asked.width() >= max(WIDE_RATIO * asked.height(),
                                                   WIDE_MIN_WIDTH))
        super().setGeometry(asked)

    def arrange(self, wide: bool, force: bool = False) -> None:
        if not self._placed or (wide == self.wide and not force):
            return
        self.wide = wide
        grid = self.layout
        for index in range(grid.count() - 1, -1, -1):
            grid.removeAt(index)
        for line in range(GRID_SIZE):
            grid.setRowStretchFactor(line, (WIDE_ROW_STRETCH if wide else TALL_ROW_STRETCH)[line])
            grid.setColumnStretchFactor(line, WIDE_COLUMN_STRETCH[line] if wide else
                                        int(line < 2))
        self.rows: dict[int, dict[int, pg.PlotItem]] = {}
        for plot, (row, col, rows, cols) in zip(self._placed, WIDE_CELLS if wide else TALL_CELLS,
                                                strict=True):
            cells = [(row + r, col + c) for r in range(rows) for c in range(cols)]
            for r, c in cells:
                self.rows.setdefault(r, {})[c] = plot
            self.items[plot] = cells
            grid.addItem(plot, row, col, rows, cols)
            place_legend(plot, beside=wide and plot is not self._placed[0],
                         share=LONG_LEGEND_SHARE if plot is self._placed[3] else LEGEND_SHARE)
        grid.invalidate()


class ServingChart(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget whose central layout is a `ServingGrid` (built as pyqtgraph
    builds its own, so no replaced layout is left behind without a scene)."""

    def __init__(self) -> None:
        pg.GraphicsView.__init__(self)
        self.ci: ServingGrid = ServingGrid()
        for name in ("nextRow", "nextCol", "nextColumn", "addPlot", "addViewBox", "addItem",
                     "getItem", "addLayout", "addLabel", "removeItem", "itemIndex", "clear"):
            setattr(self, name, getattr(self.ci, name))
        self.setCentralItem(self.ci)


def place_legend(plot: pg.PlotItem, beside: bool, share: float = LEGEND_SHARE) -> None:
    """`plot`'s legend beside its data (the title then spans both) or in its row under it."""
    legend = plot.legend
    if not isinstance(legend, PlotLegend) or legend.beside == beside:
        return
    cells = plot.layout
    cells.removeItem(legend)
    cells.removeItem(plot.titleLabel)
    legend.beside = beside
    legend.share = share if beside else 1.0
    if beside:
        cells.addItem(legend, *BESIDE)
        cells.setAlignment(legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        cells.addItem(plot.titleLabel, 0, 1, 1, 3)
    else:
        cells.addItem(legend, LEGEND_ROW, 0, 1, 3)
        cells.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
        cells.addItem(plot.titleLabel, 0, 1)
    if legend.refit is not None:
        legend.refit()
