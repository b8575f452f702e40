"""Numbers at the end of lines: what a line reaches, written where it ends.

Owns `EndValues`. A line that ends far below its axis' top (a 0.25 GiB cache
under a 16 GiB GPU line) reads as flat at zero; its end value written beside
its last point says what it reaches. The labels are the line's colour, kept
out of auto-range, and replaced on every `show`. Also owns `place_clear_of`:
a label moved to the first spot around its point that covers no other label
(the step-time plot's "Σ 197 ms" sat on its TTFT label at 1366×768).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

LABEL_FILL = (255, 255, 255, 210)  # readable over grid lines
# Where a label may sit around its point, in order: (x, y) anchors of pyqtgraph's TextItem
# (1, 1): left of and above the point; y past 1 lifts it a line, below 0 drops it a line.
CLEAR_ANCHORS = ((1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0), (1.0, 2.2), (1.0, -1.2),
                 (0.0, 2.2), (0.0, -1.2), (1.0, 3.4), (1.0, -2.4))


def label_rect(label: pg.TextItem) -> QRectF:
    """Where `label` is drawn now, in scene coordinates (its view's transform applied)."""
    parent = label.parentItem()
    while parent is not None and not isinstance(parent, pg.ViewBox):
        parent = parent.parentItem()
    if parent is not None:
        parent.updateMatrix()  # a range just set is applied when the view paints
    label.updateTransform(force=True)
    return label.mapRectToScene(label.textItem.mapRectToParent(label.textItem.boundingRect()))


def place_clear_of(label: pg.TextItem, others: Sequence[QRectF], inside: QRectF) -> QRectF:
    """Anchor `label` at the first spot around its point that overlaps none of `others` and
    stays `inside` (the view box); where none does, at the first one inside. Its rect."""
    first_inside: tuple[float, float] | None = None
    for anchor in CLEAR_ANCHORS:
        label.setAnchor(anchor)
        rect = label_rect(label)
        if not inside.contains(rect):
            continue
        if not any(rect.intersects(other) for other in others):
            return rect
        if first_inside is None:
            first_inside = anchor
    label.setAnchor(first_inside or CLEAR_ANCHORS[0])
    return label_rect(label)


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
