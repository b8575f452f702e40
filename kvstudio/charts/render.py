"""Rendering a chart on its slide canvas to bytes: PNG, SVG and vector PDF.

Owns the headline drawn above a chart (its numbers, fitted to the canvas),
`render_image` / `render_png` (exactly the canvas), `render_svg`
(pyqtgraph's exporter, text as glyph outlines: ``svg_outlines.py``, checked
to be valid XML with a drawing in it) and `render_pdf` (every page the
canvas, 96 dpi). The canvas is ``canvas.py``; writing files is
``export.py``.
"""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

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
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem, QGraphicsWidget

from kvstudio.charts.canvas import (
    DEFAULT_CANVAS,
    SlideCanvas,
    companion_views,
    on_canvas,
    scene_of,
    settle_layout,
    slide_theme,
)
from kvstudio.charts.chart_data import ChartLike, ExportError, chart_item
from kvstudio.charts.colour_scale import ColourScale, colour_scales, scale_paths
from kvstudio.charts.style import SLIDE_REFERENCE_WIDTH, SLIDE_STYLE, PlotStyle
from kvstudio.charts.svg_outlines import compose_canvas, path_data


@dataclass(frozen=True)
class _Headline:
    """Headline lines laid out for a canvas: font, line height, band height."""

    lines: tuple[str, ...]
    font: QFont
    line_height: float
    band: float  # the chart starts this far down the page
    margin: float
    colour: str
    scales: tuple[ColourScale, ...] = ()  # heat maps' colour scales, on a row of their own

    def baselines(self) -> list[float]:
        top = self.margin * 0.6
        return [top + self.line_height * (i + 0.8) for i in range(len(self.lines))]

    def scale_row(self, canvas: SlideCanvas) -> list[tuple[QPainterPath, str]]:
        if not self.scales:
            return []
        baseline = self.margin * 0.6 + self.line_height * (len(self.lines) + 0.8)
        return scale_paths(self.scales, self.font, self.margin, baseline,
                           canvas.width - 2 * self.margin, self.colour)


HEADLINE_LINES = 3  # a chart's headline lines, at most, as given
WRAPPED_LINES = 5  # lines on the slide once the long ones wrap between phrases, at most
PHRASE_BREAKS = (" · ", "; ", ", ")  # where a headline line may wrap, the first that helps


def _wrap_phrases(line: str, metrics: QFontMetricsF, room: float) -> list[str]:
    """`line` on as many lines as it needs to fit `room` px, broken only between phrases
    (after a " · ", else a "; " or ", "): an elided headline lost its numbers
    ("TTFT 35.7 ms (5회 중앙값, 26.…"). A phrase wider than `room` alone stays whole
    (`_fit_line` shortens it as before)."""
    if metrics.horizontalAdvance(line) <= room:
        return [line]
    for separator in PHRASE_BREAKS:
        phrases = line.split(separator)
        if len(phrases) < 2:
            continue
        lines = [phrases[0]]
        for phrase in phrases[1:]:
            joined = lines[-1] + separator + phrase
            if metrics.horizontalAdvance(joined) <= room:
                lines[-1] = joined
            else:
                lines[-1] += separator.rstrip()
                lines.append(phrase)
        return [part for piece in lines for part in _wrap_phrases(piece, metrics, room)]
    return [line]


def _headline(text: str | None, canvas: SlideCanvas, style: PlotStyle,
              scales: Sequence[ColourScale] = ()) -> _Headline:
    given = [line.strip() for line in (text or "").splitlines() if line.strip()]
    scale = canvas.width / SLIDE_REFERENCE_WIDTH
    font = QFont(style.font_family) if style.font_family else QFont()
    font.setPixelSize(max(1, round(style.title_px * 0.78 * scale)))
    font.setBold(False)
    line_height = QFontMetricsF(font).lineSpacing()
    margin = 24 * scale
    metrics = QFontMetricsF(font)
    lines = tuple(wrapped for line in given[:HEADLINE_LINES]
                  for wrapped in _wrap_phrases(line, metrics, canvas.width - 2 * margin)
                  )[:WRAPPED_LINES]
    rows = len(lines) + (1 if scales else 0)
    band = line_height * rows + margin if rows else margin / 2
    return _Headline(lines, font, line_height, band, margin, style.foreground, tuple(scales))


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
    for path, colour in head.scale_row(canvas):
        painter.fillPath(path, QColor(colour))


def _headline_paths(head: _Headline, canvas: SlideCanvas) -> list[tuple[str, str]]:
    out = []
    for line, y in zip(head.lines, head.baselines(), strict=True):
        path = QPainterPath()
        path.addText(
            QPointF(head.margin, y), head.font,
            _fit_line(line, head.font, canvas.width - 2 * head.margin),
        )
        out.append((path_data(path), head.colour))
    out.extend((path_data(path), colour) for path, colour in head.scale_row(canvas))
    return out


@contextlib.contextmanager
def _prepared(
    chart: ChartLike, canvas: SlideCanvas, style: PlotStyle | None, headline: str | None
) -> Iterator[tuple[QGraphicsItem, _Headline, PlotStyle | None]]:
    """The chart laid out below its headline on `canvas`, themed; everything restored after."""
    item = chart_item(chart)
    head = _headline(headline, canvas, style or SLIDE_STYLE, colour_scales(chart))
    rect = _chart_rect(head, canvas)
    size = QSizeF(rect.width(), rect.height())
    with on_canvas(item, size), _maybe_theme(item, canvas.width, style) as used, \
            _antialiased(item):
        _keep_size(item, size)
        yield item, head, used


