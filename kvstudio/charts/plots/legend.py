"""A plot's frame: the legend in its own row under the data, and a title that wraps.

Owns `PlotLegend` (a legend laid out under the plot, never on the data, in as
many columns as the width allows), `add_legend_row` (give a plot one, instead
of `addLegend`). A title that wraps to the plot's width is ``sizing.fit_title``; the
live plots' plumbing is ``base.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import cast

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt, QTimer
from PySide6.QtGui import QBrush, QPainter, QPen
from PySide6.QtWidgets import QGraphicsGridLayout

from kvstudio.charts.plots.sizing import LEGEND_MARGIN, corner_x_of, fit_title

LEGEND_ROW = 4  # PlotItem's grid: 0 title, 1 top axis, 2 view box, 3 bottom axis, 4 legend
SAMPLE_WIDTH = 20.0  # px of line an entry's sample draws (pyqtgraph's width): three dashes
SAMPLE_HEIGHT = 20.0
SOLID = (Qt.PenStyle.SolidLine, Qt.PenStyle.NoPen)


def series_pen(item: object) -> QPen:
    """The pen `item` draws its line with (NoPen where it draws none)."""
    opts = getattr(item, "opts", {})
    return QPen(pg.mkPen(opts.get("pen")))


def series_symbol(item: object) -> tuple[object, float, QPen, QBrush] | None:
    """(symbol, size, pen, brush) of `item`'s markers, from its own options (None: none).

    A PlotDataItem hands its marker options to its scatter only once it has data,
    so an entry read from the scatter drew every series' markers in pyqtgraph's grey.
    """
    if isinstance(item, pg.ScatterPlotItem):
        opts = item.opts
        return (opts.get("symbol"), float(opts.get("size", 7)), QPen(pg.mkPen(opts.get("pen"))),
                QBrush(pg.mkBrush(opts.get("brush"))))
    opts = getattr(item, "opts", {})
    symbol = opts.get("symbol")
    if symbol is None:
        return None
    return (symbol, float(opts.get("symbolSize", 10)), QPen(pg.mkPen(opts.get("symbolPen"))),
            QBrush(pg.mkBrush(opts.get("symbolBrush"))))


def has_data(item: object) -> bool:
    """Whether `item` draws anything now (a legend lists only series that are drawn)."""
    if isinstance(item, pg.QtWidgets.QGraphicsItem) and not item.isVisible():
        return False
    if isinstance(item, pg.PlotDataItem):
        return item.xData is not None and len(item.xData) > 0
    if isinstance(item, pg.ScatterPlotItem):
        return len(item.data) > 0
    if isinstance(item, pg.BarGraphItem):
        for key in ("x", "x0", "x1", "y", "y0", "height"):
            value = item.opts.get(key)
            if value is not None and not np.isscalar(value):
                return bool(np.size(value) > 0)
        return False
    return True


class LegendSample(pg.ItemSample):
    """An entry's sample, drawn with its series' own pen (dash included), markers and brush.

    Dashes are sized to the sample (at least three show, on screen and on a slide,
    where thicker pens made one long dash of a dashed line), so measured and
    formula lines, linear and quadratic fits, read apart in the legend.
    """

    def __init__(self, item: object) -> None:
        super().__init__(item)
        self.setFixedWidth(SAMPLE_WIDTH)
        self.setFixedHeight(SAMPLE_HEIGHT)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, SAMPLE_WIDTH, SAMPLE_HEIGHT)

    def pen(self) -> QPen:
        """The pen the sample draws its line with (the series' pen)."""
        return series_pen(self.item)

    def paint(self, p: QPainter, *args: object) -> None:
        item = self.item
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        middle = SAMPLE_HEIGHT / 2
        if isinstance(item, pg.BarGraphItem):
            p.setPen(QPen(pg.mkPen(item.opts.get("pen"))))
            p.setBrush(QBrush(pg.mkBrush(item.opts.get("brush"))))
            p.drawRect(QRectF(6, 3, SAMPLE_WIDTH - 12, SAMPLE_HEIGHT - 6))
            return
        if not isinstance(item, pg.ScatterPlotItem):
            pen = self.pen()
            if pen.style() not in SOLID:
                # The style's own pattern (dashes, dots, dash-dots stay apart), shrunk where a
                # thick pen would draw less than three periods in the sample.
                scale = max(p.transform().m11(), 1e-3)  # cosmetic pens: device pixels
                unit = max(pen.widthF(), 1.0) / scale  # a pattern unit, in sample pixels
                pattern = pen.dashPattern()
                factor = min(1.0, SAMPLE_WIDTH / 3.2 / max(sum(pattern) * unit, 1e-6))
                pen.setDashPattern([max(part * factor, 0.3) for part in pattern])
                pen.setCapStyle(Qt.PenCapStyle.FlatCap)  # square caps would fill the gaps
            p.setPen(pen)
            p.drawLine(QPointF(0, middle), QPointF(SAMPLE_WIDTH, middle))
        symbol = series_symbol(item)
        if symbol is not None and symbol[0] is not None:
            shape, size, pen, brush = symbol
            p.translate(SAMPLE_WIDTH / 2, middle)
            drawSymbol(p, shape, min(size, SAMPLE_HEIGHT - 4), pen, brush)


class PlotLegend(pg.LegendItem):
    """A legend in its own row under the plot (the data stays uncovered), as wide as it fits.

    pyqtgraph's legend floats over the view box; this one sits in the PlotItem's
    grid, so the plot's layout makes room for it, and `fit_width` re-flows its
    entries into as many columns as the plot is wide (one column at worst, its
    entries' text wrapped when even one column is wider than the plot).

    One re-flow measures every entry once and lays the grid out once, so it
    costs time in proportion to the number of entries. `addItem` re-flows after
    each entry; add many at once with `add_entries` (or inside `adding()`),
    which lays the legend out once at the end: 1,000 temperatures are then
    1,000 entries' work, not a million.
    """

    def __init__(self, label_colour: str = "#222") -> None:
        super().__init__(offset=None, horSpacing=14, verSpacing=-6, labelTextColor=label_colour,
                         sampleType=LegendSample)
        self._width_limit = 0.0
        self._adding = 0  # > 0 inside `adding()`: entries are laid out when it ends
        self.after_fit: Callable[[], None] | None = None  # the plot takes its size back
        # Re-flow for the plot's current width after the entries' text changed size (the
        # slide theme calls it); set by `add_legend_row` for legends that follow their plot.
        self.refit: Callable[[], None] | None = None
        # A legend that follows its plot never holds the plot wider than the layout gives it
        # (it re-flows to the narrower width instead); a LivePlot's takes its view size back.
        self.narrows = False
        # Laid out beside the data instead of under it (a wide page's chart): it then claims
        # its width, `share` of the plot's (`add_legend_row`'s re-flow gives it that much).
        self.beside = False
        self.share = 1.0
        self._drawn: tuple[bool, ...] = ()  # which entries' series were drawn at the last layout
        self._drawn_timer = QTimer(self)
        self._drawn_timer.setSingleShot(True)
        self._drawn_timer.setInterval(0)
        self._drawn_timer.timeout.connect(self._drawn_changed)

    def updateSize(self) -> None:
        """Size from the entries' grid, then tell the plot's layout (instead of moving to 0, 0)."""
        if self._adding:
            return  # laid out once, when `adding()` ends
        self.layout.invalidate()
        hint = self.layout.effectiveSizeHint(Qt.SizeHint.PreferredSize)
        if self.narrows and not self.beside:
            # Its width never asks the plot for room: a legend that follows its plot flows
            # into what the plot gets. (Asking for its current flow's width made the split
            # of a chart's plots depend on the last flow: one column kept a plot narrow, two
            # kept it wide, and an export at the slide's width left the on-screen chart in
            # the other state.) It is drawn at its flow's width, its maximum, all the same.
            narrow = QSizeF(min(hint.width(), 40.0), hint.height())
            self.setMinimumSize(narrow)
            self.setPreferredSize(narrow)
        else:
            self.setMinimumSize(hint)
        self.setMaximumSize(hint)
        self.resize(hint)
        self.updateGeometry()

    def shown_entries(self) -> list[tuple[pg.ItemSample, pg.LabelItem]]:
        """The entries laid out: those whose series is drawn (a lab's legend), or all of
        them (a live plot's, whose rows stay put as series come and go; an entry whose
        series is not drawn is hidden in its place)."""
        if not self.narrows:
            return list(self.items)
        return [(sample, label) for sample, label in self.items if has_data(sample.item)]

    def _drawn_key(self) -> tuple[bool, ...]:
        return tuple(has_data(sample.item) for sample, _ in self.items)

    def _watch(self, item: object) -> None:
        """Re-check which entries are drawn when `item`'s data changes."""
        signal = getattr(item, "sigPlotChanged", None)  # (bars have none: see check_drawn)
        if signal is not None:
            signal.connect(self._drawn_timer.start)

    def check_drawn(self) -> None:
        """Re-check which entries' series are drawn soon (after new bars: they send no
        signal when their data changes; lines do, and are followed by themselves)."""
        self._drawn_timer.start()

    def _drawn_changed(self) -> None:
        key = self._drawn_key()
        if key == self._drawn:
            return
        if self.narrows and self._width_limit > 0:
            self.fit_width(self._width_limit)  # (sets `_drawn`)
        else:
            self._show_drawn()

    def _show_drawn(self) -> None:
        self._drawn = self._drawn_key()
        for (sample, label), drawn in zip(self.items, self._drawn, strict=True):
            for part in (sample, label):
                if not self.narrows:  # a live legend's rows stay put: keep the entry's room
                    policy = part.sizePolicy()
                    if not policy.retainSizeWhenHidden():
                        policy.setRetainSizeWhenHidden(True)
                        part.setSizePolicy(policy)
                part.setVisible(drawn)

    def _entry_widths(self) -> list[float]:
        """Each entry's width on one row: its sample, the spacing, its label."""
        spacing = self.layout.horizontalSpacing()
        return [sample.boundingRect().width() + spacing + label.itemRect().width()
                for sample, label in self.shown_entries()]

    def _width_with(self, entries: list[float], columns: int) -> float:
        """The legend's width with `columns` entries per row, for entries this wide."""
        spacing = self.layout.horizontalSpacing()
        widths = [0.0] * columns
        for index, entry in enumerate(entries):
            column = index % columns
            widths[column] = max(widths[column], entry)
        left, _, right, _ = cast(tuple[float, float, float, float],
                                 self.layout.getContentsMargins())
        return sum(widths) + spacing * (columns - 1) + left + right + 4


    def _most_columns(self, entries: list[float], width: float) -> int:
        """The most columns (one at least) whose legend fits `width`.

        With n columns the first n entries sit side by side, so their sum bounds
        the width from below: only the few counts whose first entries fit (as
        many as the plot's width has room for, however many entries there are)
        are measured, from the most down.
        """
        spacing = self.layout.horizontalSpacing()
        left, _, right, _ = cast(tuple[float, float, float, float],
                                 self.layout.getContentsMargins())
        most, first_n = 1, 0.0
        for n, entry in enumerate(entries, start=1):
            first_n += entry
            if first_n + spacing * (n - 1) + left + right + 4 > width:
                break
            most = n
        return next((n for n in range(most, 0, -1) if self._width_with(entries, n) <= width), 1)

    def fit_width(self, width: float) -> None:
        """Re-flow into the most columns whose width fits `width` (pixels); one at worst."""
        self._width_limit = width
        if self._adding:
            return  # `adding()` re-flows once at its end
        if not self.items:
            return
        self._wrap_labels(None)  # measure every entry on one line
        entries = self._entry_widths()
        columns = self._most_columns(entries, width)
        if columns == 1 and self._width_with(entries, 1) > width:
            self._wrap_labels(width)  # a plot narrower than its longest entry
        self._arrange(columns)
        self.updateSize()
        if self.after_fit is not None:
            self.after_fit()

    def _wrap_labels(self, width: float | None) -> None:
        """Wrap each entry's text at word boundaries to fit a column `width` wide (None: unwrap)."""
        spacing = self.layout.horizontalSpacing()
        left, _, right, _ = cast(tuple[float, float, float, float],
                                 self.layout.getContentsMargins())
        for sample, label in self.shown_entries():
            text = label.item
            text.setTextWidth(-1)
            if width is not None:
                room = width - sample.boundingRect().width() - spacing - left - right - 4
                if text.boundingRect().width() > room:
                    text.setTextWidth(max(room, 24.0))
            label.updateMin()

    def _arrange(self, columns: int) -> None:
        """Entry i at row i // columns, column i % columns, in a fresh grid (pyqtgraph's own
        re-flow keeps the old grid's column count and widths)."""
        old: QGraphicsGridLayout = self.layout  # type: ignore[has-type]
        grid = QGraphicsGridLayout()
        grid.setHorizontalSpacing(old.horizontalSpacing())
        grid.setVerticalSpacing(old.verticalSpacing())
        grid.setContentsMargins(*old.getContentsMargins())  # type: ignore[misc]
        for index in range(old.count() - 1, -1, -1):
            old.removeAt(index)  # the entries move to the new grid
        shown = self.shown_entries()
        in_grid = {id(part) for entry in shown for part in entry}
        for sample, label in self.items:  # an entry left out of the grid is still the
            for part in (sample, label):  # legend's (else it would float parentless)
                if part.parentItem() is not self:
                    part.setParentItem(self)
                if id(part) not in in_grid:
                    # Hidden at the legend's corner, not where an older, wider flow put it
                    # (that was outside a plot that has narrowed since: "빈 칸", 19 px).
                    part.setPos(0.0, 0.0)
        for index, (sample, label) in enumerate(shown):
            row, column = divmod(index, columns)
            grid.addItem(sample, row, 2 * column, alignment=Qt.AlignmentFlag.AlignVCenter)
            grid.addItem(label, row, 2 * column + 1)
        self.setLayout(grid)  # deletes the old (empty) grid
        self.layout = grid
        self.columnCount = columns
        self.rowCount = max(1, -(-len(shown) // columns))
        self._show_drawn()

    @contextlib.contextmanager
    def adding(self) -> Iterator[None]:
        """Entries added (or removed) inside are laid out once, when the block ends."""
        self._adding += 1
        try:
            yield
        finally:
            self._adding -= 1
            if not self._adding:
                if self._width_limit > 0:
                    self.fit_width(self._width_limit)
                else:  # not fitted to a width yet: pyqtgraph's own order, its column count
                    self._arrange(self.columnCount)
                    self.updateSize()

    def add_entries(self, entries: Iterable[tuple[object, str]]) -> None:
        """Add (item, name) entries in order with one layout at the end."""
        with self.adding():
            for item, name in entries:
                self.addItem(item, name)

    def _addItemToLayout(self, sample: object, label: object) -> None:
        if not self._adding:  # inside `adding()` the grid is built once, at its end
            super()._addItemToLayout(sample, label)

    def _removeItemFromLayout(self, *parts: object) -> None:
        """pyqtgraph's, for entries that may be out of the grid: an undrawn series' entry
        waits at the legend's corner (`_arrange`), and asking the grid to remove it made Qt
        warn "QGraphicsGridLayout::removeAt: invalid index -1" on every clear (retranslate)."""
        grid: QGraphicsGridLayout = self.layout  # type: ignore[has-type]
        in_grid = [grid.itemAt(index) for index in range(grid.count())]
        for part in parts:
            if any(entry is part for entry in in_grid):
                grid.removeItem(part)  # type: ignore[arg-type]
            part.close()  # type: ignore[attr-defined]
            scene = part.scene()  # type: ignore[attr-defined]
            if scene:  # PySide does not take a closed item out of its scene itself
                scene.removeItem(part)

    def addItem(self, item: object, name: str) -> None:  # type: ignore[override]
        super().addItem(item, name)
        self._watch(item)
        self._drawn_timer.start()
        if self._width_limit > 0:
            self.fit_width(self._width_limit)

    def removeItem(self, item: object) -> None:  # type: ignore[override]
        count = len(self.items)
        super().removeItem(item)
        if len(self.items) != count and self._width_limit > 0:  # (a plot's item without an
            self.fit_width(self._width_limit)  # entry is not in the legend: nothing moved)

    def paint(self, p: QPainter, *args: object) -> None:
        """No frame around nothing: a legend without a drawn entry draws no box."""
        if any(sample.isVisible() for sample, _ in self.items):
            super().paint(p, *args)

    def mouseDragEvent(self, ev: object) -> None:  # type: ignore[override]
        """Not draggable: it has its own row."""


def add_legend_row(plot: pg.PlotItem, label_colour: str = "#222",
                   follow_width: bool = True) -> PlotLegend:
    """Give `plot` a `PlotLegend` in its own row under the data (instead of `addLegend`).

    `PlotItem.addItem(name=…)`, `plot.legend` and the exporters find it as they
    find pyqtgraph's own legend. `follow_width`: re-flow the entries whenever the
    plot's width changes (a plot inside a `GraphicsLayoutWidget`, a chart laid
    out on a slide canvas); a `LivePlot` re-flows from its widget's width instead.
    """
    legend = PlotLegend(label_colour)
    plot.layout.addItem(legend, LEGEND_ROW, 0, 1, 3)
    plot.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    plot.legend = legend
    if follow_width:
        def refit() -> None:
            fit_title(plot, max(plot.width() - LEGEND_MARGIN, 60.0), narrows=True,
                      corner_x=corner_x_of(plot))  # clear of the chart's export button
            legend.fit_width(legend_room())

        def legend_room() -> float:
            return max((plot.width() - LEGEND_MARGIN) * legend.share, 60.0)

        def width_changed() -> None:
            if legend_room() != legend._width_limit:
                refit()

        legend.refit = refit
        legend.narrows = True
        # A new title (a step, a language) is wrapped again once it is set.
        plot.titleLabel.item.document().contentsChanged.connect(
            lambda: QTimer.singleShot(0, plot, refit))
        plot.geometryChanged.connect(width_changed)
        refit()
    return legend
