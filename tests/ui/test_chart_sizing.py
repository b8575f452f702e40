"""The Sample ×N answers list wraps a long first line instead of cutting it (in a Korean
window narrowed after the answers came in wide).

The plot-area and table checks after every lab ran live in ``test_everything_fits.py``,
which shares the windows that have every page filled.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from kvstudio.charts.plots.plain_text import plain_tooltip
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_the_sample_list_shows_each_answer_line_whole(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """The Sample ×N answers list wraps a long first line instead of cutting it."""
    window = make_window(language="ko")
    window.resize(1900, 1000)  # the answers come in wide, then the window narrows
    answers = window.answers
    answers.samples_box.setValue(3)
    answers.length_box.setValue(2)
    answers.temperatures_edit.setText("0.3, 0.85, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        answers.go_button.click()
    settle(qtbot)
    listing = answers._answers
    wide = listing.width()
    window.resize(window.minimumSizeHint().width(), window.height())  # narrower than it was
    settle(qtbot)
    assert listing.width() < wide
    metrics = listing.fontMetrics()
    room = listing.viewport().width()
    for row in range(listing.count()):
        item = listing.item(row)
        rect = listing.visualItemRect(item)
        wrapped = metrics.boundingRect(0, 0, room - 8, 10_000,
                                       int(Qt.TextFlag.TextWordWrap), item.text())
        assert rect.height() >= wrapped.height() - 1, (item.text(), rect, wrapped)
        assert item.toolTip() == plain_tooltip(item.text())
