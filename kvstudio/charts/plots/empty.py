"""What a chart shows before it has data: its titles, no numbers, and how to fill it.

Owns `EmptyChart`. An empty pyqtgraph plot draws a default range (−400…400,
with "(x0.001)" on the axis title for some), numbers that mean nothing. While
a chart is empty its axes show no tick values and its first plot shows one
centred line saying how to fill it; its titles and axis titles stay, so it
says what it will show. Tick levels a lab sets meanwhile (fixed category
ticks) are its own and are kept.
"""

from __future__ import annotations

import pyqtgraph as pg

from kvstudio.charts.chart_data import ChartLike, plot_items
from kvstudio.charts.plots.sizing import centre_lines, wrap_to

SIDES = ("left", "bottom", "right")


HINT_MARGIN = 12.0  # px the hint keeps from each side of the view


def placeholder(plot: pg.PlotItem) -> pg.TextItem:
    """A centred grey line over `plot`'s view (it follows the view's range), wrapped at word
    boundaries to the view's width (a long hint in a narrow plot ran past both sides)."""
    text = pg.TextItem("", color="#444", anchor=(0.5, 0.5))
    text.setZValue(100)
    centre_lines(text.textItem)
    plot.addItem(text, ignoreBounds=True)

    def centre() -> None:
        (x0, x1), (y0, y1) = plot.vb.viewRange()
        text.setPos((x0 + x1) / 2, (y0 + y1) / 2)

    def fit_width() -> None:
        wrap_to(text.textItem, plot.vb.width() - 2 * HINT_MARGIN)
        text.updateTextPos()  # centred on its point again

    plot.vb.sigRangeChanged.connect(centre)
    plot.vb.sigResized.connect(fit_width)
    text.textItem.document().contentsChanged.connect(fit_width)
    centre()
    return text


class EmptyChart:
    """Switches a chart between its empty look (no tick values, a hint) and its data look."""

    def __init__(self, chart: ChartLike) -> None:
        self.plots = plot_items(chart)
        self.hint = placeholder(self.plots[0]) if self.plots else None
        self._blank: dict[int, list[list[object]]] = {}  # id(axis): the tick levels we set
        self._saved: dict[int, object] = {}  # id(axis): the tick levels it had before
        self.empty = False
        for plot in self.plots:
            for side in SIDES:
                plot.getAxis(side).enableAutoSIPrefix(False)  # no "(x0.001)" on a title

    def set_empty(self, empty: bool, hint: str = "") -> None:
        if self.hint is not None:
            self.hint.setText(hint)
            self.hint.setVisible(empty)
        if empty == self.empty:
            return
        self.empty = empty
        for plot in self.plots:
            for side in SIDES:
                axis = plot.getAxis(side)
                key = id(axis)
                if empty:
                    self._saved[key] = axis._tickLevels
                    self._blank[key] = [[], []]
                    axis.setTicks(self._blank[key])
                elif axis._tickLevels is self._blank.get(key):  # not replaced by the lab
                    axis.setTicks(self._saved.get(key))
