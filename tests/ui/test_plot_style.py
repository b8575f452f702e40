"""apply_plot_style restyles a chart and its restorer puts it back; a restorer that is kept
(the presenter keeps one while it is shown) never keeps alive an item the chart dropped."""

from __future__ import annotations

import gc
import weakref

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication

from kvstudio.charts.style import PlotStyle, apply_plot_style, slide_style_for

pytestmark = pytest.mark.usefixtures("qapp")


def _plot() -> tuple[pg.PlotWidget, pg.PlotDataItem]:
    widget = pg.PlotWidget()
    widget.plotItem.addLegend()
    curve = widget.plot([0, 1, 2], [1, 3, 2], pen=pg.mkPen("#ffff00", width=1), name="first")
    widget.setTitle("a title")
    widget.setLabel("left", "ms")
    return widget, curve


def _style() -> PlotStyle:
    return slide_style_for(640, 1920)


def test_restore_puts_every_touched_property_back(qapp: QApplication) -> None:
    widget, curve = _plot()
    legend = widget.plotItem.legend
    pen_before = pg.mkPen(curve.opts["pen"])
    label_before = dict(legend.items[0][1].opts)
    axis_style_before = dict(widget.plotItem.getAxis("left").labelStyle)
    restorer = apply_plot_style(widget.plotItem, _style())
    assert len(restorer) > 0
    assert pg.mkPen(curve.opts["pen"]).color() != pen_before.color()  # yellow made readable
    restorer.restore()
    assert pg.mkPen(curve.opts["pen"]).color() == pen_before.color()
    assert pg.mkPen(curve.opts["pen"]).widthF() == pen_before.widthF()
    assert legend.items[0][1].opts == label_before
    assert widget.plotItem.getAxis("left").labelStyle == axis_style_before
    assert len(restorer) == 0  # once


def test_a_kept_restorer_does_not_keep_dropped_items_alive(qapp: QApplication) -> None:
    widget, curve = _plot()
    legend = widget.plotItem.legend
    restorer = apply_plot_style(widget.plotItem, _style())
    old_label = weakref.ref(legend.items[0][1])
    old_curve = weakref.ref(curve)
    widget.plotItem.removeItem(curve)  # the chart drops its curve…
    legend.clear()  # …and rebuilds its legend (a language switch does)
    del curve
    gc.collect()
    assert old_curve() is None and old_label() is None
    new = widget.plot([0, 1], [0, 1], pen="b", name="second")
    restorer.restore()  # what is left is restored; what is gone is skipped
    assert legend.items and legend.items[0][1].text == "second"
    assert new.opts["pen"] is not None
