"""A lab chart's x-axis title stays under its tick labels and inside the axis' width: a long
title wraps (the top-p chart's "…막대 너머까지 89개를 남김 (확률 합 0.85)" ran past the chart's
edge at 1280×720), and a tall one (a slide's large font) no longer rises into the ticks."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFont

from kvstudio.charts.plots.sizing import fit_bottom_title
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
LONG = "0단계에서 가능성이 높은 토큰 20개. top-p는 막대 너머까지 89개를 남김 (확률 합 0.85)"


def _title_and_ticks(plot: pg.PlotItem) -> tuple[pg.QtCore.QRectF, float, pg.QtCore.QRectF]:
    """The title's text in scene pixels, where the tick labels end, and the axis' rect."""
    axis = plot.getAxis("bottom")
    label = axis.label
    margin = label.document().documentMargin()
    text = label.mapRectToScene(label.boundingRect().adjusted(margin, margin, -margin, -margin))
    along = axis.sceneBoundingRect()
    ticks_end = (along.top() + max(0, axis.style["tickLength"]) + axis.style["tickTextOffset"][1]
                 + axis.textHeight)
    return text, ticks_end, along


@pytest.mark.parametrize(("width", "points"), [(360, 10.0), (900, 10.0), (900, 24.0)])
def test_the_x_title_wraps_to_the_axis_and_sits_under_the_ticks(
        qtbot, width: int, points: float) -> None:  # type: ignore[no-untyped-def]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    fit_bottom_title(plot)
    plot.setLabel("bottom", LONG)
    font = QFont()
    font.setPointSizeF(points)
    plot.getAxis("bottom").label.setFont(font)
    plot.getAxis("bottom")._updateHeight()
    widget.resize(width, 300)
    widget.show()
    qtbot.waitExposed(widget, timeout=HANG_GUARD_MS)
    settle(qtbot)
    text, ticks_end, along = _title_and_ticks(plot)
    assert text.width() <= along.width() + 1, (width, points, text, along)
    assert text.top() >= ticks_end - 0.5, (width, points, text.top(), ticks_end)
    assert text.bottom() <= widget.height() + 0.5, (width, points, text, widget.height())
