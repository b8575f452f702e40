"""Temporary restyling of pyqtgraph charts: the slide theme for exports and the presenter view.

Owns `PlotStyle` (colours, font sizes, line widths) and `apply_plot_style`,
which walks a chart's graphics items, restyles axes, titles, legends, curves,
bars, lines and text, and returns a `StyleRestorer` that puts every touched
property back exactly as it was. It does not render or write files (see
``charts/render.py`` and ``charts/export.py``) and does not change the
application's palette or fonts (see ``slides/presenter.py``).

Units: font sizes are logical pixels of the chart's own coordinate system;
pen widths are device pixels, because pyqtgraph's pens are cosmetic and do not
scale with the painter. `slide_style_for` converts "pixels on a 1920-wide slide"
into both.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsItem

logger = logging.getLogger(__name__)

SLIDE_REFERENCE_WIDTH = 1920  # the sizes below are pixels on a slide this wide


@dataclass(frozen=True)
class PlotStyle:
    """How a chart should look. Sizes: fonts in logical px, pens in device px."""

    background: str = "#ffffff"  # plot and page background
    foreground: str = "#1a1a1a"  # axes, ticks, titles, legend text
    font_family: str | None = None  # None = the application font (NanumGothic when bundled)
    tick_px: float = 26.0  # tick labels
    label_px: float = 30.0  # axis titles
    title_px: float = 38.0  # chart title
    legend_px: float = 22.0  # legend entries (smaller: the legend sits on the data)
    text_px: float = 24.0  # free text items (value labels, annotations)
    axis_pen_px: float = 2.0  # axis lines and ticks
    line_px: float = 5.0  # minimum width of data lines
    bar_pen_px: float = 1.5  # bar outlines
    max_luminance: float = 0.22  # brighter data colours are darkened (≥ 3.5:1 contrast on white)
    bar_outline: bool = True  # False for SVG: viewers ignore non-scaling strokes on bars

    def scaled(self, font_factor: float, pen_factor: float) -> PlotStyle:
        """The same style with fonts × font_factor and pens × pen_factor."""
        return replace(
            self,
            tick_px=self.tick_px * font_factor,
            label_px=self.label_px * font_factor,
            title_px=self.title_px * font_factor,
            legend_px=self.legend_px * font_factor,
            text_px=self.text_px * font_factor,
            axis_pen_px=self.axis_pen_px * pen_factor,
            line_px=self.line_px * pen_factor,
            bar_pen_px=self.bar_pen_px * pen_factor,
        )


# Sizes as they should appear on a 1920-px-wide slide: readable from the back row.
SLIDE_STYLE = PlotStyle()


def slide_style_for(
    source_width: float, device_width: float, base: PlotStyle = SLIDE_STYLE
) -> PlotStyle:
    """Convert slide pixels into a chart `source_width` wide, drawn `device_width` px wide.

    Fonts scale with the painter (logical px), cosmetic pens do not (device px).
    PNG: device_width = output width. PDF/SVG: device_width = source_width.
    """
    source_width = max(source_width, 1.0)
    return base.scaled(
        font_factor=source_width / SLIDE_REFERENCE_WIDTH,
        pen_factor=device_width / SLIDE_REFERENCE_WIDTH,
    )


Item = TypeVar("Item")


class StyleRestorer:
    """Undo log for `apply_plot_style`: calling `restore()` replays it in reverse, once.

    Each entry holds its chart item weakly and gets it as its argument: a
    restorer kept for later (the presenter keeps its own while it is shown)
    must not keep alive an item that its chart has dropped meanwhile, such as a
    legend entry replaced on a language switch or the bars of an old sample.
    Kept alive, such an orphan outlived the QApplication and crashed the
    process at exit. An entry whose item is gone is skipped.
    """

    def __init__(self) -> None:
        self._undo: list[tuple[weakref.ref[Any], Callable[[Any], None]]] = []

    def push(self, item: Item, undo: Callable[[Item], None]) -> None:
        """Remember `undo(item)`; `undo` must reach the item only through its argument."""
        self._undo.append((weakref.ref(item), undo))

    def restore(self) -> None:
        while self._undo:
            ref, undo = self._undo.pop()
            item = ref()
            if item is None:
                continue
            try:
                undo(item)
            except RuntimeError:  # the item was deleted meanwhile: nothing to restore
                logger.debug("Skipped restoring a deleted chart item.")

    def __len__(self) -> int:
        return len(self._undo)


def relative_luminance(colour: QColor) -> float:
    """WCAG relative luminance of a colour: 0 = black, 1 = white."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = colour.redF(), colour.greenF(), colour.blueF()
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def readable_colour(colour: QColor, max_luminance: float) -> QColor:
    """Darken a colour, keeping its hue, until its luminance is at most `max_luminance`.

    Screen themes often draw yellow or cyan on black; on a white slide those
    vanish, so they become dark gold or teal.
    """
    c = QColor(colour)
    if relative_luminance(c) <= max_luminance:
        return c
    h, s, v, a = (float(x) for x in c.getHsvF())  # type: ignore[attr-defined]
    low, high = 0.0, v
    for _ in range(20):  # bisection on HSV value: luminance grows with it
        mid = (low + high) / 2
        probe = QColor.fromHsvF(max(h, 0.0), s, mid, a)
        if relative_luminance(probe) > max_luminance:
            high = mid
        else:
            low = mid
    return QColor.fromHsvF(max(h, 0.0), s, low, a)


