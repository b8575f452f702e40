"""The shared base of the live plots: a white PlotWidget, a legend, an optional right axis.

Owns the plumbing every plot needs (colours per mode, a second y axis linked
to the first for cumulative series, fixed ranges whose y axes are laid out
for their tick labels before they paint and whose repaint waits for the next
event-loop turn, retranslation on language change) and `LivePlot`, which
puts them together with the plot's frame from ``legend.py`` (a title that
wraps to the plot's width, a legend under the data). Nothing about what is
drawn.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter, QPicture, QResizeEvent
from PySide6.QtWidgets import QGraphicsItem, QWidget

from kvstudio.charts.chart_data import DataTable
from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.labs.base import MODE_COLOURS as MODE_COLOURS
from kvstudio.charts.plots.empty import EmptyChart
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.scrolling import fixed_view
from kvstudio.charts.plots.sizing import CORNER_BUTTON_NAME, LEGEND_MARGIN, fit_title
from kvstudio.engine.records import Mode
from kvstudio.ui.run.store import RunStore, RunTrace

TITLE_COLOUR = "#222"  # plot titles, as dark as the axis text


def mode_pen(mode: Mode, width: float = 2.0, dashed: bool = False) -> pg.QtGui.QPen:
    pen = pg.mkPen(MODE_COLOURS[mode], width=width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


def mode_brush(mode: Mode, alpha: int = 150) -> QColor:
    colour = QColor(MODE_COLOURS[mode])
    colour.setAlpha(alpha)
    return colour


def tick_labels(axis: pg.AxisItem) -> list[str]:
    """Every tick label `axis` may draw for its current range and length (all text levels).

    The same values and strings pyqtgraph's `AxisItem.generateDrawSpecs` derives,
    so their widest one bounds the text the axis will measure when it paints.
    """
    if axis._tickLevels is not None:  # fixed ticks (setTicks)
        return [text for level in axis._tickLevels for _, text in level]
    low, high = axis.range
    along = axis.size().height() if axis.orientation in ("left", "right") else axis.size().width()
    levels = axis.tickValues(low, high, max(along, 1.0))[: axis.style["maxTextLevel"] + 1]
    scale = axis.autoSIPrefixScale * axis.scale
    return [text for spacing, values in levels
            for text in axis.tickStrings(values, scale, spacing)]


_label_widths: dict[tuple[str, str], float] = {}  # (font key, label) -> width in pixels


def tick_text_width(axis: pg.AxisItem) -> int:
    """Width in pixels of the widest tick label of `axis`, measured as pyqtgraph measures it."""
    font = axis.style["tickFont"]
    font = font if font is not None else QFont()
    font_key = font.key()
    labels = tick_labels(axis)
    new = [text for text in set(labels) if (font_key, text) not in _label_widths]
    if new:
        if len(_label_widths) > 4096:
            _label_widths.clear()
        picture = QPicture()  # the device pyqtgraph paints axes into (so the same font metrics)
        painter = QPainter(picture)
        try:
            painter.setFont(font)
            box = QRectF(0, 0, 100, 100)
            for text in new:
                rect = painter.boundingRect(box, Qt.AlignmentFlag.AlignCenter, text)
                _label_widths[font_key, text] = rect.width()
        finally:
            painter.end()
    return int(max((_label_widths[font_key, t] for t in labels), default=0.0) + 0.999)


def live_curve(pen: pg.QtGui.QPen) -> pg.PlotDataItem:
    """A line for live data: finite values inside a planned range, so no guards that cost.

    pyqtgraph's dynamic range limit re-sets every curve's data on each y-range
    change (and clips on every update), and its finite check scans each update;
    neither can trigger here: the values are finite and the ranges hold them.
    """
    return pg.PlotDataItem(pen=pen, dynamicRangeLimit=None, skipFiniteCheck=True)


class LivePlot(RetranslateOnLanguageChange, pg.PlotWidget):
    """A plot that redraws from a `RunStore`. Subclasses create their items once."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setMinimumSize(240, 150)  # a 1280×720 screen has room for two rows of these
        item = self.plot_item
        # No grid: pyqtgraph draws grid lines as part of each axis, so every range change
        # repainted the whole plot area from Python (80-100 ms stalls when playing).
        item.showGrid(x=False, y=False)
        for side in ("left", "bottom", "right"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#222"))
        self.legend = add_legend_row(item, follow_width=False)
        self.legend.after_fit = self._fit_item_to_view
        fixed_view(self)  # no wheel zoom or drag pan: the plot follows the run
        self.title_size = "10pt"
        self._title = ""
        self.right_view: pg.ViewBox | None = None
        self._axis_titles: dict[str, tuple[str, str]] = {}  # side: (full, short)
        self._full_title_width: dict[str, float] = {}  # side: the full title's width, px
        self._tick_space_for: dict[str, tuple[object, ...]] = {}  # what fit_tick_space measured
        self._tick_width: dict[str, int] = {}
        self._refitting_ticks = False
        # A new range is laid out in one event-loop turn and painted in the next (see
        # ranges_changed): the timer is due at once, but the loop serves what is already
        # waiting (input, other timers) before it fires.
        self._paint_later = QTimer(self)
        self._paint_later.setSingleShot(True)
        self._paint_later.setInterval(1)
        self._paint_later.timeout.connect(lambda: self.setUpdatesEnabled(True))
        # Axes, title and legend repaint with every data update; replaying their text is the
        # costliest part of a frame, so keep them as pixmaps until they really change.
        for static in (*(item.getAxis(s) for s in ("left", "bottom", "right", "top")),
                       item.titleLabel, self.legend):
            static.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # Tick-label space is set with each range (`fit_tick_space`), before painting.
        # pyqtgraph's own sizing happens inside paint: wider (or 10 px narrower) labels
        # resize the axis there, which lays the plot out again and paints it again,
        # axes and all, within one event-loop turn (40-70 ms stalls as a run starts).
        # Without auto-reduce, paint only ever widens an axis when our measure fell short.
        for side in ("left", "right"):
            item.getAxis(side).setStyle(autoReduceTextSpace=False)
        # No automatic SI prefix: it re-sets every axis label's HTML (and its size) on each
        # range change, and it only ever applied to ranges below 1 or above 1e9 (unitless).
        for side in ("left", "bottom", "right", "top"):
            item.getAxis(side).enableAutoSIPrefix(False)
        self._before_first_step: EmptyChart | None = None  # made by the first `show_empty`
        self._store: RunStore | None = None  # what `refresh` drew last

    # ---- before the first step -----------------------------------------------------------
    def show_empty(self, empty: bool) -> None:
        """While no run has a step: no tick values (an empty plot's 0…1 means nothing) and
        one line saying how to fill the chart; its titles stay, so it says what it shows."""
        if self._before_first_step is None:
            if not empty:
                return
            self._before_first_step = EmptyChart(self)
        self._before_first_step.set_empty(
            empty, self.tr("Press Step ▸ or Run to end to fill this chart."))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        empty = getattr(self, "_before_first_step", None)  # (None while constructing)
        if event.type() == QEvent.Type.LanguageChange and empty is not None and empty.empty:
            self.show_empty(True)  # the hint in the new language

    # ---- title and legend fit the plot's width -------------------------------------------
    def set_title(self, text: str, size: str | None = None) -> None:
        """Set the title; it wraps to the plot's width (a long title never widens the plot)."""
        self._title = text
        # Dark like the axes: pyqtgraph's default grey title was faint on a projector.
        self.plot_item.setTitle(text, size=size or self.title_size, color=TITLE_COLOUR)
        self.fit_frame()

    def title_text(self) -> str:
        return self._title

    def fit_frame(self) -> None:
        """Wrap the title and re-flow the legend for the current width."""
        item = self.plot_item
        if item is None:  # closed: pyqtgraph has let go of its PlotItem
            return
        width = max(float(self.width()) - LEGEND_MARGIN, 60.0)
        fit_title(item, width, corner_x=self._corner_x())
        self.legend.fit_width(width)  # (ends with _fit_item_to_view)
        self._fit_axis_titles()

    def set_axis_title(self, side: str, full: str, short: str = "") -> None:
        """Title an axis; where the axis is shorter than `full`, it shows `short` instead
        (on a laptop screen the y axes of the live plots are about 60 px long)."""
        if side not in self._axis_titles:  # refit whenever the axis is laid out anew (a
            # resize, or an export laying the chart out on a slide, where it has room again)
            self.plot_item.getAxis(side).geometryChanged.connect(self._fit_axis_titles)
        self._axis_titles[side] = (full, short or full)
        self.plot_item.setLabel(side, full)  # measured as it is shown (a new language)
        self._full_title_width[side] = self.plot_item.getAxis(side).label.boundingRect().width()
        self._fit_axis_titles()

    def axis_title(self, side: str) -> str:
        """The axis title shown now (the full or the short one)."""
        return str(self.plot_item.getAxis(side).labelText)

    def _fit_axis_titles(self) -> None:
        """Show each axis' full title where it fits, else its short one.

        Runs on every resize and axis layout, so it sets a label only when the choice
        changes; the full title's width is measured while it is shown (the text with its
        blank margins, unrotated: pyqtgraph centres that on the axis) and kept.
        """
        for side, (full, short) in self._axis_titles.items():
            axis = self.plot_item.getAxis(side)
            length = axis.width() if side in ("top", "bottom") else axis.height()
            if length <= 0:
                continue  # not laid out yet
            if axis.labelText == full:
                self._full_title_width[side] = axis.label.boundingRect().width()
            wanted = short if self._full_title_width[side] > length else full
            if axis.labelText != wanted:
                axis.setLabel(wanted)
                # Centred again: pyqtgraph places the title only when the axis resizes, so
                # the full title took the short one's place and ran off the plot's right.
                axis.resizeEvent()

    def _corner_x(self) -> float | None:
        """Where the export button in the top-right corner begins, less a small gap (None
        without one). The plot item fills the widget, so widget and item x are the same."""
        button = self.findChild(QWidget, CORNER_BUTTON_NAME)
        if button is None or button.isHidden():
            return None
        return float(button.x()) - 4.0

    def _fit_item_to_view(self) -> None:
        """Lay the plot out at the view's size again.

        A legend or title that was wider for a moment (entries added one by one,
        a title before it wraps) makes the PlotItem grow to its minimum width, and
        nothing shrinks it back until the widget is resized: the right axis and
        the last bars would stay off screen.
        """
        item = self.plot_item
        if item is None:
            return
        item.layout.activate()
        view = QRectF(0.0, 0.0, float(self.width()), float(self.height()))
        if self.autoPixelRange and item.geometry() != view:
            item.setGeometry(view)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if getattr(self, "legend", None) is not None:  # pyqtgraph resizes during __init__
            self.fit_frame()

    @property
    def plot_item(self) -> pg.PlotItem:
        """The PlotItem to export (pyqtgraph exporters take it)."""
        return self.getPlotItem()

    def add_right_axis(self, label: str) -> pg.ViewBox:
        """A second ViewBox sharing x, drawn against the right axis (for cumulative totals)."""
        item = self.plot_item
        view = pg.ViewBox()
        item.showAxis("right")
        item.scene().addItem(view)
        item.getAxis("right").linkToView(view)
        item.getAxis("right").setLabel(label)
        view.setMouseEnabled(x=False, y=False)
        view.setXLink(item)
        item.vb.sigResized.connect(self._sync_right_view)
        self.right_view = view
        self._sync_right_view()
        return view

    def _sync_right_view(self) -> None:
        if self.right_view is None:
            return
        self.right_view.setGeometry(self.plot_item.vb.sceneBoundingRect())
        self.right_view.linkedViewChanged(self.plot_item.vb, self.right_view.XAxis)

    def set_ranges(self, x: tuple[float, float], y: tuple[float, float] | None = None,
                   right_y: tuple[float, float] | None = None) -> None:
        """Fix the visible ranges (only when they change) so axes need not be redrawn per step.

        A growing series under auto-range rescales its axes on every redraw, and
        axis painting is the most expensive part of a pyqtgraph frame.
        """
        wanted = (x, y, right_y)
        if wanted == getattr(self, "_ranges", None):
            return
        self._ranges = wanted
        # One setRange per view (it also turns auto-range off for the axes it sets):
        # each call updates the linked views, every item and the axes.
        self.plot_item.vb.setRange(xRange=x, yRange=y, padding=0)
        if right_y is not None:
            self.set_right_y(right_y, settle=False)
        self.ranges_changed()

    def set_right_y(self, right_y: tuple[float, float], settle: bool = True) -> None:
        """Fix the right axis' range (x follows the main view); `settle`: `ranges_changed()`."""
        view = self.right_view
        if view is None:
            return
        if view.autoRangeEnabled()[0] is not False:
            view.disableAutoRange(pg.ViewBox.XAxis)  # x is linked: never auto-range it here
        view.setRange(yRange=right_y, padding=0)
        if settle:
            self.ranges_changed()

    def ranges_changed(self) -> None:
        """After new ranges: lay the axes out now, repaint the plot in the next turn.

        A new range regenerates the axes when the plot paints; together with the
        layout and data work of the refresh that was the longest stretch the
        event loop could not react while playing. Painting one turn later lets
        input and timers in between (the data is drawn within milliseconds).
        """
        self.fit_tick_space()
        if self.isVisible() and self.updatesEnabled():
            self.setUpdatesEnabled(False)
            self._paint_later.start()

    def fit_tick_space(self) -> None:
        """Lay the y axes out for the tick labels of their current ranges, now.

        Call after changing a range. The axes then keep their width when they
        paint, and a new width is laid out here rather than in a later event:
        a new range costs one layout and one paint, not a paint, a layout and
        a second full paint (axes regenerated twice) in one event-loop turn.
        """
        resized = False
        for side in ("left", "right"):
            axis = self.plot_item.getAxis(side)
            if not axis.isVisible():
                continue
            font = axis.style["tickFont"]
            key = (tuple(axis.range), axis.size().height(), id(axis._tickLevels),
                   font.key() if font is not None else "")
            if self._tick_space_for.get(side) == key and axis.textWidth == self._tick_width[side]:
                continue  # same range, length and font as last time: same labels
            width = tick_text_width(axis)
            self._tick_space_for[side], self._tick_width[side] = key, width
            if width != axis.textWidth:
                axis.textWidth = width
                axis.setWidth(axis.fixedWidth)  # re-applies the axis width from textWidth
                resized = True
        if resized:
            lengths = self._axis_lengths()
            self.fit_frame()  # the title's cell changed width: wrap it again (and lay out)
            if self._axis_lengths() != lengths and not self._refitting_ticks:
                # The title took another line count, so the axes' length changed: measure
                # the labels once more at the length they will paint at (else a range and
                # back left the axis at another width).
                self._refitting_ticks = True
                try:
                    self.fit_tick_space()
                finally:
                    self._refitting_ticks = False

    def _axis_lengths(self) -> tuple[float, ...]:
        return tuple(self.plot_item.getAxis(side).size().height() for side in ("left", "right"))

    def refresh(self, store: RunStore) -> None:
        raise NotImplementedError

    def _traces(self) -> list[RunTrace]:
        """The runs drawn that have a step (what the headline and the data tables cover)."""
        return self._store.stepped_traces() if self._store is not None else []

    def headline(self) -> str:
        """The lesson of the chart with its measured numbers (drawn above exports)."""
        return ""

    def data_tables(self) -> list[DataTable]:
        """The numbers drawn, from the records (what a CSV export writes)."""
        return []
