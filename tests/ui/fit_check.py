"""One geometry check for every chart: its titles, legends and tick labels whole and apart.

`layout_faults` measures item rectangles in scene coordinates, not pixels by eye: each
plot's title, each axis' title and tick labels, each legend and each text label in a
view box must lie inside `shown` (what the viewer sees of the scene: a widget's
viewport, or the rect a slide renders), inside their plot, and clear of each other
(an axis title off its tick labels, tick labels off one another, text labels off one
another). It returns one line per fault, so a test reports every clipped title at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QGraphicsTextItem, QGraphicsView

from kvstudio.charts.chart_data import ChartLike, plot_items
from kvstudio.charts.plotted_data import plain_text

SLACK = 1.0  # px: rounding to whole pixels, antialiasing


def text_rect(item: QGraphicsTextItem) -> QRectF:
    """The text's lines (its document less the blank margin around them), in scene px."""
    margin = item.document().documentMargin()
    return item.mapRectToScene(item.boundingRect().adjusted(margin, margin, -margin, -margin))


def tick_rects(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """Every tick label `axis` draws now, with its rect in scene px (pyqtgraph's own specs)."""
    if not axis.isVisible() or not axis.style.get("showValues", True):
        return []
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(text, axis.mapRectToScene(rect)) for rect, _, text in texts]


def _inside(part: QRectF, whole: QRectF) -> bool:
    return whole.adjusted(-SLACK, -SLACK, SLACK, SLACK).contains(part)


def _overlap(a: QRectF, b: QRectF) -> bool:
    both = a.intersected(b)
    return both.width() > SLACK and both.height() > SLACK


def _r(rect: QRectF) -> str:
    return f"({rect.x():.0f},{rect.y():.0f} {rect.width():.0f}×{rect.height():.0f})"


def _shown(text: str) -> bool:
    return bool(plain_text(text).strip())


def _plot_faults(plot: pg.PlotItem, shown: QRectF, where: str) -> Iterator[str]:
    whole = plot.sceneBoundingRect()
    texts: list[tuple[str, QRectF]] = []  # every text of this plot, to be kept apart
    title = plot.titleLabel
    if title.isVisible() and _shown(title.text):
        rect = text_rect(title.item)
        name = f"{where}: title {plain_text(title.text)!r}"
        if not _inside(rect, shown):
            yield f"{name} {_r(rect)} cut by the visible {_r(shown)}"
        texts.append((name, rect))
    for side in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(side)
        if not axis.isVisible():
            continue
        ticks = tick_rects(axis)
        for index, (text, rect) in enumerate(ticks):
            if not _inside(rect, shown):
                yield f"{where}: {side} tick {text!r} {_r(rect)} cut by the visible {_r(shown)}"
            for other, other_rect in ticks[index + 1:]:
                if _overlap(rect, other_rect):
                    yield f"{where}: {side} ticks {text!r} and {other!r} overlap"
        label = axis.label
        if label is not None and label.isVisible() and _shown(label.toPlainText()):
            rect = text_rect(label)
            name = f"{where}: {side} title {label.toPlainText()!r}"
            if not _inside(rect, shown):
                yield f"{name} {_r(rect)} cut by the visible {_r(shown)}"
            elif not _inside(rect, whole):
                yield f"{name} {_r(rect)} runs out of its plot {_r(whole)}"
            for text, tick in ticks:
                if _overlap(rect, tick):
                    yield f"{name} {_r(rect)} over tick {text!r} {_r(tick)}"
            texts.append((name, rect))
    legend = plot.legend
    if legend is not None and legend.isVisible() and legend.items:
        box = legend.sceneBoundingRect()
        for _, label in legend.items:
            if not label.isVisible() or not _shown(label.text):
                continue
            rect = text_rect(label.item)
            name = f"{where}: legend {plain_text(label.text)!r}"
            if not _inside(rect, shown):
                yield f"{name} {_r(rect)} cut by the visible {_r(shown)}"
            elif not _inside(rect, whole):
                yield f"{name} {_r(rect)} runs out of its plot {_r(whole)}"
            texts.append((name, rect))
        if box.width() > 0 and not _inside(box, whole):
            yield f"{where}: legend {_r(box)} runs out of its plot {_r(whole)}"
    labels = [item for item in plot.vb.allChildren()
              if isinstance(item, pg.TextItem) and item.isVisible()
              and _shown(item.textItem.toPlainText())]
    data = plot.vb.sceneBoundingRect()  # a view box clips its items: one wholly out is not drawn
    for item in labels:
        rect = text_rect(item.textItem)
        name = f"{where}: label {item.textItem.toPlainText()!r}"
        if not rect.intersects(data):
            continue
        if not _inside(rect, shown) or not _inside(rect, data):
            yield f"{name} {_r(rect)} cut by the visible {_r(shown.intersected(data))}"
        texts.append((name, rect))
    for index, (name, rect) in enumerate(texts):
        for other, other_rect in texts[index + 1:]:
            if _overlap(rect, other_rect):
                yield f"{name} {_r(rect)} overlaps {other.split(': ', 1)[1]} {_r(other_rect)}"


def layout_faults(plots: Iterable[pg.PlotItem], shown: QRectF, where: str) -> list[str]:
    """Every title, tick label, legend entry and text label of `plots` cut by `shown` (the
    scene rect the viewer sees), out of its plot, or over another one; [] when all fit."""
    return [fault for index, plot in enumerate(plots) if plot.isVisible()
            for fault in _plot_faults(plot, shown, f"{where}/{index}")]


def visible_scene_rect(view: QGraphicsView) -> QRectF:
    """The scene rect a view shows in its viewport."""
    return view.mapToScene(view.viewport().rect()).boundingRect()


def chart_faults(chart: ChartLike, where: str) -> list[str]:
    """`layout_faults` for a chart widget on screen: what its viewport shows."""
    view = chart if isinstance(chart, QGraphicsView) else None
    plots = plot_items(chart)
    if view is None and plots and plots[0].scene() is not None:
        view = plots[0].scene().views()[0]
    assert view is not None, where
    return layout_faults(plots, visible_scene_rect(view), where)


def headline_faults(lines: Iterable[str], font: object, room: float, where: str) -> list[str]:
    """Headline lines wider than `room` (px) in `font`: the slide elides them ("26.…")."""
    metrics = QFontMetricsF(font)  # type: ignore[arg-type]
    return [f"{where}: headline {line!r} is {metrics.horizontalAdvance(line):.0f} px, "
            f"room {room:.0f} px" for line in lines if metrics.horizontalAdvance(line) > room]
