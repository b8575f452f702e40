"""One layout rule for every chart: a readable plot area, or the page scrolls.

Owns the minimum plot area (`MIN_PLOT_WIDTH` × `MIN_PLOT_HEIGHT`, the view box
where the data is drawn), `keep_readable` (a chart widget that never lays its
plots out smaller than that: each view box gets the minimum, and the widget's
own minimum size follows what its plots need with their axes, wrapped titles
and legend rows at the current width), `fit_bottom_title` and `fit_side_titles`
(axis titles clear of their tick labels, which `keep_ticks_apart`, in
``ticks.py``, keeps clear of each other), `plot_areas` (each plot's view box
size, what the layout tests measure), `elided_cells` (table cells drawn
narrower than their text) and the plot titles: `fit_title` (a title wrapped at word
boundaries to the plot's width instead of widening it, clear of the export button at
`corner_x_of`) and `follow_title` (wrapped again whenever the width changes).

A page that holds such charts (a lab) sits in a scroll area (``labs/base.py``),
so a screen too small for every chart scrolls instead of squashing one; the
live page's plots sit in ``scrolling.live_scroll_area``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QEvent, QObject, QSizeF, Qt, QTimer
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsTextItem,
    QGraphicsWidget,
    QTableView,
    QWidget,
)

from kvstudio.charts.plots.ticks import keep_ticks_apart

MIN_PLOT_WIDTH = 160  # pixels of view box (the data's area), never less
MIN_PLOT_HEIGHT = 120


def chart_plots(chart: pg.GraphicsView) -> list[pg.PlotItem]:
    """Every PlotItem in the chart's scene, top-left first."""
    scene = chart.scene()
    plots = [item for item in scene.items() if isinstance(item, pg.PlotItem)
             and not isinstance(item, pg.ColorBarItem)] if scene else []  # (a bar is a plot)
    plots.sort(key=lambda p: (round(p.sceneBoundingRect().top()),
                              p.sceneBoundingRect().left()))
    return plots


def plot_areas(chart: pg.GraphicsView) -> list[QSizeF]:
    """The size of each plot's view box (where its data is drawn), in pixels."""
    return [plot.vb.sceneBoundingRect().size() for plot in chart_plots(chart)]


class _Readable(QObject):
    """Keeps a chart widget's minimum size at what its plots need (an event filter)."""

    def __init__(self, chart: pg.GraphicsView, width_from_axes: bool = False) -> None:
        super().__init__(chart)
        self.chart = chart
        self.width_from_axes = width_from_axes
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.fit)
        chart.installEventFilter(self)
        self._central: QObject | None = None
        self._watch_central()

    def _watch_central(self) -> None:
        """Follow the scene's layout too: new tick labels, titles or legend rows widen or
        heighten the plots without resizing the widget (a LayoutRequest on the scene's
        top item)."""
        central = self.chart.centralWidget
        if central is not None and central is not self._central:
            central.installEventFilter(self)
            self._central = central
            # Laid out at the view's size, never at a larger one. pyqtgraph sets its geometry
            # only when the view is resized, and Qt clamped that up to the layout's minimum of
            # the moment; but the minimum depends on the size it is measured at (titles,
            # legends and y-axis titles wrap to the width and height; a title keeps clear of
            # the export button at the view's edge). So the item could stay larger than its
            # view, measuring a minimum that fitted only that larger size, which the view then
            # took as its own: the Chat lab's axis titles and legends were cut off, whenever
            # the events came in that order (a flake under load). Unclamped, a layout that
            # needs more overflows until `fit` (a moment later) gives the view the minimum
            # measured at the view's own size. (On a slide canvas it is clamped again:
            # `grows_to_its_minimum`.)
            central.setMinimumSize(0, 0)
            central.follows_view = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.LayoutRequest):
            self._timer.start()
        return False

    def fit(self) -> None:
        chart = self.chart
        central = chart.centralWidget
        if central is None:
            return
        if not chart.updatesEnabled():
            # Laid out on a slide canvas for an export (or between layout and paint): its
            # minimum now is the slide's; fit again once it is back on screen.
            self._timer.start(50)
            return
        self._timer.setInterval(0)
        self._watch_central()
        for plot in chart_plots(chart):
            if plot.vb.minimumWidth() < MIN_PLOT_WIDTH or plot.vb.minimumHeight() < MIN_PLOT_HEIGHT:
                plot.vb.setMinimumSize(MIN_PLOT_WIDTH, MIN_PLOT_HEIGHT)
        # The layout's own minimum (`sizeHint`: the item's is set to none, above): it is kept
        # up to date as its items change size, and reading it invalidates nothing (no
        # re-layout, no repaint, no loop).
        hint = central.sizeHint(Qt.SizeHint.MinimumSize)
        frame = 2 * chart.frameWidth()
        width, height = math.ceil(hint.width()) + frame, math.ceil(hint.height()) + frame
        if self.width_from_axes and isinstance(central, pg.PlotItem):
            width = math.ceil(_axes_width(central)) + MIN_PLOT_WIDTH + frame
        if (width, height) != (chart.minimumWidth(), chart.minimumHeight()):
            chart.setMinimumSize(width, height)


