"""A chart's plots are laid out at the chart widget's size, not at a larger size left over.

pyqtgraph lays a view's central item out at the view's size only when the view is
resized, and Qt clamps that size up to the layout's minimum of the moment. The
minimum depends on the size (titles, legends and y-axis titles wrap to it), so it
can shrink again right after: the item then stayed larger than its view, whose own
minimum followed the smaller figure, and the Chat lab's bottom axis titles and
legends were cut off (`test_everything_fits`, when the events ran in that order
under load). `keep_readable` keeps the item at the view's size, and the view's
minimum at what the layout needs there.
"""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSizeF

from kvstudio.charts.plots.sizing import keep_readable
from tests.ui.settle import settle

pytestmark = pytest.mark.usefixtures("qapp")


def test_a_minimum_that_shrinks_back_leaves_the_plots_at_the_views_size(qtbot) -> None:  # type: ignore[no-untyped-def]
    chart = pg.GraphicsLayoutWidget()
    qtbot.addWidget(chart)
    plot = chart.addPlot()
    keep_readable(chart)
    chart.resize(400, 300)
    chart.show()
    qtbot.waitExposed(chart)
    settle(qtbot)
    assert chart.ci.geometry().size() == QSizeF(chart.size())

    # The order the flake took: a resize lands while the minimum is briefly large (a title
    # on more lines at a narrower width), and the minimum shrinks before the chart refits.
    plot.setMinimumHeight(600)
    chart.ci.setGeometry(chart.range)  # what pyqtgraph's resizeEvent does
    plot.setMinimumHeight(0)
    settle(qtbot)
    assert chart.ci.geometry().size() == QSizeF(chart.size())

    # A layout that needs more room gets it from the view, still at the view's size.
    plot.setMinimumHeight(600)
    settle(qtbot)
    assert chart.height() >= 600
    assert chart.ci.geometry().size() == QSizeF(chart.size())
