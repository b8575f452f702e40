"""A row of plots that keeps fixed relative column widths at any size, with titles that wrap.

Owns `FixedColumns` and `WrappingTitle`. pyqtgraph's grid gives each column
at least what its widest part asks for: a plot title one line long or a wide
tick-label axis. On a slide canvas the export theme enlarges the fonts, so a
long title pushed the heat maps of the Cache inspector under their neighbours
and off the page. Here every column is a fixed share of the row's width
(recomputed whenever the row is resized, as the export does for each canvas),
the gap between columns is a share too, and each title wraps to its plot's
width instead of widening it (its row grows to the lines it needs).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextOption

from kvstudio.charts.plots.sizing import MIN_PLOT_WIDTH, corner_x_of

GAP_SHARE = 0.015  # the space between two columns, as a share of the row's width
TITLE_PAD = 4  # px below a title's text (as the slide theme reserves)


class WrappingTitle(pg.LabelItem):
    """A plot title that takes the width its plot gives it and wraps its text to it."""

    def __init__(self, plot: pg.PlotItem, row: list[WrappingTitle]) -> None:
        self._plot: pg.PlotItem | None = None  # set after LabelItem.__init__ calls updateMin
        self._row = row  # the titles side by side: one height for all keeps the views level
        super().__init__("", size="11pt", parent=plot)
        self._plot = plot
        row.append(self)
        option = QTextOption(Qt.AlignmentFlag.AlignHCenter)
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.item.document().setDefaultTextOption(option)

    def detach_from_chart(self) -> None:
        """Stop looking at the plot: `app/shutdown.tear_down` calls this before a chart is
        deleted, because deleting the plot's layout resizes this title from inside the
        plot's destructor, and reading the plot's export button then crashed (SIGSEGV)."""
        self._plot = None

    def resizeEvent(self, ev: object) -> None:
        width = max(1.0, self.rect().width())
        corner = corner_x_of(self._plot) if self._plot is not None else None
        if corner is not None:  # centred: its right half ends before the export button
            centre = self.mapToItem(self._plot, self.rect().center()).x()
            width = max(min(width, 2 * (corner - centre)), 40.0)
        if abs(self.item.textWidth() - width) > 0.5:
            self.item.setTextWidth(width)  # wrap to the plot's width (keeps through setText)
        super().resizeEvent(ev)

    def updateMin(self) -> None:
        """Ask for the wrapped text's height but no width: the column decides the width."""
        height = self.itemRect().height()
        self.setMinimumWidth(1)
        self.setMinimumHeight(height)
        self._sizeHint = {
            Qt.SizeHint.MinimumSize: (1, height),
            Qt.SizeHint.PreferredSize: (1, height),
            Qt.SizeHint.MaximumSize: (-1, -1),
            Qt.SizeHint.MinimumDescent: (0, 0),
        }
        if self._plot is not None:
            self._level_row()
        self.updateGeometry()

    def _level_row(self) -> None:
        """Give every title of the row the height of the tallest (PlotItem.setTitle fixes 30)."""
        shown = [t for t in self._row if _alive(t) and t.isVisible()]
        if not shown:
            return
        needed = max(t.itemRect().height() for t in shown) + TITLE_PAD
        for title in shown:
            layout = title._plot.layout  # type: ignore[union-attr]
            if layout.rowMaximumHeight(0) != needed or layout.rowMinimumHeight(0) != needed:
                title.setMaximumHeight(needed)
                layout.setRowFixedHeight(0, needed)


def _alive(title: WrappingTitle) -> bool:
    """Whether the title, its plot and the plot's layout still exist (while a chart is torn
    down, Qt resizes the titles left after their layout went)."""
    plot = title._plot
    return (plot is not None and shiboken6.isValid(title) and shiboken6.isValid(plot)
            and shiboken6.isValid(plot.layout))


def use_wrapping_title(plot: pg.PlotItem, row: list[WrappingTitle]) -> WrappingTitle:
    """Replace the plot's one-line title with a `WrappingTitle` in the same place.

    `row` collects the titles of plots shown side by side (pass the same list).
    """
    old = plot.titleLabel
    plot.layout.removeItem(old)
    old.setParentItem(None)
    scene = old.scene()
    if scene is not None:
        scene.removeItem(old)
    title = WrappingTitle(plot, row)
    plot.titleLabel = title
    plot.refit_title = lambda: title.resizeEvent(None)  # (the export button moved)
    plot.layout.addItem(title, 0, 1)
    title.setVisible(old.isVisible())
    return title


class FixedColumns:
    """Keep a row of plots at fixed shares of the row's width, whatever its size.

    Each plot's preferred width is set to its share of the width the row has
    just been given (before the layout runs), and the stretch factors follow
    the shares, so the grid hands out exactly those widths. Fixed column
    widths would not do: they cap the row at the size it had when they were
    set, so the export could not lay the row out on a larger canvas.
    """

    def __init__(self, grid: pg.GraphicsLayout, plots: Sequence[pg.PlotItem],
                 shares: Sequence[float]) -> None:
        if len(plots) != len(shares) or any(s <= 0 for s in shares):
            raise ValueError("Give one positive share per plot.")
        total = sum(shares)
        self.grid = grid
        self.plots = tuple(plots)
        self.shares = tuple(s / total for s in shares)
        for column, share in enumerate(self.shares):
            grid.layout.setColumnStretchFactor(column, max(1, round(share * 100)))
        grid.geometryChanged.connect(self.fit)
        # A y axis widens with its tick labels (the inspector's "6: ⟨|endof…") while the row
        # keeps its width: its plot's minimum follows, or the view box went under its minimum.
        for plot in self.plots:
            for side in ("left", "right"):
                plot.getAxis(side).geometryChanged.connect(self._fit_minimums)
        self.fit()

    def fit(self) -> None:
        """Set every plot's width and the gaps from the row's current width."""
        layout = self.grid.layout
        left, _, right, _ = layout.getContentsMargins()
        width = self.grid.geometry().width() - left - right
        if width <= 0:
            return
        gap = round(width * GAP_SHARE)
        layout.setHorizontalSpacing(gap)
        usable = width - gap * (len(self.shares) - 1)
        self._fit_minimums()
        for plot, share in zip(self.plots, self.shares, strict=True):
            plot.setPreferredWidth(max(1.0, usable * share))

    def _fit_minimums(self) -> None:
        """The share decides a plot's width, not its contents; but never below a readable
        plot area beside the plot's axes (the page around the row scrolls instead)."""
        for plot in self.plots:
            if not shiboken6.isValid(plot):  # (a chart being torn down)
                return
            axes = sum(plot.getAxis(side).width() for side in ("left", "right")
                       if plot.getAxis(side).isVisible())
            if plot.minimumWidth() != axes + MIN_PLOT_WIDTH:
                plot.setMinimumWidth(axes + MIN_PLOT_WIDTH)
