"""Chart export for slides: PNG, SVG, vector PDF and CSV, written atomically.

Owns turning a pyqtgraph chart (a `PlotItem`, a `GraphicsLayout`, or the
`PlotWidget` / `GraphicsLayoutWidget` that shows one) into bytes, and writing
those bytes so that a file is either complete or absent:

- every image on a fixed *slide canvas* (16:9 1920×1080 by default, 1280×720,
  4:3 1440×1080): the chart is laid out at the canvas size for the render,
  whatever its size on screen, under an optional headline with its numbers,
- PNG of exactly the canvas, vector PDF with every page the canvas (96 dpi),
- SVG through pyqtgraph's exporter, with text turned into glyph outlines and
  bars into page coordinates (``svg_outlines.py``),
- CSV of the chart's data from its records (``chart_data.py``),
- a *slide pack*: every chart in every format plus the numbers as CSV/JSON.

The slide theme is applied only while rendering and restored afterwards (see
``plots/style.py``); layout is settled before each render so that axes are
never blank. The menu and button that put this behind a chart live in
``export_menu.py``. Failures raise `ExportError` with a message a lecturer
can act on.
"""

from __future__ import annotations

import contextlib
import errno
import html
import json
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import SVGExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPainterPath,
    QPdfWriter,
)
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView, QGraphicsWidget

from kvstudio.files.folder_write import write_files
from kvstudio.files.runfile import atomic_write_bytes
from kvstudio.ui.plots.style import (
    SLIDE_REFERENCE_WIDTH,
    SLIDE_STYLE,
    PlotStyle,
    apply_plot_style,
    slide_style_for,
)
from kvstudio.ui.slides.chart_data import (
    DataTable,
    Series,
    content_of,
    csv_rows,
    tables_to_csv,
)
from kvstudio.ui.slides.svg_outlines import compose_canvas, path_data

logger = logging.getLogger(__name__)

