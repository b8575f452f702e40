"""The serving lab's timeline: requests × steps, each cell coloured by what the request did.

Owns the colours of the serving charts (`PHASE_COLOURS` for waiting, prefill
chunk, decode, idle row, preempted and finished; the tokens-fed and blocks
stacks), `RequestAxis` (the timeline's y axis, one "#r" per request row, tall
enough for its labels in the window and on a slide) and `stack_layer` (one
layer of stacked bars).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from kvstudio.charts.plots.sizing import MIN_PLOT_HEIGHT

ROW_LABEL_FILL = 0.9  # the most of the timeline's y axis its row labels may fill

# The timeline's colours (Okabe–Ito where it can); "future" cells are not drawn.
PHASE_COLOURS: dict[str, str] = {
    "waiting": "#B8B8B8",
    "prefill": "#E69F00",
    "decode": "#0072B2",
    "idle": "#CC79A7",
    "preempted": "#D55E00",
    "finished": "#CFE8DA",
}
PREFILL_COLOUR, DECODE_COLOUR, PADDING_COLOUR = "#E69F00", "#0072B2", "#CC79A7"
REQUEST_BLOCKS_COLOUR, CACHED_BLOCKS_COLOUR, FREE_BLOCKS_COLOUR = "#0072B2", "#009E73", "#DDDDDD"
BAR_WIDTH = 0.8


class RequestAxis(pg.AxisItem):
    """The timeline's y axis: a label "#r" on every request row, its view box kept tall
    enough for them in its tick font (a slide's is twice the window's).

    Even rows are always labelled, odd rows where there is room: pyqtgraph drops a second
    level once all its labels would fill `ROW_LABEL_FILL` of the axis (its own limit, 0.4
    with three labels drawn, dropped the odd rows on the slide), so many requests on a
    short axis still keep the even ones.
    """

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.rows = 0
        self.setStyle(textFillLimits=[(0, ROW_LABEL_FILL)])

    def set_rows(self, rows: int) -> None:
        self.rows = rows
        labels = [(r, f"#{r}") for r in range(rows)]
        self.setTicks([labels[::2], labels[1::2]])
        self.fit_rows()

    def setTickFont(self, font: QFont | None) -> None:  # (pyqtgraph's name)
        super().setTickFont(font)
        self.fit_rows()

    def fit_rows(self) -> None:
        """The view box's minimum height: every row's label (pyqtgraph counts 0.8 of a
        line each) within `ROW_LABEL_FILL` of the axis, and never under the usual minimum."""
        view = self.linkedView()
        if view is None:
            return
        font = self.style["tickFont"]
        line = QFontMetricsF(font if font is not None else QFont()).height()
        needed = math.ceil(self.rows * 0.8 * line / ROW_LABEL_FILL) + 2
        view.setMinimumHeight(max(MIN_PLOT_HEIGHT, needed))


def stack_layer(bars: pg.BarGraphItem, x: np.ndarray, bottom: np.ndarray, size: np.ndarray) -> None:
    """One layer of stacked bars, only where it has height (a legend lists what is drawn)."""
    keep = size > 0
    bars.setOpts(x=x[keep], y0=bottom[keep], height=size[keep])