def _keep_size(item: QGraphicsItem, size: QSizeF) -> None:
    """Put the chart back at the canvas's size if the theme's settling undid it.

    Settling processes events, and a resize the chart's view had queued (a title that
    wrapped to another line changes the page's layout) makes pyqtgraph's view set its
    central item back to the view's size: seen as the inspector laid out 681 px wide on a
    1,440 px slide, under load. Laid out again at the canvas's size, the axes are longer
    and may show other tick labels, so the layout is settled again (the queued resize is
    spent by then); the last try is laid out without events, nothing processes them
    between this and the paint.
    """
    if not isinstance(item, QGraphicsWidget):
        return
    for attempt in range(3):
        if item.geometry().size() == size:
            return
        item.setGeometry(QRectF(item.geometry().topLeft(), size))
        layout = QGraphicsWidget.layout(item)  # PlotItem shadows layout() with an attribute
        if layout is not None:
            layout.activate()
        if attempt < 2:
            settle_layout(item)


@contextlib.contextmanager
def _antialiased(item: QGraphicsItem) -> Iterator[None]:
    """Curves drawn antialiased for the render, as in the SVG (pyqtgraph's export mode).

    The window draws its live curves without antialiasing (faster); a slide
    drawn that way has whole-pixel dashes where the SVG's are antialiased, and
    the two differ in ink by up to a tenth on charts with many dashed lines.
    """
    items = [i for i in scene_of(item).items() if hasattr(i, "setExportMode")]
    for each in items:
        each.setExportMode(True, {"antialias": True})
    try:
        yield
    finally:
        for each in items:
            each.setExportMode(False)


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
    if head.lines or head.scales:
        _draw_headline(painter, head, canvas)
    scene_of(item).render(painter, _chart_rect(head, canvas), item.sceneBoundingRect())


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


# ---- bold text in the PDF ------------------------------------------------------------------
# The bundled NanumGothic has no bold face; Qt draws a bold title by emboldening the regular
# glyphs, on screen and in PNGs, but its PDF engine writes the regular glyphs. In a PDF, bold
# text items are drawn as the outlines of their (emboldened) glyphs instead.
def _is_bold(text_item: QGraphicsTextItem) -> bool:
    if text_item.font().bold():
        return True
    block = text_item.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().fontWeight() >= QFont.Weight.DemiBold:
                return True
            it += 1
        block = block.next()
    return False


@contextlib.contextmanager
def _bold_text_hidden(item: QGraphicsItem) -> Iterator[list[QGraphicsTextItem]]:
    """The scene's visible bold text items, hidden while the page is painted."""
    bold = [t for t in scene_of(item).items()
            if isinstance(t, QGraphicsTextItem) and t.isVisible()
            and t.toPlainText().strip() and _is_bold(t)]
    for text_item in bold:
        text_item.setVisible(False)
    try:
        yield bold
    finally:
        for text_item in bold:
            text_item.setVisible(True)


def _paint_bold_outlines(painter: QPainter, item: QGraphicsItem, head: _Headline,
                         canvas: SlideCanvas, bold: Sequence[QGraphicsTextItem]) -> None:
    """Draw `bold` text items as emboldened outlines where the page shows the scene."""
    source, target = item.sceneBoundingRect(), _chart_rect(head, canvas)
    if not bold or source.width() <= 0 or source.height() <= 0:
        return
    page = QTransform()
    page.translate(target.left(), target.top())
    page.scale(target.width() / source.width(), target.height() / source.height())
    page.translate(-source.left(), -source.top())
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for text_item in bold:
        path = QPainterPath()
        document = text_item.document()
        block = document.begin()
        while block.isValid():
            layout = block.layout()
            origin = layout.position()
            for line_no in range(layout.lineCount()):
                for run in layout.lineAt(line_no).glyphRuns():
                    raw = run.rawFont()
                    for index, at in zip(run.glyphIndexes(), run.positions(), strict=True):
                        path.addPath(raw.pathForGlyph(index).translated(origin + at))
            block = block.next()
        colour = text_item.defaultTextColor()
        first = document.begin().begin()
        if not first.atEnd():
            brush = first.fragment().charFormat().foreground()
            if brush.style() != Qt.BrushStyle.NoBrush:
                colour = brush.color()
        outline = (text_item.sceneTransform() * page).map(path)
        painter.setPen(Qt.PenStyle.NoPen)  # the glyphs of a bold raw font are emboldened
        painter.setBrush(colour)
        painter.drawPath(outline)
    painter.restore()


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
                with _bold_text_hidden(item) as bold:
                    _paint_page(painter, item, head, canvas,
                                used.background if used else "#ffffff")
                _paint_bold_outlines(painter, item, head, canvas, bold)
    finally:
        if painter is not None:
            painter.end()
        buffer.close()
    pdf = bytes(data.data())
    if not pdf.startswith(b"%PDF"):
        raise ExportError("Qt produced an empty PDF; is the chart visible and sized?")
    return pdf
