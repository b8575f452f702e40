"""Charts say what they are before they have data: titles and axis titles, no made-up
numbers (no −400…400, no "(x0.001)", no rank ticks), a centred line saying how to fill
them, no empty legend box; once the lab has run, the numbers and data are back."""

from __future__ import annotations

import pytest
from lab_helpers import run_lab, show_lab
from pyqtgraph import TextItem

from kvstudio.charts.chart_data import plot_items
from kvstudio.ui.labs import LengthSweepPanel
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.plots.tokens_fed import TokensFedPlot
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

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
    settle(qtbot)
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


def test_the_live_plots_say_how_to_fill_them_until_the_first_step(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """Before a step the live plots drew 0…1 on every axis ("layer 0.2"): now no tick
    values and a line naming the buttons, in the window's language; a step brings the
    numbers back, and Reset empties them again."""
    window = make_window(language="ko")
    live = {name: plot for name, plot in window.plots().items() if name != "answers"}
    hint = "한 토큰 ▸ 또는 끝까지 실행을 누르면 이 차트가 채워집니다."

    def assert_empty(text: str) -> None:
        for name, plot in live.items():
            assert [h.toPlainText() for h in _hint(plot)] == [text], name
            for side in ("left", "bottom"):
                assert plot.plot_item.getAxis(side)._tickLevels == [[], []], (name, side)

    assert_empty(hint)
    window.language_actions["en"].trigger()
    qtbot.waitUntil(lambda: _hint(live["tokens_fed"])[0].toPlainText().startswith("Press"),
                    timeout=HANG_GUARD_MS)
    assert_empty("Press Step ▸ or Run to end to fill this chart.")
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) == 1, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    for name, plot in live.items():
        assert "Press Step ▸ or Run to end to fill this chart." not in [
            h.toPlainText() for h in _hint(plot)], name  # (step time labels its TTFT)
        assert plot.plot_item.getAxis("bottom")._tickLevels != [[], []], name
    window.controller.reset()
    assert_empty("Press Step ▸ or Run to end to fill this chart.")


@pytest.mark.parametrize("width", [300, 420, 900])
def test_a_long_hint_wraps_inside_a_narrow_plot(qtbot, width: int) -> None:  # type: ignore[no-untyped-def]
    """At 1280×720 with a wide controls dock the Korean hint (332 px on one line) ran past
    both sides of a 300 px plot; it wraps at word boundaries, each line centred."""
    plot = TokensFedPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 260)
    plot.show()
    qtbot.waitExposed(plot, timeout=HANG_GUARD_MS)
    line = _hint(plot)[0]
    line.setText("한 토큰 ▸ 또는 끝까지 실행을 누르면 이 차트가 채워집니다.")
    settle(qtbot)  # wrapped and laid out
    view = plot.plot_item.vb.sceneBoundingRect()
    shown = line.mapRectToScene(line.boundingRect())
    assert view.contains(shown), (width, view, shown)
    if width >= 900:
        assert shown.height() < 30  # room for one line: not wrapped
