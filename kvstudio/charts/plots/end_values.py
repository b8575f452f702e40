"""Numbers at the end of lines: what a line reaches, written where it ends.

Owns `EndValues`. A line that ends far below its axis' top (a 0.25 GiB cache
under a 16 GiB GPU line) reads as flat at zero; its end value written beside
its last point says what it reaches. The labels are the line's colour, kept
out of auto-range, and replaced on every `show`. Also owns `place_clear`: a
label put at the first of its candidate spots (around a line's end, along the
plot's top rows) that crosses no drawn segment, marker or other label, inside
the plot (the step-time plot's TTFT and total labels sat on its curves), and
`Placement`: where such labels were put, kept while it holds, so a live plot
does not map every drawn point again at each new step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF

LABEL_FILL = (255, 255, 255, 210)  # readable over grid lines
# Where a label may sit around its point, in order: (x, y) anchors of pyqtgraph's TextItem
# (1, 1): left of and above the point; y past 1 lifts it a line, below 0 drops it a line.
CLEAR_ANCHORS = ((1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0), (1.0, 2.2), (1.0, -1.2),
                 (0.0, 2.2), (0.0, -1.2), (1.0, 3.4), (1.0, -2.4))
LABEL_GAP = 3.0  # px a label keeps from a line, a marker, another label and the plot's edge
SPOTS_ALONG = 8  # places along each row of the plot a label may take (from its corner on)


def label_rect(label: pg.TextItem) -> QRectF:
    """Where `label` is drawn now, in scene coordinates (its view's transform applied)."""
    parent = label.parentItem()
    while parent is not None and not isinstance(parent, pg.ViewBox):
        parent = parent.parentItem()
    if parent is not None:
        parent.updateMatrix()  # a range just set is applied when the view paints
    label.updateTransform(force=True)
    return label.mapRectToScene(label.textItem.mapRectToParent(label.textItem.boundingRect()))


def scene_points(item: pg.GraphicsObject, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points (`x`, `y`) of `item`'s data in scene coordinates: (n, 2)."""
    t = item.sceneTransform()  # data → scene: an affine map (a view's scale and offset)
    return np.column_stack([t.m11() * x + t.m21() * y + t.dx(),
                            t.m12() * x + t.m22() * y + t.dy()])


def spots_around(size: QSizeF, point: QPointF) -> Iterator[QPointF]:
    """Places for a label of `size` beside `point` (scene coordinates), in `CLEAR_ANCHORS`'
    order, each `LABEL_GAP` + 1 px off the point so that the line ending there does not
    count as crossing its own label: the label's top-left corners in scene coordinates."""
    off = LABEL_GAP + 1
    for ax, ay in CLEAR_ANCHORS:
        yield QPointF(point.x() - ax * size.width() + (-off if ax >= 1 else off),
                      point.y() - ay * size.height() + (-off if ay >= 1 else off))


def corner_spots(size: QSizeF, view: QRectF, left: bool) -> Iterator[QPointF]:
    """Places for a label of `size` along the rows of `view`, from its top-left (`left`) or
    top-right corner on, `LABEL_GAP` inside its edges: top-left corners, scene coordinates."""
    width, height = size.width() + LABEL_GAP, size.height() + LABEL_GAP
    room = max(view.width() - width - LABEL_GAP, 0.0)
    rows = max(int((view.height() - LABEL_GAP) // height), 1)
    for row in range(rows):
        for i in range(SPOTS_ALONG):
            along = room * i / (SPOTS_ALONG - 1)
            yield QPointF(view.left() + LABEL_GAP + (along if left else room - along),
                          view.top() + LABEL_GAP + row * height)


def crossings(rect: QRectF, lines: np.ndarray, markers: list[QRectF]) -> int:
    """How many of the segments `lines` (rows x0, y0, x1, y1) and `markers` meet `rect`."""
    padded = rect.adjusted(-LABEL_GAP, -LABEL_GAP, LABEL_GAP, LABEL_GAP)
    left, top, right, bottom = padded.left(), padded.top(), padded.right(), padded.bottom()
    x0, y0, x1, y1 = lines.T
    boxes_meet = ((np.maximum(x0, x1) >= left) & (np.minimum(x0, x1) <= right)
                  & (np.maximum(y0, y1) >= top) & (np.minimum(y0, y1) <= bottom))
    # A segment whose box meets the rectangle crosses it unless all four corners lie on
    # one side of its line.
    sides = np.stack([(x1 - x0) * (cy - y0) - (y1 - y0) * (cx - x0)
                      for cx, cy in ((left, top), (right, top), (left, bottom), (right, bottom))])
    one_side = np.all(sides > 0, axis=0) | np.all(sides < 0, axis=0)
    return int(np.count_nonzero(boxes_meet & ~one_side)) + sum(
        1 for marker in markers if padded.intersects(marker))


def place_clear(label: pg.TextItem, size: QSizeF, spots: Iterable[QPointF], view: QRectF,
                lines: np.ndarray, markers: list[QRectF], taken: list[QRectF]) -> QRectF:
    """Put `label` (its `size`) at the first of `spots` inside `view` that covers none of
    `taken` and no line or marker; where none does, at the one inside crossing the fewest
    (or the first spot, where none is inside). Its rect."""
    best: tuple[int, QPointF] | None = None
    first: QPointF | None = None
    for spot in spots:
        if first is None:  # (not `first or spot`: a QPointF at 0, 0 is false)
            first = spot
        rect = QRectF(spot, size)
        if not view.contains(rect) or any(rect.intersects(other) for other in taken):
            continue
        crossed = crossings(rect, lines, markers)
        if crossed == 0:
            return put_label(label, spot)
        if best is None or crossed < best[0]:
            best = (crossed, spot)
    fallback = best[1] if best is not None else first
    return put_label(label, fallback if fallback is not None else view.topLeft())


def put_label(label: pg.TextItem, top_left: QPointF) -> QRectF:
    """Draw `label` with its top-left corner at `top_left` (scene coordinates); its rect."""
    label.setAnchor((0.0, 0.0))
    label.setPos(label.getViewBox().mapSceneToView(top_left))
    return label_rect(label)


def curve_data(curve: pg.PlotDataItem) -> tuple[np.ndarray, np.ndarray]:
    """The points `curve` draws: (x, y), empty arrays when it has none."""
    x, y = curve.getData()
    if x is None or y is None:
        return np.zeros(0), np.zeros(0)
    return np.asarray(x, float), np.asarray(y, float)


def segments(points: np.ndarray) -> np.ndarray:
    """The segments of a line through `points` (n, 2): (n - 1, 4), rows x0, y0, x1, y1; a
    single point: one segment of no length."""
    ends = np.repeat(points, 2, axis=0)[1:-1] if len(points) > 1 else np.vstack([points, points])
    return ends.reshape(-1, 4)


@dataclass
class Placement:
    """Where value labels were last placed (`place_clear`), and what they were placed among."""

    key: tuple[object, ...]  # what moves every label: the views' size and ranges, the runs' ends
    texts: list[str]  # each label's text, in the caller's order ("": not shown)
    rects: list[QRectF | None]  # each one's rect, scene coordinates (None: not shown)
    data: list[tuple[np.ndarray, np.ndarray]]  # each line's points (x, y), in `lines` order
    lines: np.ndarray  # (n, 4): every segment drawn, scene coordinates (rows x0, y0, x1, y1)
    markers: list[QRectF]  # a square around each marker, scene coordinates

    def holds(self, key: tuple[object, ...], curves: Sequence[pg.PlotDataItem],
              labels: Sequence[pg.TextItem], movable: set[pg.TextItem], view: QRectF) -> bool:
        """True if the labels where they stand still cover no line, marker or other label,
        and nothing else moves them: the same `key`; each of `curves` is what was drawn
        plus new points, whose segments cross no label; a label whose text changed is one
        of `movable` (a running total: it changes at every step) and still fits where it
        stands. Then keeps the new segments and texts for the next check.
        """
        if self.key != key:
            return False
        data: list[tuple[np.ndarray, np.ndarray]] = []
        grown: list[np.ndarray] = []
        for curve, (old_x, old_y) in zip(curves, self.data, strict=True):
            x, y = curve_data(curve)
            n = len(old_x)
            if len(x) < n or not (np.array_equal(x[:n], old_x) and np.array_equal(y[:n], old_y)):
                return False  # redrawn (a run replaced, an earlier step shown): not just grown
            if len(x) > n:
                start = max(n - 1, 0)  # from the last point drawn
                grown.append(segments(scene_points(curve, x[start:], y[start:])))
            data.append((x, y))
        new = np.vstack(grown) if grown else np.zeros((0, 4))
        lines = np.vstack([self.lines, new])
        texts = [label.textItem.toPlainText() for label in labels]
        rects = list(self.rects)
        for index, label in enumerate(labels):
            if texts[index] == self.texts[index]:
                continue
            if label not in movable or not texts[index] or not self.texts[index]:
                return False  # a fixed label changed, or a label came or went
            rect = label_rect(label)  # (its top-left corner stays where it was placed)
            others = [r for i, r in enumerate(rects) if r is not None and i != index]
            if (not view.contains(rect) or any(rect.intersects(r) for r in others)
                    or crossings(rect, lines, self.markers)):
                return False
            rects[index] = rect
        if len(new):  # the new segments (a few, at the lines' ends): any on a label?
            xs, ys = new[:, 0::2], new[:, 1::2]
            reach = QRectF(QPointF(xs.min(), ys.min()), QPointF(xs.max(), ys.max()))
            near = reach.adjusted(-LABEL_GAP - 1, -LABEL_GAP - 1, LABEL_GAP + 1, LABEL_GAP + 1)
            if any(crossings(rect, new, []) for rect in rects
                   if rect is not None and rect.intersects(near)):
                return False
        self.texts, self.rects, self.data, self.lines = texts, rects, data, lines
        return True


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
