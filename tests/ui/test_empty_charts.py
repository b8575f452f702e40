"""Charts say what they are before they have data: titles and axis titles, no made-up
numbers (no −400…400, no "(x0.001)", no rank ticks), a centred line saying how to fill
them, no empty legend box; once the lab has run, the numbers and data are back."""

from __future__ import annotations

import pytest
from lab_helpers import run_lab, show_lab
from pyqtgraph import TextItem

from kvstudio.ui.labs import LengthSweepPanel
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.slides.canvas import plot_items

pytestmark = pytest.mark.usefixtures("qapp")


def _hint(chart):  # type: ignore[no-untyped-def]
    """The chart's visible placeholder lines."""
    return [item for plot in plot_items(chart) for item in plot.items
            if isinstance(item, TextItem) and item.isVisible() and item.toPlainText()]


def test_an_empty_lab_chart_shows_how_to_fill_it(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, LengthSweepPanel, exporter, tiny_handle)
    chart = panel.charts()["length-sweep"]
    item = chart.getPlotItem()
    for side in ("left", "bottom"):
        axis = item.getAxis(side)
        assert axis._tickLevels == [[], []], side  # no tick values while empty
        assert "x0.001" not in axis.labelText and "(x" not in axis.labelString()
    hints = _hint(chart)
    assert [h.toPlainText() for h in hints] == ["Run the lab to fill this chart."]
    assert not any(s.isVisible() for s, _ in item.legend.items)  # no entry, no box

    panel.values.setText("4, 8, 12")
    panel.fixed.setValue(2)
    panel.repeats.setValue(1)
    run_lab(qtbot, panel)
    qtbot.wait(20)
    assert _hint(chart) == []
    assert item.getAxis("bottom")._tickLevels is None  # numbers again
    assert any(s.isVisible() for s, _ in item.legend.items)
    assert panel.shutdown()  # its lab thread ends here, not in another test's teardown


def test_the_empty_answers_chart_has_no_rank_ticks(qtbot) -> None:  # type: ignore[no-untyped-def]
    plot = AnswerHistogramPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    bottom = plot.plot_item.getAxis("bottom")
    assert bottom._tickLevels == [[], []]
    assert [h.toPlainText() for h in _hint(plot)] == ["Press Sample ×N to fill this chart."]
    assert plot.legend.items == []
