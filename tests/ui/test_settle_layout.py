"""Settling a chart's layout before a render: every tick label measured where it is drawn."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, QSizeF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsItem

from kvstudio.charts import canvas as slide_canvas
from kvstudio.charts import render
from tests.ui.fit_check import layout_faults

NARROW = [2.0, 5.0, 8.0]  # ticks "2", "3", … "8" on a 360-px axis
WIDE = [2.1, 2.5, 2.9]  # ticks "2.1" … "2.9": half as wide again


def drawn_faults(plot: pg.PlotItem, item: QGraphicsItem) -> list[str]:
    """The layout faults of `plot` as a render paints it: the paint brings the view's
    range up to its data (pyqtgraph defers that to the paint), no events after it."""
    rect = item.sceneBoundingRect()
    image = QImage(int(rect.width()), int(rect.height()), QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        item.scene().render(painter, QRectF(image.rect()), rect)
    finally:
        painter.end()
    return layout_faults([plot], rect, "drawn")


@pytest.fixture()
def chart(qtbot):  # type: ignore[no-untyped-def]
    """A plot titled "ms" on its y axis, laid out and measured for narrow tick labels."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    qtbot.waitExposed(widget)
    plot = widget.addPlot()
    plot.setLabel("left", "ms")
    plot.getAxis("left").enableAutoSIPrefix(False)
    curve = plot.plot([0, 1, 2], NARROW)
    slide_canvas.settle_layout(widget.ci)
    assert drawn_faults(plot, widget.ci) == []
    return widget, plot, curve


def _events_that_bring_data(monkeypatch: pytest.MonkeyPatch, curve: pg.PlotDataItem,
                            on_call: int) -> None:
    """`settle_layout`'s event processing sets the wide data on its `on_call`-th pass."""
    app = QApplication.instance()
    calls = 0

    class Events:
        @staticmethod
        def processEvents() -> None:  # noqa: N802  (Qt's name, called by settle_layout)
            nonlocal calls
            calls += 1
            app.processEvents()
            if calls == on_call:
                curve.setData([0, 1, 2], WIDE)

    class Application:
        @staticmethod
        def instance() -> Events:
            return Events()

    monkeypatch.setattr(slide_canvas, "QApplication", Application)


@pytest.mark.parametrize("on_call", [1, 2])
def test_data_arriving_while_settling_is_measured_before_the_render(  # type: ignore[no-untyped-def]
        chart, monkeypatch: pytest.MonkeyPatch, on_call: int) -> None:
    """New data in the events of settling's last round (a late redraw under load) used to
    stay unmeasured: the axis kept the width of "2" and drew "2.5" over its title (as the
    chat lab's TTFT chart drew "4.5" over "ms" on a slide once, under load)."""
    widget, plot, curve = chart
    _events_that_bring_data(monkeypatch, curve, on_call)
    slide_canvas.settle_layout(widget.ci)
    assert drawn_faults(plot, widget.ci) == []


def test_a_size_put_back_after_settling_is_settled_again(chart) -> None:  # type: ignore[no-untyped-def]
    """The canvas size put back after a queued resize undid it gives longer axes and other
    tick labels ("2.5", "5.0"): measured before the render, not drawn over
    the title at the old width."""
    widget, plot, _ = chart
    item = widget.ci
    size = QSizeF(item.geometry().width(), item.geometry().height() * 6)  # half ticks: "5.0"
    render._keep_size(item, size)
    assert item.geometry().size() == size
    assert drawn_faults(plot, item) == []


def _box_of(image: QImage, colour: str) -> tuple[int, int, int, int] | None:
    """The bounding box (left, top, right, bottom) of `image`'s pixels of `colour`."""
    wanted = QColor(colour).rgb()
    xs, ys = [], []
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            if image.pixel(x, y) == wanted:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def test_a_label_box_never_painted_is_drawn_where_the_render_puts_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A pyqtgraph TextItem painted for the first time draws its box at its scene transform,
    not the painter's: settling paints it once, so a chart never shown on screen has the
    label's box on the slide where the next export draws it too (not near the page's corner)."""
    widget = pg.GraphicsLayoutWidget()  # never shown: nothing has painted the label
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    plot = widget.addPlot()
    plot.plot([0, 1, 2], NARROW)
    label = pg.TextItem("ms", color="#000000", anchor=(0, 1), fill="#ffcc00")
    plot.addItem(label)
    label.setPos(1.0, 5.0)
    first = _box_of(render.render_image(widget.ci, style=None), "#ffcc00")
    second = _box_of(render.render_image(widget.ci, style=None), "#ffcc00")
    assert first is not None
    assert first == second
