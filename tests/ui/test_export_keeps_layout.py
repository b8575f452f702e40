"""Exporting a chart never moves a chart on screen: every chart's widget, view box, title
and legend are where they were, with the same legend rows, after each export.

The export lays the chart out at the slide's size and back; here every live plot
(filled by a cached and a recompute run) and a lab chart are exported as PNG and
SVG, and the geometry of every chart in the window is compared before and after.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_helpers import run_lab
from PySide6.QtCore import QPoint

from kvstudio.charts.export import chart_is_empty, export_chart
from kvstudio.charts.plots.sizing import chart_plots
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def _geometry(window) -> dict[str, tuple[object, ...]]:  # type: ignore[no-untyped-def]
    """Where each live plot and its parts are, in window pixels and scene pixels."""
    out: dict[str, tuple[object, ...]] = {}
    for name, plot in window.plots().items():
        item = plot.plot_item
        legend = plot.legend
        out[name] = (
            plot.mapTo(window, QPoint(0, 0)), plot.size(),
            item.geometry(), item.vb.sceneBoundingRect(),
            legend.sceneBoundingRect(), legend.columnCount, legend.rowCount,
            item.titleLabel.sceneBoundingRect(),
            *(item.getAxis(side).geometry() for side in ("left", "bottom", "right")),
        )
    return out


def test_exporting_a_chart_leaves_every_chart_in_place(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language="ko", max_new_tokens=6)
    window.resize(1350, 700)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: store.current_mode == "recompute", timeout=HANG_GUARD_MS)
    window.controller.step()
    qtbot.waitUntil(lambda: store.current is not None and store.current.mode == "recompute"
                    and len(store.current.records) == 1, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    settle(qtbot)
    before = _geometry(window)

    for name, plot in window.plots().items():
        if chart_is_empty(plot):
            continue  # (the answers histogram before sampling: refused, nothing laid out)
        for fmt in ("png", "svg"):
            export_chart(plot, tmp_path / f"{name}.{fmt}", fmt)
            settle(qtbot)
            assert _geometry(window) == before, (name, fmt)

    labs = window.classroom.labs
    kinds = labs.panels["cache_kinds"]
    window.tabs.setCurrentWidget(labs)
    labs.tabs.setCurrentWidget(kinds)
    kinds.prompt_tokens.setValue(8)
    kinds.new_tokens.setValue(3)
    kinds.window_size.setValue(4)
    run_lab(qtbot, kinds)
    settle(qtbot)
    chart = kinds.charts()["cache-kinds"]
    lab_before = (chart.size(), [p.vb.sceneBoundingRect() for p in chart_plots(chart)])
    export_chart(chart, tmp_path / "kinds.png", "png")
    settle(qtbot)
    assert (chart.size(), [p.vb.sceneBoundingRect() for p in chart_plots(chart)]) == lab_before
    window.tabs.setCurrentIndex(0)
    settle(qtbot)
    assert _geometry(window) == before
