"""Numbers at the end of lines: what a line reaches, written where it ends.

Owns `EndValues`. A line that ends far below its axis' top (a 0.25 GiB cache
under a 16 GiB GPU line) reads as flat at zero; its end value written beside
its last point says what it reaches. The labels are the line's colour, kept
out of auto-range, and replaced on every `show`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg

LABEL_FILL = (255, 255, 255, 210)  # readable over grid lines


class EndValues:
    """End-value labels for some lines of one plot."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.labels: list[pg.TextItem] = []

    def clear(self) -> None:
        for label in self.labels:
            self.plot.removeItem(label)
        self.labels = []

    def show(self, lines: Sequence[tuple[pg.PlotDataItem, str]]) -> None:
        """Write `text` at the last point of each (line, text); a line without data gets none."""
        self.clear()
        log_x, log_y = self.plot.vb.state["logMode"]
        for line, text in lines:
            x, y = line.getData()
            if x is None or len(x) == 0:
                continue
            colour = pg.mkPen(line.opts.get("pen")).color()
            label = pg.TextItem(text, color=colour, anchor=(1, 1), fill=LABEL_FILL)
            px, py = float(x[-1]), float(y[-1])
            label.setPos(np.log10(px) if log_x else px, np.log10(py) if log_y else py)
            self.plot.addItem(label, ignoreBounds=True)
            self.labels.append(label)

    def texts(self) -> list[str]:
        return [label.textItem.toPlainText() for label in self.labels]