@contextlib.contextmanager
def grows_to_its_minimum(item: QGraphicsItem) -> Iterator[None]:
    """Inside: `item` (a chart's central item) is never laid out smaller than its layout's
    minimum, as Qt lays any item out, though on screen it follows its view's size
    (`keep_readable`). For a layout on a slide canvas: a chart that needs more than the
    canvas grows past it and the render scales it down, rather than cut its edges off."""
    widget = item if isinstance(item, QGraphicsWidget) else None
    if widget is None or not getattr(widget, "follows_view", False):
        yield
        return
    widget.setMinimumSize(-1, -1)  # (unset: the layout's own)
    try:
        yield
    finally:
        widget.setMinimumSize(0, 0)


def _axes_width(plot: pg.PlotItem) -> float:
    """The width the plot's y axes and layout margins take beside its view box."""
    left, _, right, _ = plot.layout.getContentsMargins()
    axes = sum(plot.getAxis(side).width() for side in ("left", "right")
               if plot.getAxis(side).isVisible())
    return float(left + right + axes)


def keep_readable(chart: pg.GraphicsView, width_from_axes: bool = False) -> None:
    """Never lay `chart`'s plots out smaller than the minimum plot area.

    Its view boxes get that minimum and the widget's minimum size is what the
    plots need around it (axes, title lines, legend rows), refitted whenever it
    is resized or shown: the page around it then scrolls rather than squash it.
    `width_from_axes`: the minimum width is the y axes' and the view box's only (a live
    plot's title and legend re-flow to its width, so their width follows the widget's
    and must not hold it).
    """
    if chart.findChild(_Readable) is None:
        _Readable(chart, width_from_axes).fit()


def refit(chart: QWidget) -> None:
    """Fit the chart's minimum size again now (after new titles or legend entries)."""
    readable = chart.findChild(_Readable)
    if readable is not None:
        readable.fit()


TITLE_NUDGE = 5.0  # px pyqtgraph moves a bottom axis' title down, past the axis' height
TITLE_GAP = 2.0  # px between the tick labels and the title under them, at least


def centre_lines(text: QGraphicsTextItem) -> None:
    """Centre each line of `text` once it wraps (Qt starts every line at the left)."""
    option = text.document().defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    text.document().setDefaultTextOption(option)


def wrap_to(text: QGraphicsTextItem, width: float) -> None:
    """`text` on one line where it fits `width` px, else wrapped at word boundaries to it."""
    text.setTextWidth(-1)
    if width > 0 and text.boundingRect().width() > width:
        text.setTextWidth(width)


def _title_shortfall(label: QGraphicsTextItem) -> float:
    """Pixels an axis lacks to hold its title `label` clear of the tick labels.

    pyqtgraph leaves room for 0.8 of the title's height and moves it `TITLE_NUDGE` px
    out past the axis; the rest of its height, less that nudge, plus `TITLE_GAP`, is
    missing (0 or less: nothing is).
    """
    return label.boundingRect().height() * 0.2 - TITLE_NUDGE + TITLE_GAP


