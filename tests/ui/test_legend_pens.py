"""Legends tell the series apart as they are drawn: each entry's sample uses its series'
own pen (dash included), markers and brush, a dashed line still shows its gaps with a
slide's thick pens, and no entry names a series that is not drawn."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from lab_helpers import fill_every_page, show_page
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from kvstudio.charts.chart_data import plot_items
from kvstudio.charts.plots.legend import LegendSample, PlotLegend, has_data
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def _render(sample: LegendSample, scale: float = 1.0) -> QImage:
    rect = sample.boundingRect()
    image = QImage(int(rect.width() * scale), int(rect.height() * scale),
                   QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.scale(scale, scale)
    sample.paint(painter)
    painter.end()
    return image


def _ink_runs(image: QImage, y: int) -> int:
    """How many separate inked stretches the row `y` has."""
    runs, inked = 0, False
    for x in range(image.width()):
        ink = QColor(image.pixel(x, y)).lightness() < 200
        if ink and not inked:
            runs += 1
        inked = ink
    return runs


def _ink_share(image: QImage, y: int) -> float:
    inked = sum(QColor(image.pixel(x, y)).lightness() < 200 for x in range(image.width()))
    return inked / image.width()


def _same_pen(a: QPen, b: QPen) -> bool:
    if a.style() == b.style() == Qt.PenStyle.NoPen:
        return True
    return (a.color().rgba() == b.color().rgba() and a.widthF() == b.widthF()
            and a.style() == b.style())


def test_a_dashed_series_shows_dashes_in_its_legend_with_a_slide_pen(qtbot) -> None:  # type: ignore[no-untyped-def]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    legend = PlotLegend()
    plot.layout.addItem(legend, 4, 1)
    plot.legend = legend
    thick = pg.mkPen("#1f77b4", width=8, style=Qt.PenStyle.DashLine)  # a slide's line pen
    dashed = plot.plot([0, 1], [0, 1], pen=thick, name="formula")
    solid = plot.plot([0, 1], [1, 0], pen=pg.mkPen("#e6550d", width=8), name="measured")
    dots = plot.plot([0, 1], [0.5, 0.5], pen=None, symbol="o", symbolBrush="#2ca02c",
                     name="points")
    dotted = plot.plot([0, 1], [0.2, 0.8], name="dotted",
                       pen=pg.mkPen("#1f77b4", width=8, style=Qt.PenStyle.DotLine))
    samples = {label.text: sample for sample, label in legend.items}
    assert all(isinstance(s, LegendSample) for s in samples.values())
    middle = int(samples["formula"].boundingRect().height() / 2)
    assert _ink_runs(_render(samples["formula"]), middle) >= 3  # dashes, not one stroke
    assert _ink_runs(_render(samples["measured"]), middle) == 1
    # Dots stay dots and dashes dashes: less ink in a dotted sample than a dashed one.
    assert _ink_share(_render(samples["dotted"]), middle) < _ink_share(
        _render(samples["formula"]), middle) - 0.1
    assert _same_pen(samples["dotted"].pen(), dotted.opts["pen"])
    assert _same_pen(samples["formula"].pen(), dashed.opts["pen"])
    assert _same_pen(samples["measured"].pen(), solid.opts["pen"])
    image = _render(samples["points"])  # the marker in the series' colour, not grey
    centre = QColor(image.pixel(image.width() // 2, image.height() // 2))
    assert centre.name() == "#2ca02c"
    assert dots.opts["symbolBrush"] == "#2ca02c"


def _series_pen(item: object) -> QPen | None:
    """The pen the item really draws its line with on screen."""
    if isinstance(item, pg.PlotDataItem):
        if not item.curve.isVisible():  # markers only: no line, the sample draws none
            return QPen(Qt.PenStyle.NoPen)
        return QPen(pg.mkPen(item.curve.opts["pen"]))
    return None


def test_every_legend_entry_draws_its_series_pen_and_only_drawn_series(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language="en")
    pages = fill_every_page(qtbot, window)
    checked = 0
    for page in pages:
        show_page(window, page)
        settle(qtbot)  # the page shown and laid out
        for key, chart in page.charts().items():
            for plot in plot_items(chart):
                legend = getattr(plot, "legend", None)
                if legend is None:
                    continue
                for sample, label in legend.items:
                    if not sample.isVisible():
                        assert not has_data(sample.item), (key, label.text)
                        continue
                    assert has_data(sample.item), (key, label.text)  # no entry without a series
                    pen = _series_pen(sample.item)
                    if pen is not None:
                        assert _same_pen(sample.pen(), pen), (key, label.text)
                        checked += 1
    assert checked >= 10
    # The sweep draws a fit only where it explains the points: its legend lists no other.
    sweep = window.classroom.labs.panels["sweep"]
    legend = sweep.lab_view.plot.getPlotItem().legend
    shown = {label.text for sample, label in legend.items if sample.isVisible()}
    drawn = {label.text for sample, label in legend.items if has_data(sample.item)}
    assert shown == drawn


def test_cumulative_lines_say_their_end_value(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """A cumulative line far below its axis' top still reads: its total is written at its end."""
    window = make_window(max_new_tokens=4)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    total = store.trace("cached").cumulative_ms[-1]
    labels = window.time_plot.end_labels()
    assert labels["cached"] == f"Σ {total:,.0f} ms" and labels["recompute"] == ""


def test_projector_lines_say_what_they_reach(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    """The loaded model's cache lies flat under the 16 GiB line: its end value says how much."""
    from lab_helpers import run_lab, show_lab

    from kvstudio.ui.labs import ProjectorPanel

    panel = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle)
    result = run_lab(qtbot, panel)
    gib = 1024**3
    assert panel.lab_view._ends.texts() == [f"{result.cache_bytes[-1] / gib:.2f} GiB",
                                            f"{result.cache_bytes_8bit[-1] / gib:.2f} GiB"]
    panel.shutdown()