def _font(style: PlotStyle, px: float, bold: bool = False) -> QFont:
    font = QFont(style.font_family) if style.font_family else QFont()
    font.setPixelSize(max(1, round(px)))
    font.setBold(bold)
    return font


def _restyled_pen(pen: QPen | None, style: PlotStyle, min_width: float) -> QPen | None:
    if pen is None:
        return None
    new = QPen(pen)
    if new.style() == pg.QtCore.Qt.PenStyle.NoPen:
        return new
    new.setColor(readable_colour(new.color(), style.max_luminance))
    new.setWidthF(max(new.widthF(), min_width))
    new.setCosmetic(True)
    return new


def _walk(root: QGraphicsItem) -> list[QGraphicsItem]:
    """The item and all its descendants, parents before children."""
    out: list[QGraphicsItem] = []
    stack = [root]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(reversed(item.childItems()))
    return out


def apply_plot_style(root: QGraphicsItem, style: PlotStyle) -> StyleRestorer:
    """Restyle every chart element under `root`; return what undoes it."""
    restorer = StyleRestorer()
    legend_labels: set[int] = set()
    for item in _walk(root):
        if isinstance(item, pg.LegendItem):
            _style_legend(item, style, restorer)
            legend_labels.update(id(label) for _, label in item.items)
        elif isinstance(item, pg.AxisItem):
            _style_axis(item, style, restorer)
        elif isinstance(item, pg.LabelItem) and id(item) not in legend_labels:
            _style_label(item, style, restorer)
        elif isinstance(item, pg.PlotDataItem):
            _style_data_item(item, style, restorer)
        elif isinstance(item, pg.PlotCurveItem) and not isinstance(
            item.parentItem(), pg.PlotDataItem
        ):
            _style_curve(item, style, restorer)
        elif isinstance(item, pg.BarGraphItem):
            _style_bars(item, style, restorer)
        elif isinstance(item, pg.InfiniteLine):
            _style_infinite_line(item, style, restorer)
        elif isinstance(item, pg.TextItem):
            _style_text(item, style, restorer)
        elif isinstance(item, pg.ViewBox):
            _style_viewbox(item, style, restorer)
    for item in _walk(root):
        if isinstance(item, pg.PlotItem):
            _fit_title_row(item, restorer)
    return restorer


def _fit_title_row(plot: pg.PlotItem, restorer: StyleRestorer) -> None:
    """Give the (restyled) title the height it needs: PlotItem fixes that row at 30 px."""
    label = plot.titleLabel
    if not label.isVisible():
        return
    layout = plot.layout
    old = (layout.rowMinimumHeight(0), layout.rowMaximumHeight(0), label.maximumHeight())

    def undo(plot: pg.PlotItem) -> None:
        plot.layout.setRowMinimumHeight(0, old[0])
        plot.layout.setRowMaximumHeight(0, old[1])
        plot.titleLabel.setMaximumHeight(old[2])

    restorer.push(plot, undo)
    needed = label.itemRect().height() + 4
    label.setMaximumHeight(max(old[2], needed))
    layout.setRowFixedHeight(0, max(old[0], needed))


