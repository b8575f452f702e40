"""A live notebook chart renders a frame only when the browser is ready for one.

Each live frame is a full render of the chart (`chart_view.chart_frame`). While a
lab runs, `LiveCharts.refresh` renders one for a widget only by jupyter_rfb's
rule (`ChartWidget.ready_for_frame`): the browser has confirmed the frames it was
sent. With no browser confirming (a closed tab, the headless test kernel) a run
renders its first frame and the finished chart's, and the widget's last frame is
the finished chart. These widgets have no kernel: their messages go nowhere.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest

from kvstudio.notebook import chart_view

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jupyter_rfb") is None,
    reason="the notebook extra is not installed (missing jupyter_rfb): "
           'pip install -e ".[notebook]"',
)

REFRESHES = 6  # a run's refreshes, each past REFRESH_INTERVAL_S


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every chart render of a live frame (its size); widgets shown as in a kernel."""
    sizes: list[tuple[int, int]] = []
    render = chart_view.chart_frame

    def counted(chart: Any, width: int = chart_view.WIDTH,
                height: int = chart_view.HEIGHT) -> np.ndarray:
        sizes.append((width, height))
        return render(chart, width, height)

    monkeypatch.setattr(chart_view, "chart_frame", counted)
    monkeypatch.setattr(chart_view, "in_jupyter", lambda: True)
    monkeypatch.setattr(chart_view, "REFRESH_INTERVAL_S", 0.0)  # the interval is not tested
    monkeypatch.setattr("IPython.display.display", lambda *args, **kwargs: None)
    return sizes


def live_chart(qtbot) -> tuple[chart_view.LiveCharts, pg.PlotWidget]:  # type: ignore[no-untyped-def]
    chart = pg.PlotWidget()
    qtbot.addWidget(chart)
    chart.plot([0.0, 1.0, 2.0], [1.0, 3.0, 2.0], pen="b")
    live = chart_view.LiveCharts({"main": chart}, width=480, height=300)
    assert live.live
    return live, chart


def confirm(widget: Any) -> None:
    """What the browser sends back when it has shown every frame sent (jupyter_rfb's JS)."""
    now = time.time()
    widget._frame_feedback = {"index": widget._rfb_frame_index, "timestamp": now,
                              "localtime": now}


def test_no_browser_confirming_means_the_first_frame_and_the_finished_one(  # type: ignore[no-untyped-def]
    qtbot, renders: list[tuple[int, int]],
) -> None:
    live, chart = live_chart(qtbot)
    (widget,) = live.widgets
    for _ in range(REFRESHES):
        live.refresh()
    assert len(renders) == 1  # the first frame is never held back …
    chart.plot([0.0, 2.0], [0.0, 4.0], pen="r")  # the lab's result arrives
    live.finish()
    assert len(renders) == 2  # … nor the finished chart's
    assert widget._rfb_frame_index == 2
    finished = chart_view.chart_frame(chart, 480, 300)
    assert (widget._rfb_last_frame == finished).all()  # the widget shows the finished chart


def test_a_confirmed_frame_lets_the_next_one_render(  # type: ignore[no-untyped-def]
    qtbot, renders: list[tuple[int, int]],
) -> None:
    live, _chart = live_chart(qtbot)
    (widget,) = live.widgets
    live.refresh()
    live.refresh()
    assert len(renders) == 1  # sent, not yet shown by the browser
    widget._has_visible_views = True  # the browser's view of it is on screen
    confirm(widget)
    live.refresh()
    assert len(renders) == 2  # shown: the next frame renders
    live.refresh()
    assert len(renders) == 2
    widget._has_visible_views = False  # scrolled out of sight: confirmed, but not drawn
    confirm(widget)
    live.refresh()
    assert len(renders) == 2
    assert renders == [(480, 300), (480, 300)]
