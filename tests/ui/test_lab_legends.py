"""Lab charts keep their legends off the data: on a small screen and on a slide canvas.

Every lab of the Labs tab, and the Chat tab, is run on the tiny model in the
window at 1366×768 (and 1280×720 in Korean); each of their plots that has a
legend must show it in its own row under the plot, never over the view box,
and the plot with its title and legend must be whole on screen. The same holds
when a chart is laid out and themed for a slide export.
"""

from __future__ import annotations

import importlib.util

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, QSizeF

from kvstudio.charts.canvas import canvas_named, on_canvas, slide_theme
from kvstudio.charts.chart_data import chart_item, plot_items
from kvstudio.ui.labs.shared.base import LabPanel
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
CASES = [("en", (1366, 768)), ("ko", (1366, 768)), ("ko", (1280, 720))]


# The engine twin runs only with the llama extra (llama.cpp); without it, it is not run here.
TWIN_RUNS = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec(
    "gguf") is not None

def _small_job(name: str, lab: LabPanel) -> None:
    """Parameters that make each lab quick on the tiny model."""
    fields = {
        "cache": {"prompt_tokens": 10, "new_tokens": 3, "repeats": 2},
        "temperature": {"samples": 5, "new_tokens": 3},
        "cutoffs": {"new_tokens": 4},
        "cache_kinds": {"prompt_tokens": 16, "new_tokens": 6, "window_size": 8},
        "sweep": {"fixed": 3, "repeats": 2},
        "paged": {"samples": 4, "new_tokens": 6},
        "quantized": {"prompt_tokens": 12, "new_tokens": 4},
        "beam": {"beams": 3, "new_tokens": 4},
        "chat": {"answer_tokens": 4},
        "serving": {"repeats": 1, "answer_tokens": 3},
        "speculative": {"repeats": 1, "new_tokens": 6},
        "twin": {"prompt_tokens": 48, "new_tokens": 3, "repeats": 2},
    }.get(name, {})
    for field, value in fields.items():
        getattr(lab, field).setValue(value)
    if name == "temperature":
        lab.temperatures.setText("0.5, 1.5")  # type: ignore[attr-defined]
    if name == "sweep":
        lab.values.setText("4, 8")  # type: ignore[attr-defined]
    if name == "serving":
        lab.batch_sizes.setText("1, 2")  # type: ignore[attr-defined]
    if name == "speculative":
        lab.ks.setText("1, 2")  # type: ignore[attr-defined]
    if name == "beam":
        lab.check_transformers.setChecked(False)  # type: ignore[attr-defined]
    if name == "chat":
        lab.turn_box.setText("안녕하세요, 오늘 날씨 어때요?")  # type: ignore[attr-defined]


def _legend_plots(lab: LabPanel) -> list[tuple[str, pg.PlotItem]]:
    return [(f"{key}/{index}", plot) for key, chart in lab.charts().items()
            for index, plot in enumerate(plot_items(chart))
            if plot.legend is not None and plot.legend.items]


def _assert_legend_off_the_data(name: str, plot: pg.PlotItem, shown: QRectF | None) -> None:
    """The legend is under the data, and (with `shown`, the view's visible scene rect) its
    plot, title and entries are whole on screen."""
    legend = plot.legend
    box = legend.sceneBoundingRect()
    assert legend.isVisible() and box.width() > 0, name
    data = plot.vb.sceneBoundingRect()
    assert not box.intersects(data), (name, box, data)
    assert box.top() >= data.bottom(), (name, box, data)  # in its row under the data
    whole = plot.sceneBoundingRect().adjusted(-1, -1, 1, 1)
    for _, label in legend.items:  # every entry's text is inside its plot, off the data
        text = label.mapRectToScene(label.itemRect())
        assert whole.contains(text) and not text.intersects(data), (name, label.text, text)
    if shown is not None:
        title = plot.titleLabel
        for part in (plot.sceneBoundingRect(), title.mapRectToScene(title.itemRect())):
            assert shown.adjusted(-1, -1, 1, 1).contains(part), (name, part, shown)


@pytest.mark.parametrize(("language", "size"), CASES,
                         ids=[f"{lang}-{w}x{h}" for lang, (w, h) in CASES])
def test_lab_legends_stay_off_the_data(qtbot, make_window, language: str,
                                       size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language=language)
    window.resize(*size)
    extras = window.classroom
    labs_panel = extras.labs
    named: list[tuple[str, LabPanel, object]] = [
        *((name, lab, labs_panel) for name, lab in zip(
            ("cache", "temperature", "cutoffs", "cache_kinds", "sweep", "paged", "quantized",
             "projector", "serving", "speculative", "beam", "twin"), labs_panel.labs(),
            strict=True) if name != "twin" or TWIN_RUNS),
        ("chat", extras.chat, None),
    ]
    checked = 0
    for name, lab, parent in named:
        if parent is not None:
            window.tabs.setCurrentWidget(labs_panel)
            labs_panel.tabs.setCurrentWidget(lab)
        else:
            window.tabs.setCurrentWidget(lab)
        _small_job(name, lab)
        # The cutoff lab steps by hand: its first step is drawn when the runner pauses.
        signal = lab.runner.paused if name == "cutoffs" else lab.result_ready
        with qtbot.waitSignal(signal, timeout=HANG_GUARD_MS, raising=False) as done:
            assert lab.run(), name
        assert done.signal_triggered, (name, lab.status.text())
        settle(qtbot)
        assert window.width() <= size[0] and window.height() <= size[1]
        plots = _legend_plots(lab)
        assert plots, f"{name} draws no legend"
        for key, plot in plots:
            view = plot.scene().views()[0]
            shown = view.mapToScene(view.viewport().rect()).boundingRect()
            _assert_legend_off_the_data(f"{name}:{key}", plot, shown)
            checked += 1
        # On the slide canvas (as an export lays it out, themed): still off the data.
        for chart in lab.charts().values():
            item = chart_item(chart)
            canvas = canvas_named("16:9 small")
            with on_canvas(item, QSizeF(canvas.width, canvas.height)), \
                    slide_theme(item, canvas.width):
                for key, plot in _legend_plots(lab):
                    _assert_legend_off_the_data(f"{name}:{key} on {canvas.key}", plot, None)
        assert lab.shutdown()
    assert checked >= 11  # every lab plot that has a legend (some labs have two)


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