def fit_bottom_title(plot: pg.PlotItem) -> None:
    """Keep `plot`'s x-axis title under its tick labels and as wide as the axis at most.

    pyqtgraph gives the title 0.8 of its height, so a title taller than one small line
    (a slide's large font, or two lines) rose into the tick labels; and a title wider
    than the axis ran past the chart's edge ("…너머까지 89⁊"). Here the axis takes the
    title's whole height and the title wraps, centred, at the axis' width.
    """
    axis = plot.getAxis("bottom")
    if getattr(axis, "title_fitted", False):
        return
    axis.title_fitted = True
    label = axis.label
    centre_lines(label)
    pyqtgraph_height = axis._updateHeight

    def update_height() -> None:
        pyqtgraph_height()
        if axis.fixedHeight is None and axis.isVisible() and label.isVisible():
            missing = _title_shortfall(label)
            if missing > 0:
                height = axis.maximumHeight() + missing
                axis.setMaximumHeight(height)
                axis.setMinimumHeight(height)

    def wrap() -> None:
        if not shiboken6.isValid(axis) or axis.label is None:
            return  # (the chart was closed while a wrap was queued)
        width = axis.width()
        if width <= 0:
            return
        lines = label.boundingRect().height()
        wrap_to(label, width)
        if label.boundingRect().height() != lines:
            axis._updateHeight()
        axis.resizeEvent()  # centred again

    axis._updateHeight = update_height
    axis.geometryChanged.connect(wrap)
    label.document().contentsChanged.connect(lambda: QTimer.singleShot(0, axis, wrap))
    update_height()
    keep_ticks_apart(axis)



def fit_side_titles(plot: pg.PlotItem) -> None:
    """Keep `plot`'s y-axis titles clear of their tick labels, and as long as the axis at most.

    pyqtgraph gives a y axis' rotated title 0.8 of its line height and draws it
    `TITLE_NUDGE` px past the axis' outer edge, so a title whose line is taller than
    about 25 px (a slide's large font) ran into the tick labels ("요청" into "#2").
    Here the axis is widened by what is missing, plus `TITLE_GAP`; and a title longer than
    the axis wraps, centred, at the axis' length (the axis widens by the lines it gains).
    """
    for side in ("left", "right"):
        axis = plot.getAxis(side)
        if getattr(axis, "title_fitted", False):
            continue
        axis.title_fitted = True
        _fit_side_title(axis)
        keep_ticks_apart(axis)


def _fit_side_title(axis: pg.AxisItem) -> None:
    pyqtgraph_width = axis._updateWidth
    centre_lines(axis.label)

    def wrap() -> None:
        """A title longer than its axis wraps at word boundaries to the axis' length (it ran
        past the plot's top: the top-p lab's "probability (renormalised)" on a low plot)."""
        if not shiboken6.isValid(axis) or axis.label is None:
            return
        length = axis.height()
        if length <= 0:
            return
        label = axis.label
        lines = label.boundingRect().height()
        wrap_to(label, length)
        if label.boundingRect().height() != lines:
            axis._updateWidth()
        axis.resizeEvent()  # centred on the axis again

    def update_width() -> None:
        pyqtgraph_width()
        label = axis.label
        if axis.fixedWidth is None and axis.isVisible() and label.isVisible():
            missing = _title_shortfall(label)
            if missing > 0:
                width = axis.maximumWidth() + missing
                axis.setMaximumWidth(width)
                axis.setMinimumWidth(width)

    axis._updateWidth = update_width
    axis.geometryChanged.connect(wrap)
    axis.label.document().contentsChanged.connect(lambda: QTimer.singleShot(0, axis, wrap))
    update_width()

CELL_PADDING = 6  # pixels a cell's margins take from its text's room (3 a side, as Qt draws)


def elided_cells(table: QTableView) -> list[tuple[int, int, str]]:
    """(row, column, text) of every cell in a visible column drawn narrower than its text."""
    model = table.model()
    metrics = table.fontMetrics()
    found = []
    for column in range(model.columnCount()):
        if table.isColumnHidden(column):
            continue
        width = table.columnWidth(column)
        for row in range(model.rowCount()):
            text = str(model.index(row, column).data() or "")
            if any(metrics.horizontalAdvance(line) + CELL_PADDING > width
                   for line in text.splitlines()):
                found.append((row, column, text))
    return found


# ---- titles that wrap, clear of the export button --------------------------------------------
LEGEND_MARGIN = 16.0  # pixels the legend leaves free of the plot's width
CORNER_BUTTON_NAME = "exportButton"  # a chart's export button, in its top-right corner


