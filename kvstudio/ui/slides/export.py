"""Chart export for slides: PNG, SVG, vector PDF and CSV, written atomically.

Owns turning a pyqtgraph chart (a `PlotItem`, a `GraphicsLayout`, or the
`PlotWidget` / `GraphicsLayoutWidget` that shows one) into bytes, and writing
those bytes so that a file is either complete or absent:

- PNG at a chosen width (default 1920 px) in the light slide theme,
- SVG through pyqtgraph's exporter (works on the pinned Qt 6.10),
- vector PDF through `QPdfWriter` at 96 dpi, one page per chart,
- CSV of the data each chart plots (long format: chart, plot, series, x, y),
- a *slide pack*: every chart in every format plus the numbers as CSV/JSON.

The slide theme is applied only while rendering and restored afterwards (see
``plot_style.py``); layout is settled before each render so that axes are
never blank. The menu and button that put this behind a chart live in
``export_menu.py``. Failures raise `ExportError` with a message a lecturer
can act on.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView

from kvstudio.core.folder_write import write_files
from kvstudio.core.runfile import atomic_write_bytes
from kvstudio.ui.plots.style import SLIDE_STYLE, PlotStyle, apply_plot_style, slide_style_for

logger = logging.getLogger(__name__)

ExportFormat = Literal["png", "svg", "pdf", "csv"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("png", "svg", "pdf", "csv")
DEFAULT_PNG_WIDTH = 1920  # px; crisp on a 1080p projector and in a 16:9 slide
# Korean fonts a viewer may have when it opens our SVG (text stays text in SVG).
SVG_FONT_FALLBACKS = "'Malgun Gothic', 'Apple SD Gothic Neo', 'Noto Sans CJK KR', sans-serif"

ChartLike = Any  # PlotItem | GraphicsLayout | PlotWidget | GraphicsLayoutWidget


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
            max(1, int(rect.width() / 4)),
            max(1, int(rect.height() / 4)),
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
        settle_layout(item)
        yield style
    finally:
        for extra in reversed(extras):
            extra.restore()
        restorer.restore()
        settle_layout(item)


# ---- rendering to bytes --------------------------------------------------------------------
def _image_to_png(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # stubs say bytes; str works
        raise ExportError("Qt could not encode the PNG image (out of memory?).")
    buffer.close()
    return bytes(data.data())


def render_image(
    chart: ChartLike,
    width: int = DEFAULT_PNG_WIDTH,
    style: PlotStyle | None = SLIDE_STYLE,
) -> QImage:
    """The chart as an image `width` px wide; `style` None = as it looks on screen."""
    if width < 16:
        raise ExportError(f"An image must be at least 16 px wide, got {width}.")
    item = chart_item(chart)
    with _maybe_theme(item, device_width=width, style=style) as used:
        exporter = ImageExporter(item)
        params = exporter.parameters()
        params["width"] = int(width)
        if used is not None:
            params["background"] = QColor(used.background)
        image = exporter.export(toBytes=True)
    if not isinstance(image, QImage) or image.isNull():
        raise ExportError("The chart rendered as an empty image; is it visible and sized?")
    return image


def render_png(
    chart: ChartLike, width: int = DEFAULT_PNG_WIDTH, style: PlotStyle | None = SLIDE_STYLE
) -> bytes:
    return _image_to_png(render_image(chart, width, style))


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


def render_svg(chart: ChartLike, style: PlotStyle | None = SLIDE_STYLE) -> bytes:
    """The chart as SVG; checked to parse and to contain path data."""
    item = chart_item(chart)
    # Viewers (librsvg, some office suites) ignore non-scaling strokes on bars drawn in
    # data coordinates, which merges the bars into one block: fill-only bars in SVG.
    svg_style = replace(style, bar_outline=False) if style is not None else None
    with _maybe_theme(item, device_width=None, style=svg_style) as used:
        exporter = SVGExporter(_svg_source(item))
        if used is not None:
            exporter.parameters()["background"] = QColor(used.background)
        try:
            data = exporter.export(toBytes=True)
        except ValueError as exc:  # pyqtgraph#3495: Qt >= 6.11 ends closed paths with " Z"
            raise ExportError(
                f"SVG export failed inside pyqtgraph ({exc}). This happens with Qt 6.11 or "
                "newer and pyqtgraph 0.14.0; install PySide6-Essentials 6.10 (see "
                "STACK-NOTES) or export PDF instead."
            ) from exc
    text = _svg_font_fallbacks(bytes(data).decode("utf-8"))
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


def _svg_font_fallbacks(svg: str) -> str:
    """Let viewers without NanumGothic fall back to another Korean font, not boxes."""
    return re.sub(
        r'font-family="([^"]*)"',
        lambda m: (
            f'font-family="{m.group(1)}, {SVG_FONT_FALLBACKS}"'
            if "Nanum" in m.group(1)
            else m.group(0)
        ),
        svg,
    )


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


def render_pdf(charts: Sequence[ChartLike], style: PlotStyle | None = SLIDE_STYLE) -> bytes:
    """A vector PDF with one page per chart, each page the size of its chart.

    QPdfWriter at 96 dpi so one chart pixel is one PDF pixel; the page is the
    item's `sceneBoundingRect()` (the scene's rect includes unrelated items);
    `scene.render(painter, target, source)` draws just that rectangle.
    """
    if not charts:
        raise ExportError("Nothing to export: no charts were given.")
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(96)
    writer.setCreator("KV Studio")
    painter: QPainter | None = None
    try:
        for chart in charts:
            item = chart_item(chart)
            with _maybe_theme(item, device_width=None, style=style) as used:
                source = item.sceneBoundingRect()
                layout = QPageLayout(
                    QPageSize(
                        QSizeF(source.width() * 0.75, source.height() * 0.75),  # px → pt
                        QPageSize.Unit.Point,
                        "chart",
                        QPageSize.SizeMatchPolicy.ExactMatch,
                    ),
                    QPageLayout.Orientation.Portrait,
                    QMarginsF(0, 0, 0, 0),
                )
                writer.setPageLayout(layout)
                if painter is None:
                    painter = QPainter(writer)  # the first page takes the layout set above
                else:
                    writer.newPage()
                target = QRectF(0, 0, source.width(), source.height())
                background = QColor(used.background) if used is not None else QColor("white")
                painter.fillRect(target, background)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
                _scene_of(item).render(painter, target, source)
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
    """The numbers each plot in the chart draws: curves, scatter points and bars."""
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


def plain_text(html: str | None) -> str:
    """Text of a title or label without its HTML tags."""
    return re.sub(r"<[^>]+>", "", html or "").strip()


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
    if isinstance(item, pg.PlotDataItem | pg.PlotCurveItem | pg.ScatterPlotItem):
        x, y = item.getData()
        if x is None or y is None:
            return np.array([]), np.array([])
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return None


def render_csv(chart: ChartLike, chart_name: str = "chart") -> bytes:
    """CSV of `plotted_data`: one row per point, exact float round-trip."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["chart", "plot", "series", "x", "y"])
    for s in plotted_data(chart):
        for x, y in zip(s.x, s.y, strict=True):
            writer.writerow([chart_name, s.plot, s.series, repr(x), repr(y)])
    return buf.getvalue().encode("utf-8")


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """A results table (list of dicts with the same keys) as CSV."""
    buf = io.StringIO()
    if rows:
        fields = list(rows[0].keys())
        for row in rows[1:]:
            fields += [k for k in row if k not in fields]
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_value(v) for k, v in row.items()})
    return buf.getvalue().encode("utf-8")


