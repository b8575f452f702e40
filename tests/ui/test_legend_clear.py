"""Clearing a legend (as a retranslate or a new result does) leaves Qt nothing to warn about."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import qInstallMessageHandler

from kvstudio.charts.plots.legend import add_legend_row
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS


def test_clearing_a_legend_with_an_undrawn_entry_gives_no_layout_warning(qtbot) -> None:  # type: ignore[no-untyped-def]
    """An undrawn series' entry waits outside the legend's grid; pyqtgraph's clear asked the
    grid to remove it anyway and Qt printed "removeAt: invalid index -1" per part (seen
    32 times in a notebook cell after the serving lab)."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    plot = widget.addPlot()
    legend = add_legend_row(plot)
    plot.plot([1, 2, 3], [1, 2, 3], name="drawn")
    plot.plot([], [], name="empty")
    qtbot.waitUntil(lambda: legend.layout.count() == 2,  # only the drawn entry is in the grid
                    timeout=HANG_GUARD_MS)
    assert len(legend.items) == 2
    messages: list[str] = []
    previous = qInstallMessageHandler(lambda _kind, _context, text: messages.append(text))
    try:
        legend.clear()
        settle(qtbot)  # the layout passes that would warn
    finally:
        qInstallMessageHandler(previous)
    assert legend.items == [] and legend.layout.count() == 0
    assert not [m for m in messages if "removeAt" in m], messages