def corner_x_of(plot: pg.PlotItem) -> float | None:
    """Where the export button over `plot`'s top-right corner begins, less a small gap, in
    the plot's coordinates (None: no button over this plot, such as a lower or left one)."""
    scene = plot.scene()
    for view in scene.views() if scene is not None else []:
        button = view.findChild(QWidget, CORNER_BUTTON_NAME)
        if button is None or button.isHidden() or not view.updatesEnabled():
            continue  # (not updating: laid out on a slide, which has no button)
        top_left = view.mapToScene(button.geometry().topLeft())
        bottom = view.mapToScene(button.geometry().bottomLeft()).y()
        rect = plot.sceneBoundingRect()
        if rect.top() > bottom:  # (beside it, a plot's title can still run under it)
            return None
        return float(plot.mapFromScene(top_left).x()) - 4.0
    return None


def follow_title(plot: pg.PlotItem) -> None:
    """Wrap `plot`'s title to its width, clear of an export button, whenever either changes
    (what `add_legend_row` does for a plot with a legend, for a plot without one)."""
    if (getattr(plot, "title_follows", False) or getattr(plot, "refit_title", None) is not None
            or getattr(plot.legend, "refit", None) is not None):
        return  # (already follows: its legend row, or a title that wraps itself)
    plot.title_follows = True

    def refit() -> None:
        fit_title(plot, max(plot.width() - LEGEND_MARGIN, 60.0), narrows=True,
                  corner_x=corner_x_of(plot))

    plot.refit_title = refit
    plot.titleLabel.item.document().contentsChanged.connect(
        lambda: QTimer.singleShot(0, plot, refit))
    plot.geometryChanged.connect(refit)
    refit()


def _axis_width(axis: pg.AxisItem) -> float:
    """The width the axis is about to have: a width just set (fixed) before the layout ran
    gives the title the cell it will have, not the one it had."""
    low, high = axis.minimumWidth(), axis.maximumWidth()
    return float(low) if low == high else float(axis.width())


CORNER_GAP = 3.0  # px kept between a title and the corner button (rounding to pixels ate 1)


def fit_title(plot: pg.PlotItem, width: float, narrows: bool = False,
              corner_x: float | None = None) -> None:
    """Wrap `plot`'s title at word boundaries to `width` (pixels, axes included).

    `narrows`: the title never holds the plot wider than its layout gives it
    (a plot in a `GraphicsLayoutWidget`; it wraps again when its width changes).
    `corner_x`: where, in the plot's coordinates, the top-right corner that must
    stay free begins (a chart's export button sits there); the title is centred
    in its cell, so it wraps early enough that its right half ends before it.
    """
    label = plot.titleLabel
    if not label.isVisible():
        return
    # The title's cell is the view box's column, between the y axes.
    left, right = (_axis_width(plot.getAxis(side)) if plot.getAxis(side).isVisible() else 0.0
                   for side in ("left", "right"))
    title_width = max(width - left - right, 60.0)
    text = label.item
    justify = "center"
    if corner_x is not None:
        corner_x -= CORNER_GAP  # whole pixels apart: a title ending at the corner touched it
        centre = (left + plot.width() - right) / 2
        centred = max(min(title_width, 2 * (corner_x - centre)), 60.0)
        text.setTextWidth(-1)
        if text.boundingRect().width() > centred:
            text.setTextWidth(centred)
        if text.boundingRect().width() > centred + 0.5:
            # A word wider than the room centred: start the title at the plot's left edge,
            # where it has the room up to the corner (a narrow chart's title ran under it).
            justify = "left"
            title_width = max(min(title_width, corner_x - left), 60.0)
        else:
            title_width = centred
    if label.opts.get("justify") != justify:
        label.opts["justify"] = justify
    option = text.document().defaultTextOption()  # each wrapped line centred too
    align = Qt.AlignmentFlag.AlignHCenter if justify == "center" else Qt.AlignmentFlag.AlignLeft
    if option.alignment() != align:
        option.setAlignment(align)
        text.document().setDefaultTextOption(option)
    text.setTextWidth(-1)
    if text.boundingRect().width() > title_width:
        text.setTextWidth(title_width)  # wrap at word boundaries
    if narrows and not getattr(label, "narrows", False):
        label.narrows = True
        full_update_min = label.updateMin

        def narrow_update_min() -> None:  # pyqtgraph calls it on every resize and new text
            full_update_min()
            label.setMinimumWidth(60.0)
            label._sizeHint[Qt.SizeHint.MinimumSize] = (60.0, label.minimumHeight())

        label.updateMin = narrow_update_min
    label.updateMin()
    height = label.itemRect().height()
    label.setMaximumHeight(height)
    plot.layout.setRowFixedHeight(0, height)
    label.resizeEvent(None)  # re-centre the text in its row