def _csv_value(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value


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
    width: int = DEFAULT_PNG_WIDTH,
    style: PlotStyle | None = SLIDE_STYLE,
    chart_name: str | None = None,
) -> Path:
    """Export one chart; the format comes from `fmt` or the file's suffix."""
    target = Path(path)
    kind = fmt or target.suffix.lower().lstrip(".")
    if kind == "png":
        data = render_png(chart, width, style)
    elif kind == "svg":
        data = render_svg(chart, style)
    elif kind == "pdf":
        data = render_pdf([chart], style)
    elif kind == "csv":
        data = render_csv(chart, chart_name or target.stem)
    else:
        raise ExportError(
            f"Unknown export format {kind!r}; use one of {', '.join(EXPORT_FORMATS)}."
        )
    return atomic_write(target, data)


def safe_file_stem(name: str) -> str:
    """A file name from a chart title: letters (any script), digits, - and _ only."""
    stem = re.sub(r"[^\w\-]+", "-", name.strip(), flags=re.UNICODE).strip("-")
    return stem or "chart"


def export_slide_pack(
    charts: Mapping[str, ChartLike],
    folder: str | os.PathLike[str],
    numbers: Mapping[str, Any] | None = None,
    tables: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    width: int = DEFAULT_PNG_WIDTH,
    style: PlotStyle | None = SLIDE_STYLE,
) -> list[Path]:
    """Write every chart (PNG, SVG, PDF, CSV), one PDF with all of them, and the numbers.

    `numbers` goes to numbers.json; each of `tables` to <name>.csv. All files
    are rendered in memory first, then written beside the folder and swapped
    in (``kvstudio.core.folder_write``): if any write fails (a full disk), the
    folder keeps exactly what it held before, an earlier pack included.
    """
    out = Path(folder)
    if not charts and not numbers and not tables:
        raise ExportError("Nothing to export yet: run the model or a lab first.")
    files: dict[str, bytes] = {}
    for name, chart in charts.items():
        stem = safe_file_stem(name)
        files[f"{stem}.png"] = render_png(chart, width, style)
        files[f"{stem}.svg"] = render_svg(chart, style)
        files[f"{stem}.pdf"] = render_pdf([chart], style)
        files[f"{stem}.csv"] = render_csv(chart, name)
    if len(charts) > 1:
        files["all-charts.pdf"] = render_pdf(list(charts.values()), style)
    if numbers:
        files["numbers.json"] = (
            json.dumps(numbers, ensure_ascii=False, indent=2, default=_json_default) + "\n"
        ).encode("utf-8")
    for name, rows in (tables or {}).items():
        files[f"{safe_file_stem(name)}.csv"] = rows_to_csv(rows)
    try:
        written = write_files(out, files)
    except OSError as exc:
        raise ExportError(_os_error_message(out / "slides", exc)) from exc
    logger.info("Wrote a slide pack of %d files to %s", len(written), out)
    return written


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