def _style_axis(axis: pg.AxisItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_pen, old_text_pen = axis._pen, axis._textPen
    old_tick_pen = axis._tickPen
    old_font = axis.style.get("tickFont")
    old_label_style = dict(axis.labelStyle)
    # The tick-label space the axis had: larger export fonts widen it while painting, and
    # the live plots never let pyqtgraph narrow it again (see plots/base.py).
    old_text_size = (axis.textWidth, axis.textHeight)

    def undo(axis: pg.AxisItem) -> None:
        axis._pen, axis._textPen, axis._tickPen = old_pen, old_text_pen, old_tick_pen
        axis.labelStyle = old_label_style
        axis.setTickFont(old_font)
        axis.textWidth, axis.textHeight = old_text_size
        axis._updateLabel()  # also re-applies the axis size

    restorer.push(axis, undo)
    axis_pen = QPen(QColor(style.foreground))
    axis_pen.setWidthF(style.axis_pen_px)
    axis_pen.setCosmetic(True)
    axis.setPen(axis_pen)
    axis.setTextPen(QColor(style.foreground))
    # Ticks and grid lines share the tick pen: keep them thin so the grid stays in the back.
    tick_pen = QPen(QColor(style.foreground))
    tick_pen.setWidthF(max(0.3, style.axis_pen_px / 2))  # 0 would mean a 1-px hairline
    tick_pen.setCosmetic(True)
    axis.setTickPen(tick_pen)
    axis.setTickFont(_font(style, style.tick_px))
    label_style = dict(old_label_style)
    label_style["color"] = style.foreground
    label_style["font-size"] = f"{max(1, round(style.label_px))}px"
    if style.font_family:
        label_style["font-family"] = style.font_family
    axis.labelStyle = label_style
    axis._updateLabel()


def _style_label(label: pg.LabelItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_opts = dict(label.opts)

    def undo(label: pg.LabelItem) -> None:
        label.opts = dict(old_opts)
        label.setText(label.text)  # the text as it is now: it may have been retranslated

    restorer.push(label, undo)
    new: dict[str, Any] = {
        "color": style.foreground,
        "size": f"{max(1, round(style.title_px))}px",
        "bold": True,
    }
    if style.font_family:
        new["family"] = style.font_family
    label.setText(label.text, **new)


def _style_legend(legend: pg.LegendItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_opts = dict(legend.opts)

    # Entries are matched by identity when undoing: one replaced meanwhile (a language
    # switch rebuilds the legend) is new, already drawn in the legend's current style.
    old_label_opts = {id(label): dict(label.opts) for _, label in legend.items}
    ignores = QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
    old_ignores = bool(legend.flags() & ignores)

    def undo(legend: pg.LegendItem) -> None:
        legend.setFlag(ignores, old_ignores)
        legend.setPen(old_opts["pen"])
        legend.setBrush(old_opts["brush"])
        legend.opts["labelTextColor"] = old_opts["labelTextColor"]
        legend.opts["labelTextSize"] = old_opts["labelTextSize"]
        for _, label in legend.items:
            opts = old_label_opts.get(id(label))
            if opts is not None:
                label.opts = dict(opts)
                label.setText(label.text)  # setAttr alone does not re-render the text
        limit = getattr(legend, "_width_limit", 0.0)
        if getattr(legend, "refit", None) is None and limit > 0:
            legend.fit_width(limit)  # a live plot's legend: re-flowed as it was on screen
        else:
            _resize_legend(legend)

    restorer.push(legend, undo)
    # A legend ignores the painter's scale, so a 1920-px PNG drew it at screen size;
    # its parent (the ViewBox) is never scaled, so following transforms changes nothing else.
    legend.setFlag(ignores, False)
    legend.setPen(pg.mkPen(QColor(style.foreground).lighter(300), width=style.axis_pen_px / 2))
    bg = QColor(style.background)
    bg.setAlpha(230)
    legend.setBrush(bg)
    legend.setLabelTextColor(style.foreground)
    legend.setLabelTextSize(f"{max(1, round(style.legend_px))}px")
    for _, label in legend.items:
        label.setText(label.text)
    _resize_legend(legend)


def _resize_legend(legend: pg.LegendItem) -> None:
    """Size the legend for its entries' new text; one under its plot re-flows to fit the width."""
    refit = getattr(legend, "refit", None)  # a PlotLegend that follows its plot's width
    if refit is not None:
        refit()
    else:
        legend.updateSize()


def _style_data_item(item: pg.PlotDataItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_pen = item.opts.get("pen")
    old_symbol_pen = item.opts.get("symbolPen")
    if old_pen is None and old_symbol_pen is None:
        return
    pen = pg.mkPen(old_pen) if old_pen is not None else None

    def undo(item: pg.PlotDataItem) -> None:
        item.setPen(old_pen)
        if old_symbol_pen is not None:
            item.setSymbolPen(old_symbol_pen)

    restorer.push(item, undo)
    if pen is not None:
        item.setPen(_restyled_pen(pen, style, style.line_px))
    if old_symbol_pen is not None:
        symbol_pen = _restyled_pen(pg.mkPen(old_symbol_pen), style, style.axis_pen_px)
        item.setSymbolPen(symbol_pen)


def _style_curve(item: pg.PlotCurveItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_pen = item.opts.get("pen")
    if old_pen is None:
        return
    restorer.push(item, lambda item: item.setPen(old_pen))
    item.setPen(_restyled_pen(pg.mkPen(old_pen), style, style.line_px))


def _style_bars(item: pg.BarGraphItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    keys = ("pen", "pens", "brush", "brushes")
    old = {k: item.opts.get(k) for k in keys}
    restorer.push(item, lambda item: item.setOpts(**old))
    new: dict[str, Any] = {}
    if not style.bar_outline:
        new["pen"] = pg.mkPen(None)
        new["pens"] = None
    elif old["pens"] is not None:
        new["pens"] = [_restyled_pen(pg.mkPen(p), style, style.bar_pen_px) for p in old["pens"]]
    else:
        base = pg.mkPen(old["pen"]) if old["pen"] is not None else pg.mkPen(style.foreground)
        new["pen"] = _restyled_pen(base, style, style.bar_pen_px)
    if old["brushes"] is not None:
        new["brushes"] = [_readable_brush(b, style) for b in old["brushes"]]
    elif old["brush"] is not None:
        new["brush"] = _readable_brush(old["brush"], style)
    item.setOpts(**new)


def _readable_brush(brush: Any, style: PlotStyle) -> Any:
    b = pg.mkBrush(brush)
    colour = b.color()
    # Fills may be a little lighter than lines, but not vanish into white.
    b.setColor(readable_colour(colour, min(0.6, style.max_luminance * 2.5)))
    return b


def _style_infinite_line(line: pg.InfiniteLine, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_pen = line.pen
    restorer.push(line, lambda line: line.setPen(old_pen))
    line.setPen(_restyled_pen(pg.mkPen(old_pen), style, style.line_px * 0.6))


def _style_text(item: pg.TextItem, style: PlotStyle, restorer: StyleRestorer) -> None:
    old_colour = QColor(item.color)
    old_font = QFont(item.textItem.font())

    def undo(item: pg.TextItem) -> None:
        item.setColor(old_colour)
        item.setFont(old_font)

    restorer.push(item, undo)
    item.setColor(readable_colour(old_colour, style.max_luminance))
    item.setFont(_font(style, style.text_px))


def _style_viewbox(vb: pg.ViewBox, style: PlotStyle, restorer: StyleRestorer) -> None:
    old = vb.state.get("background")
    if old is None:
        return  # transparent: the page/scene background shows through
    restorer.push(vb, lambda vb: vb.setBackgroundColor(old))
    vb.setBackgroundColor(style.background)
