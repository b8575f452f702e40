"""Legends lay out in time proportional to their entries (issue 19.6).

The legend re-fitted itself after every entry, and each fit measured every
entry once per column count it tried: 100 temperatures froze the window for
1.3 s, 300 for 31.8 s (38.5 s in Sample ×N), 1,000 for over 7 minutes. The
work is counted here, not timed: entry measurements (`LabelItem.itemRect`)
and grid placements (`QGraphicsGridLayout.addItem`) for 50 and for 200
temperatures must grow about 4-fold (linear), not 16-fold or more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QGraphicsGridLayout, QWidget

from kvstudio.charts.plots.legend import PlotLegend, add_legend_row
from kvstudio.engine.records import SamplingSettings
from kvstudio.labs.sampling.sample import SamplingResult, TemperatureResult
from kvstudio.labs.sampling.temperature import TemperatureLabResult
from kvstudio.ui.labs.temperature_lab import TemperaturePanel
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.run.engine_adapter import AnswerCounts

pytestmark = pytest.mark.usefixtures("qapp")
LINEAR = 6.0  # 200 / 50 entries: linear work grows 4×, per-entry re-fits 16× and more


@pytest.fixture
def shown() -> Iterator[Callable[[QWidget, tuple[int, int]], None]]:
    """Show a widget at a size; it is closed and deleted (once) after the test."""
    widgets: list[QWidget] = []

    def show(widget: QWidget, size: tuple[int, int]) -> None:
        widgets.append(widget)
        widget.resize(*size)
        widget.show()
        QApplication.processEvents()

    yield show
    for widget in widgets:
        widget.close()
        widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the legend's layout work from now on (the counters can be reset)."""
    work = {"measured": 0, "placed": 0}
    item_rect = pg.LabelItem.itemRect
    add_item = QGraphicsGridLayout.addItem

    def measured(self: pg.LabelItem) -> object:
        work["measured"] += 1
        return item_rect(self)

    def placed(self: QGraphicsGridLayout, *args: object, **kwargs: object) -> object:
        work["placed"] += 1
        return add_item(self, *args, **kwargs)

    monkeypatch.setattr(pg.LabelItem, "itemRect", measured)
    monkeypatch.setattr(QGraphicsGridLayout, "addItem", placed)
    return work


def _work_for(work: dict[str, int], show: Callable[[int], None], n: int) -> dict[str, int]:
    for key in work:
        work[key] = 0
    show(n)
    QApplication.processEvents()
    return dict(work)


def _assert_linear(work: dict[str, int], show: Callable[[int], None]) -> None:
    small, large = _work_for(work, show, 50), _work_for(work, show, 200)
    for key in work:
        assert small[key] >= 50, (key, small)  # the counters see the legend's work
        ratio = large[key] / small[key]
        assert ratio < LINEAR, f"{key}: 50 entries {small[key]}, 200 entries {large[key]}"


def _temperature_result(n: int) -> TemperatureLabResult:
    rows = tuple(
        TemperatureResult(temperature=0.1 + i / 100, answers=("yes", "no"),
                          counts=(("yes", 1), ("no", 1)), seconds=0.01, steps=3)
        for i in range(n)
    )
    cached = SamplingResult(model_label="tiny", prompt_tokens=4, samples=2, new_tokens=3,
                            settings=SamplingSettings(), temperatures=rows)
    return TemperatureLabResult(cached=cached, recompute=None)


def test_sample_n_legend_work_grows_linearly(shown, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    plot = AnswerHistogramPlot()
    shown(plot, (700, 420))

    def show(n: int) -> None:
        plot.show_counts(AnswerCounts(tuple(0.1 + i / 100 for i in range(n)),
                                      tuple((("yes", 2), ("no", 1)) for _ in range(n)), 3))

    _assert_linear(_counting(monkeypatch), show)
    assert len(plot.legend.items) == 200 and plot.legend.columnCount > 1


def test_temperature_lab_legend_work_grows_linearly(shown, exporter, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    panel = TemperaturePanel(exporter)
    shown(panel, (1600, 900))  # room for a few columns
    view = panel.lab_view
    _assert_linear(_counting(monkeypatch), lambda n: view.show_result(_temperature_result(n)))
    legend = view.hist_plot.legend
    assert len(legend.items) == 200 and legend.columnCount > 1
    view.show_result(_temperature_result(300))  # (300 used to take 31.8 s: the counts
    QApplication.processEvents()                  # above are the test, not a clock)
    assert len(legend.items) == 300


def test_entries_added_at_once_are_laid_out_as_one_by_one(shown) -> None:  # type: ignore[no-untyped-def]
    """`add_entries` (one layout) gives the legend the look `addItem` per entry gives it."""
    names = ["T = 0.3 (1 distinct)", "T = 0.7 (2 distinct)", "T = 1 (4 distinct)",
             "T = 1.3 (7 distinct)", "T = 2 (12 distinct)", "a much longer legend entry name"]
    legends: list[PlotLegend] = []
    for at_once in (False, True):
        view = pg.GraphicsLayoutWidget()
        shown(view, (520, 400))
        plot = view.addPlot()
        legend = add_legend_row(plot)
        items = [plot.plot([0, 1], [i, i + 1]) for i in range(len(names))]
        if at_once:
            legend.add_entries(zip(items, names, strict=True))
        else:
            for item, name in zip(items, names, strict=True):
                legend.addItem(item, name)
        QApplication.processEvents()
        legends.append(legend)
    one_by_one, at_once_legend = legends
    assert 1 < one_by_one.columnCount < len(names)
    assert at_once_legend.columnCount == one_by_one.columnCount
    assert at_once_legend.geometry().size() == one_by_one.geometry().size()
    for (s1, l1), (s2, l2) in zip(one_by_one.items, at_once_legend.items, strict=True):
        assert (s1.pos(), l1.pos(), l1.text) == (s2.pos(), l2.pos(), l2.text)
