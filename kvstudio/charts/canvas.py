"""The slide canvas a chart is laid out on for export, and finding the chart.

Owns finding the views drawn over a chart (`companion_views`; its plot items are
``kvstudio.charts.chart_data``'),
settling its layout so axes are never blank (`settle_layout`), the slide theme
while rendering (`slide_theme`), the canvases (`SlideCanvas`, `CANVASES`,
`canvas_named`), and laying a chart out at the canvas size for one render
(`on_canvas`). Rendering is ``render.py``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsWidget,
    QStyleOptionGraphicsItem,
)

from kvstudio.charts.chart_data import ExportError, plot_items
from kvstudio.charts.plots.sizing import grows_to_its_minimum
from kvstudio.charts.style import SLIDE_STYLE, PlotStyle, apply_plot_style, slide_style_for

logger = logging.getLogger(__name__)


def companion_views(item: QGraphicsItem) -> list[pg.ViewBox]:
    """ViewBoxes drawn over the chart but not inside it (e.g. a second y axis's view).

    pyqtgraph's recipe for a right-hand axis adds its ViewBox to the scene
    directly, so it is not a child of the PlotItem; the theme, the CSV and the
    SVG must still include it.
    """
    scene = item.scene()
    if scene is None:
        return []
    rect = item.sceneBoundingRect()
    found = []
    for other in scene.items():
        if other.parentItem() is not None or other is item or other.isAncestorOf(item):
            continue
        if item.isAncestorOf(other) or not isinstance(other, pg.ViewBox):
            continue
        if other.isVisible() and other.sceneBoundingRect().intersects(rect):
            found.append(other)
    return found


def scene_of(item: QGraphicsItem) -> pg.GraphicsScene:
    scene = item.scene()
    if scene is None:
        raise ExportError("This chart is not shown in any view; add it to a plot widget first.")
    return scene


# ---- layout and theme ----------------------------------------------------------------------
def _layout_signature(item: QGraphicsItem) -> tuple[float, ...]:
    sig: list[float] = []
    rect = item.sceneBoundingRect()
    sig += [rect.width(), rect.height()]
    for child in plot_items(item) if not isinstance(item, pg.PlotItem) else [item]:
        for name in ("left", "bottom", "right", "top"):
            axis = child.getAxis(name)
            if axis.isVisible():
                g = axis.geometry()
                sig += [round(g.width(), 1), round(g.height(), 1)]
                # what the last paint measured: the range's tick labels and their size
                sig += [*axis.range, round(axis.textWidth, 1), round(axis.textHeight, 1)]
    return tuple(sig)


# What pyqtgraph changes while painting an item (the rest of a paint only draws): an axis
# measures its tick labels and sizes itself for them, and a TextItem painted in a scene for
# the first time starts following the scene's prepare-for-paint (and, that once, draws its
# box at its scene transform, ignoring the painter's). Our own items change nothing there.
PAINT_CHANGES = (pg.AxisItem, pg.TextItem)


def _paint_what_changes(scene: QGraphicsScene, rect: QRectF) -> None:
    """What rendering `rect` of `scene` would change, without drawing the rest of it.

    The same steps as the scene's `render` up to its paint: the views bring their
    ranges up to their data (pyqtgraph's prepare-for-paint), then each visible item
    of `PAINT_CHANGES` the render would paint (its bounding rect meets `rect`),
    bottom first, is painted into a 1×1 scratch image. An axis builds its picture
    into a QPicture of its own, so its measure does not depend on the painter.
    """
    if isinstance(scene, pg.GraphicsScene):
        scene.prepareForPaint()
    items = scene.items(rect, Qt.ItemSelectionMode.IntersectsItemBoundingRect,
                        Qt.SortOrder.AscendingOrder)
    changing = [each for each in items
                if isinstance(each, PAINT_CHANGES) and each.isVisible()
                and each.effectiveOpacity() >= 0.001  # (Qt skips a fully transparent one)
                # An axis whose picture is current was measured for what it shows now.
                and not (isinstance(each, pg.AxisItem) and each.picture is not None)]
    if not changing:
        return
    scratch = QImage(1, 1, QImage.Format.Format_RGB32)
    option = QStyleOptionGraphicsItem()
    painter = QPainter(scratch)
    try:
        for each in changing:
            painter.save()
            each.paint(painter, option, None)
            painter.restore()
    finally:
        painter.end()


def settle_layout(item: QGraphicsItem, max_rounds: int = 12) -> None:
    """Process events and measure until a measure finds the chart as the round before left it.

    An axis learns how wide its tick labels are only when it is painted, and
    the layout follows in a later event-loop pass; exporting before that gives
    blank or clipped y-axis labels (STACK-NOTES). So each round lets the events
    run (a resize, a queued title wrap, new data), then does what a render would
    change (`_paint_what_changes`: the axes measure the ticks of their current
    ranges; nothing else is drawn, which was most of the cost), and compares the
    axes' geometry, ranges and measured text size with the round before.
    Measuring last matters: new data arriving in the last events would otherwise
    go unmeasured, and its wider tick labels (4.5 after 4) would be drawn over
    the axis' title.
    """
    app = QApplication.instance()
    scene = scene_of(item)
    previous: tuple[float, ...] | None = None
    for _ in range(max_rounds):
        if app is not None:
            app.processEvents()
        _paint_what_changes(scene, item.sceneBoundingRect())
        current = _layout_signature(item)
        if current == previous:
            return
        previous = current
    logger.debug("Chart layout still moving after %d rounds; exporting anyway.", max_rounds)


@contextlib.contextmanager
def slide_theme(
    item: QGraphicsItem, device_width: float | None, base: PlotStyle = SLIDE_STYLE
) -> Iterator[PlotStyle]:
    """Apply the slide theme for one render, settle the layout, restore on exit.

    device_width None = vector output (pens in chart pixels).
    """
    source_width = item.sceneBoundingRect().width()
    style = slide_style_for(source_width, device_width or source_width, base)
    restorer = apply_plot_style(item, style)
    extras = [apply_plot_style(view, style) for view in companion_views(item)]
    try:
        _reserve_tick_text_height(item)
        settle_layout(item)
        yield style
    finally:
        for extra in reversed(extras):
            extra.restore()
        restorer.restore()
        settle_layout(item)


def _reserve_tick_text_height(item: QGraphicsItem) -> None:
    """Give horizontal axes a line of tick text: pyqtgraph measures only the ascent.

    Without it the slide's large tick labels hang below the axis and the
    page's bottom edge cuts them. The theme's restorer puts the old height back.
    """
    for plot in [item] if isinstance(item, pg.PlotItem) else plot_items(item):
        for side in ("bottom", "top"):
            axis = plot.getAxis(side)
            font = axis.style.get("tickFont")
            if not axis.isVisible() or font is None:
                continue
            needed = QFontMetricsF(font).height()
            if axis.textHeight < needed:
                axis.textHeight = needed
                axis._updateHeight()


# ---- the slide canvas ----------------------------------------------------------------------
@dataclass(frozen=True)
class SlideCanvas:
    """The page every export is drawn on, whatever the size of the chart on screen."""

    key: str  # stable name (settings, file names)
    width: int  # px (PNG pixels; PDF at 96 dpi; SVG user units)
    height: int

    @property
    def label(self) -> str:
        return f"{self.key} · {self.width}×{self.height}"


CANVASES: tuple[SlideCanvas, ...] = (
    SlideCanvas("16:9", 1920, 1080),  # a full-HD slide (the default)
    SlideCanvas("16:9 small", 1280, 720),  # lighter files, still a whole slide
    SlideCanvas("4:3", 1440, 1080),  # older projectors and slide masters
)


DEFAULT_CANVAS = CANVASES[0]


def canvas_named(key: str) -> SlideCanvas:
    for canvas in CANVASES:
        if canvas.key == key:
            return canvas
    raise ExportError(
        f"Unknown slide size {key!r}; use one of {', '.join(c.key for c in CANVASES)}."
    )


@contextlib.contextmanager
def on_canvas(item: QGraphicsItem, size: QSizeF) -> Iterator[None]:
    """Lay the chart out at `size` (logical px) for one render; put it back afterwards.

    The chart is the item the window shows; while it is laid out at the slide's
    size its views do not repaint, so the screen does not flicker.
    """
    if not isinstance(item, QGraphicsWidget):
        yield
        return
    scene = scene_of(item)
    app = QApplication.instance()
    if app is not None:
        # A chart just shown may still have a resize queued; delivered during the render
        # (settle_layout processes events) it would lay the chart out at its screen size.
        app.processEvents()
    old = item.geometry()
    views = [view for view in scene.views() if view.updatesEnabled()]
    for view in views:
        view.setUpdatesEnabled(False)
    layout = QGraphicsWidget.layout(item)  # PlotItem shadows layout() with an attribute
    try:
        with grows_to_its_minimum(item):
            item.setGeometry(QRectF(old.topLeft(), size))
            if layout is not None:
                layout.activate()
            yield
    finally:
        item.setGeometry(old)
        if layout is not None:
            layout.activate()
        for view in views:
            view.setUpdatesEnabled(True)