ExportFormat = Literal["png", "svg", "pdf", "csv"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("png", "svg", "pdf", "csv")

ChartLike = Any  # PlotItem | GraphicsLayout | PlotWidget | GraphicsLayoutWidget
SCRATCH_DIVISOR = 4




class ExportError(RuntimeError):
    """An export could not be written; the message says why and what to do."""


@dataclass(frozen=True)
class SeriesData:
    """One plotted series, as numbers."""

    plot: str  # the plot's title (or "plot N")
    series: str  # legend name (or "series N")
    x: tuple[float, ...]
    y: tuple[float, ...]


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


def _scene_of(item: QGraphicsItem) -> pg.GraphicsScene:
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
    return tuple(sig)


def settle_layout(item: QGraphicsItem, max_rounds: int = 12) -> None:
    """Paint and process events until the chart's geometry stops changing.

    An axis learns how wide its tick labels are only when it is painted, and
    the layout follows in a later event-loop pass; exporting before that gives
    blank or clipped y-axis labels (STACK-NOTES). A throwaway paint plus
    `processEvents` repeated until two rounds agree avoids it.
    """
    app = QApplication.instance()
    scene = _scene_of(item)
    previous: tuple[float, ...] | None = None
    for _ in range(max_rounds):
        rect = item.sceneBoundingRect()
        # A quarter-size scratch paint is enough: axes measure their labels in item units.
        scratch = QImage(
            max(1, int(rect.width() / SCRATCH_DIVISOR)),
            max(1, int(rect.height() / SCRATCH_DIVISOR)),
            QImage.Format.Format_RGB32,
        )
        painter = QPainter(scratch)
        try:
            scene.render(painter, QRectF(scratch.rect()), rect)
        finally:
            painter.end()
        if app is not None:
            app.processEvents()
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


@dataclass(frozen=True)
class _Headline:
    """Headline lines laid out for a canvas: font, line height, band height."""

    lines: tuple[str, ...]
    font: QFont
    line_height: float
    band: float  # the chart starts this far down the page
    margin: float
    colour: str

    def baselines(self) -> list[float]:
        top = self.margin * 0.6
        return [top + self.line_height * (i + 0.8) for i in range(len(self.lines))]


def _headline(text: str | None, canvas: SlideCanvas, style: PlotStyle) -> _Headline:
    lines = tuple(line.strip() for line in (text or "").splitlines() if line.strip())[:3]
    scale = canvas.width / SLIDE_REFERENCE_WIDTH
    font = QFont(style.font_family) if style.font_family else QFont()
    font.setPixelSize(max(1, round(style.title_px * 0.78 * scale)))
    font.setBold(False)
    line_height = QFontMetricsF(font).lineSpacing()
    margin = 24 * scale
    band = line_height * len(lines) + margin if lines else margin / 2
    return _Headline(lines, font, line_height, band, margin, style.foreground)


def _fit_line(line: str, font: QFont, width: float) -> str:
    """Shorten a headline line with an ellipsis rather than let it run off the page."""
    return QFontMetricsF(font).elidedText(line, Qt.TextElideMode.ElideRight, width)


def _draw_headline(painter: QPainter, head: _Headline, canvas: SlideCanvas) -> None:
    painter.setFont(head.font)
    painter.setPen(QColor(head.colour))
    for line, y in zip(head.lines, head.baselines(), strict=True):
        painter.drawText(
            QPointF(head.margin, y), _fit_line(line, head.font, canvas.width - 2 * head.margin)
        )


def _headline_paths(head: _Headline, canvas: SlideCanvas) -> list[tuple[str, str]]:
    out = []
    for line, y in zip(head.lines, head.baselines(), strict=True):
        path = QPainterPath()
        path.addText(
            QPointF(head.margin, y), head.font,
            _fit_line(line, head.font, canvas.width - 2 * head.margin),
        )
        out.append((path_data(path), head.colour))
    return out


@contextlib.contextmanager
def on_canvas(item: QGraphicsItem, size: QSizeF) -> Iterator[None]:
    """Lay the chart out at `size` (logical px) for one render; put it back afterwards.

    The chart is the item the window shows; while it is laid out at the slide's
    size its views do not repaint, so the screen does not flicker.
    """
    if not isinstance(item, QGraphicsWidget):
        yield
        return
    scene = _scene_of(item)
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


@contextlib.contextmanager
def _prepared(
    chart: ChartLike, canvas: SlideCanvas, style: PlotStyle | None, headline: str | None
) -> Iterator[tuple[QGraphicsItem, _Headline, PlotStyle | None]]:
    """The chart laid out below its headline on `canvas`, themed; everything restored after."""
    item = chart_item(chart)
    head = _headline(headline, canvas, style or SLIDE_STYLE)
    rect = _chart_rect(head, canvas)
    size = QSizeF(rect.width(), rect.height())
    with on_canvas(item, size), _maybe_theme(item, canvas.width, style) as used:
        yield item, head, used


def _chart_rect(head: _Headline, canvas: SlideCanvas) -> QRectF:
    """Where the chart goes: below the headline, a small margin left, right and below."""
    side = head.margin / 2
    return QRectF(side, head.band, canvas.width - 2 * side, canvas.height - head.band - side)


# ---- rendering to bytes --------------------------------------------------------------------
def _image_to_png(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # stubs say bytes; str works
        raise ExportError("Qt could not encode the PNG image (out of memory?).")
    buffer.close()
    return bytes(data.data())


def _paint_page(
    painter: QPainter, item: QGraphicsItem, head: _Headline, canvas: SlideCanvas, background: str
) -> None:
    page = QRectF(0, 0, canvas.width, canvas.height)
    painter.fillRect(page, QColor(background))
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    if head.lines:
        _draw_headline(painter, head, canvas)
    _scene_of(item).render(painter, _chart_rect(head, canvas), item.sceneBoundingRect())


def render_image(
    chart: ChartLike,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: str | None = None,
) -> QImage:
    """The chart on a `canvas`-sized image; `style` None = its on-screen colours."""
    image = QImage(canvas.width, canvas.height, QImage.Format.Format_ARGB32)
    if image.isNull():
        raise ExportError(f"Cannot allocate a {canvas.width}×{canvas.height} image.")
    with _prepared(chart, canvas, style, headline) as (item, head, used):
        painter = QPainter(image)
        try:
            _paint_page(painter, item, head, canvas, used.background if used else "#ffffff")
        finally:
            painter.end()
    return image


def render_png(
    chart: ChartLike,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: str | None = None,
) -> bytes:
    return _image_to_png(render_image(chart, canvas, style, headline))


@contextlib.contextmanager
def _maybe_theme(
    item: QGraphicsItem, device_width: float | None, style: PlotStyle | None
) -> Iterator[PlotStyle | None]:
    if style is None:
        settle_layout(item)
        yield None
    else:
        with slide_theme(item, device_width, style) as used:
            yield used


def render_svg(
    chart: ChartLike,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: str | None = None,
) -> bytes:
    """The chart as SVG on the canvas, text as glyph outlines; checked to parse and hold paths.

    Outlines need no font on the reader's machine (Hangul shows on a system
    without a Korean font); bars are moved into page coordinates so their
    outlines survive viewers that ignore non-scaling strokes.
    """
    with _prepared(chart, canvas, style, headline) as (item, head, used):
        exporter = SVGExporter(_svg_source(item))
        params = exporter.parameters()
        rect = item.sceneBoundingRect()
        params["width"] = rect.width()
        params["height"] = rect.height()
        background = used.background if used is not None else "#ffffff"
        params["background"] = QColor(background)
        try:
            data = exporter.export(toBytes=True)
        except ValueError as exc:  # pyqtgraph#3495: Qt >= 6.11 ends closed paths with " Z"
            raise ExportError(
                f"SVG export failed inside pyqtgraph ({exc}). This happens with Qt 6.11 or "
                "newer and pyqtgraph 0.14.0; install PySide6-Essentials 6.10 (see "
                "STACK-NOTES) or export PDF instead."
            ) from exc
        try:
            chart_at = _chart_rect(head, canvas).topLeft()
            text = compose_canvas(
                bytes(data).decode("utf-8"), canvas.width, canvas.height,
                (chart_at.x(), chart_at.y()), background, _headline_paths(head, canvas),
            )
        except ET.ParseError as exc:
            raise ExportError(
                f"The SVG export is not valid XML ({exc}); please report this."
            ) from exc
    _check_svg(text)
    return text.encode("utf-8")


def _svg_source(item: QGraphicsItem) -> QGraphicsItem | pg.GraphicsScene:
    """The item, or its whole scene when the item fills a view that also shows companions.

    pyqtgraph's SVG exporter walks one item's children; a right-axis ViewBox
    lives beside the PlotItem, so exporting only the item would drop its curves.
    """
    scene = item.scene()
    if scene is None or not companion_views(item):
        return item
    views = scene.views()
    if views and getattr(views[0], "centralWidget", None) is item:
        return scene
    return item


def _check_svg(svg: str) -> None:
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as exc:
        raise ExportError(f"The SVG export is not valid XML ({exc}); please report this.") from exc
    drawn = [
        el
        for el in root.iter()
        if (el.tag.endswith("}path") and el.get("d"))
        or (el.tag.endswith("}polyline") and el.get("points"))
    ]
    if not drawn:
        raise ExportError("The SVG export has no drawing in it; is the chart empty?")


def render_pdf(
    charts: Sequence[ChartLike],
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headlines: Sequence[str | None] | None = None,
) -> bytes:
    """A vector PDF, one page per chart, every page the canvas (96 dpi: 1 px = 0.75 pt)."""
    if not charts:
        raise ExportError("Nothing to export: no charts were given.")
    heads = list(headlines) if headlines is not None else [None] * len(charts)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(96)
    writer.setCreator("KV Studio")
    writer.setPageLayout(
        QPageLayout(
            QPageSize(
                QSizeF(canvas.width * 0.75, canvas.height * 0.75),  # px → pt
                QPageSize.Unit.Point,
                f"slide {canvas.key}",
                QPageSize.SizeMatchPolicy.ExactMatch,
            ),
            QPageLayout.Orientation.Portrait,
            QMarginsF(0, 0, 0, 0),
        )
    )
    painter: QPainter | None = None
    try:
        for index, chart in enumerate(charts):
            with _prepared(chart, canvas, style, heads[index]) as (item, head, used):
                if painter is None:
                    painter = QPainter(writer)
                else:
                    writer.newPage()
                _paint_page(painter, item, head, canvas, used.background if used else "#ffffff")
    finally:
        if painter is not None:
            painter.end()
        buffer.close()
    pdf = bytes(data.data())
    if not pdf.startswith(b"%PDF"):
        raise ExportError("Qt produced an empty PDF; is the chart visible and sized?")
    return pdf


# ---- data ----------------------------------------------------------------------------------
def plotted_data(chart: ChartLike) -> list[SeriesData]:
    """The numbers each plot in the chart draws (a fallback for charts with no content).

    Log axes are undone (pyqtgraph keeps the original data in xData/yData).
    """
    out: list[SeriesData] = []
    root = chart_item(chart)
    extra_items = [i for view in companion_views(root) for i in view.addedItems]
    for p_index, plot in enumerate(plot_items(chart)):
        plot_name = plain_text(plot.titleLabel.text) or f"plot {p_index + 1}"
        legend_names = _legend_names(plot)
        counter = 0
        items = list(plot.items) + (extra_items if p_index == 0 else [])
        for item in items:
            counter += 1
            name = legend_names.get(id(item)) or _series_name(item) or f"series {counter}"
            xy = _item_xy(item)
            if xy is None:
                counter -= 1
                continue
            x, y = xy
            out.append(SeriesData(plot_name, name, tuple(map(float, x)), tuple(map(float, y))))
    return out


def _legend_names(plot: pg.PlotItem) -> dict[int, str]:
    """Series names as the legend shows them (plots often name series only there)."""
    legend = plot.legend
    if legend is None:
        return {}
    return {id(sample.item): plain_text(label.text) for sample, label in legend.items}


def plain_text(markup: str | None) -> str:
    """Text of a title or label without its HTML tags (escaped text comes back as typed)."""
    text = re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", "\n", markup or ""))
    return html.unescape(text).strip()


def _series_name(item: Any) -> str:
    name = item.name() if hasattr(item, "name") and callable(item.name) else None
    if not name and hasattr(item, "opts") and isinstance(item.opts, dict):
        name = item.opts.get("name")
    return str(name) if name else ""


def _item_xy(item: Any) -> tuple[np.ndarray, np.ndarray] | None:
    if isinstance(item, pg.BarGraphItem):
        opts = item.opts
        height = opts.get("height")
        if height is None:
            return None
        x = opts.get("x")
        if x is None:
            x = opts.get("x0")
        if x is None:
            return None
        h = np.broadcast_to(np.asarray(height, dtype=float), np.shape(np.atleast_1d(x)))
        return np.atleast_1d(np.asarray(x, dtype=float)), np.asarray(h, dtype=float)
    if isinstance(item, pg.PlotDataItem):
        x, y = item.xData, item.yData  # the data as set, before log10 of a log axis
    elif isinstance(item, pg.PlotCurveItem | pg.ScatterPlotItem):
        x, y = item.getData()
    else:
        return None
    if x is None or y is None:
        return np.array([]), np.array([])
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def chart_tables(chart: ChartLike) -> list[DataTable]:
    """The chart's data tables: from its content (the records) or, failing that, its items."""
    content = content_of(chart)
    if content is not None:
        found = content.data_tables()
        if found:
            return found
    tables: dict[str, list[Series]] = {}  # a chart whose owner gives no data: its items
    for s in plotted_data(chart):
        tables.setdefault(s.plot, []).append(Series(s.series, s.x, s.y))
    return [DataTable(plot, "x", tuple(series)) for plot, series in tables.items()]


def chart_headline(chart: ChartLike) -> str:
    content = content_of(chart)
    return content.headline() if content is not None else ""


def chart_is_empty(chart: ChartLike) -> bool:
    tables = chart_tables(chart)
    return not tables or all(t.empty for t in tables)


def render_csv(chart: ChartLike) -> bytes:
    """CSV of the chart's data: one table per plot, x first, one named column per series."""
    tables = [t for t in chart_tables(chart) if not t.empty]
    if not tables:
        raise ExportError(_EMPTY_MESSAGE)
    return tables_to_csv(tables)


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """A results table (list of dicts with the same keys) as CSV, numbers as numbers."""
    if not rows:
        return b""
    fields = list(rows[0].keys())
    for row in rows[1:]:
        fields += [k for k in row if k not in fields]
    body = [[_csv_value(row.get(k)) for k in fields] for row in rows]
    return csv_rows([[fields, *body]])


def _csv_value(value: Any) -> Any:
    """Lists as JSON text; everything else as it is (`csv_cell` tells numbers from text)."""
    if isinstance(value, list | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value


_EMPTY_MESSAGE = (
    "This chart has no data yet, so there is nothing to export: run the model (or the lab) "
    "first, then export again."
)


# ---- writing -------------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` via a temp file in the same folder and `os.replace`.

    The file is complete or absent: on any failure the temp file is removed and
    an `ExportError` explains what to do.
    """
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ExportError(f"Cannot save {target.name}: {folder} {what}. Choose another folder.")
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise ExportError(_os_error_message(target, exc)) from exc
    logger.info("Wrote %s (%d bytes)", target, len(data))
    return target


def _os_error_message(target: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"Cannot save {target.name}: the disk is full. Free some space or choose a folder "
            "on another drive; nothing was written."
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"Cannot save {target.name}: {target.parent} is not writable. Choose a folder you "
            "can write to (for example your Documents folder); nothing was written."
        )
    return (
        f"Cannot save {target.name} in {target.parent}: {exc.strerror or exc}. Choose another "
        "folder; nothing was written."
    )


def export_chart(
    chart: ChartLike,
    path: str | os.PathLike[str],
    fmt: ExportFormat | None = None,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: bool = True,
) -> Path:
    """Export one chart on `canvas`; the format comes from `fmt` or the file's suffix.

    An empty chart is refused with a message (it would be a blank slide).
    """
    target = Path(path)
    kind = fmt or target.suffix.lower().lstrip(".")
    if kind not in EXPORT_FORMATS:
        raise ExportError(
            f"Unknown export format {kind!r}; use one of {', '.join(EXPORT_FORMATS)}."
        )
    if chart_is_empty(chart):
        raise ExportError(_EMPTY_MESSAGE)
    head = chart_headline(chart) if headline else None
    if kind == "png":
        data = render_png(chart, canvas, style, head)
    elif kind == "svg":
        data = render_svg(chart, canvas, style, head)
    elif kind == "pdf":
        data = render_pdf([chart], canvas, style, [head])
    else:
        data = render_csv(chart)
    return atomic_write(target, data)


def safe_file_stem(name: str) -> str:
    """A file name from a chart title: letters (any script), digits, - and _ only."""
    stem = re.sub(r"[^\w\-]+", "-", name.strip(), flags=re.UNICODE).strip("-")
    return stem or "chart"


@dataclass(frozen=True)
class SlidePack:
    """What `export_slide_pack` wrote, and the charts it left out because they were empty."""

    written: tuple[Path, ...]
    skipped: tuple[str, ...]


def export_slide_pack(
    charts: Mapping[str, ChartLike],
    folder: str | os.PathLike[str],
    numbers: Mapping[str, Any] | None = None,
    tables: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: bool = True,
) -> SlidePack:
    """Write every chart (PNG, SVG, PDF, CSV), one PDF with all of them, and the numbers.

    Every image is `canvas`-sized and every PDF page the same size. Charts with
    no data are left out and named in `SlidePack.skipped` (and in
    numbers.json). `numbers` goes to numbers.json; each of `tables` to
    <name>.csv. All files are rendered in memory first, then written beside
    the folder and swapped in (``kvstudio.files.folder_write``): if any write
    fails (a full disk), the folder keeps exactly what it held before, an
    earlier pack included; a kill at any moment leaves the earlier pack or
    the new one whole, and the next export removes what it left beside.
    """
    out = Path(folder)
    drawn = {name: chart for name, chart in charts.items() if not chart_is_empty(chart)}
    skipped = tuple(name for name in charts if name not in drawn)
    if not drawn and not numbers and not tables:
        raise ExportError("Nothing to export yet: run the model or a lab first.")
    files: dict[str, bytes] = {}
    heads: list[str | None] = []
    for name, chart in drawn.items():
        stem = safe_file_stem(name)
        head = chart_headline(chart) if headline else None
        heads.append(head)
        files[f"{stem}.png"] = render_png(chart, canvas, style, head)
        files[f"{stem}.svg"] = render_svg(chart, canvas, style, head)
        files[f"{stem}.pdf"] = render_pdf([chart], canvas, style, [head])
        files[f"{stem}.csv"] = render_csv(chart)
    if len(drawn) > 1:
        files["all-charts.pdf"] = render_pdf(list(drawn.values()), canvas, style, heads)
    if numbers or skipped:
        document = dict(numbers or {})
        document["slide_canvas"] = {"size": canvas.key, "width_px": canvas.width,
                                    "height_px": canvas.height}
        if skipped:
            document["skipped_empty_charts"] = list(skipped)
        files["numbers.json"] = (
            json.dumps(document, ensure_ascii=False, indent=2, default=_json_default) + "\n"
        ).encode("utf-8")
    for name, rows in (tables or {}).items():
        files[f"{safe_file_stem(name)}.csv"] = rows_to_csv(rows)
    try:
        written = write_files(out, files)
    except OSError as exc:
        raise ExportError(_os_error_message(out / "slides", exc)) from exc
    logger.info("Wrote a slide pack of %d files to %s", len(written), out)
    return SlidePack(tuple(written), skipped)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)


def view_of(chart: ChartLike) -> QGraphicsView | None:
    """The first view that shows the chart (for dialogs' parent), if any."""
    scene = chart_item(chart).scene()
    views = scene.views() if scene is not None else []
    return views[0] if views else None
