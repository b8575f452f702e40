"""A lab legend hides an entry whose series empties, inside its plot.

That every lab's legend sits in its own row under the data, in the window and on a slide
canvas, is checked on the windows with every lab run (`test_lab_legends_stay_off_the_data`
in ``test_everything_fits.py``).
"""

from __future__ import annotations

import pyqtgraph as pg
import pytest

from tests.ui.settle import settle

pytestmark = pytest.mark.usefixtures("qapp")


def test_an_entry_whose_series_empties_is_hidden_inside_its_plot(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A lab legend hides an entry whose series has no data; the hidden entry stays inside
    the plot after the plot narrows (it kept the place a wider flow gave it, outside)."""
    from kvstudio.charts.plots.legend import add_legend_row

    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    view.addPlot(row=0, col=0)
    plot = view.addPlot(row=0, col=1)
    legend = add_legend_row(plot)
    bars = [pg.BarGraphItem(x0=[0], y0=[0], width=[1], height=[1], brush=c) for c in "rgb"]
    for bar, name in zip(bars, ("shared block", "own block", "empty slots"), strict=True):
        plot.addItem(bar)
        legend.addItem(bar, name)
    settle(qtbot)
    assert legend.columnCount == 3  # one row: the last entry sits far right
    bars[2].setOpts(x0=[], y0=[], width=[], height=[])
    legend.check_drawn()
    view.resize(400, 400)
    settle(qtbot)
    sample, label = legend.items[2]
    assert not label.isVisible() and not sample.isVisible()
    whole = plot.sceneBoundingRect()
    for part in (sample.sceneBoundingRect(), label.mapRectToScene(label.itemRect())):
        assert whole.contains(part), (part, whole)
