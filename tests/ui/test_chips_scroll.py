"""The chips row never shows half a line at its top: once an answer wraps past the row's
height, it scrolls by whole lines, so the first visible line reads whole and the newest
chip is shown."""

from __future__ import annotations

import pytest

from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_a_wrapped_answer_scrolls_by_whole_lines(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=60)
    window.resize(1000, 640)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    settle(qtbot)
    view = window.generation
    scroll, chips = view._scroll, view.chips
    top = scroll.verticalScrollBar().value()
    height = scroll.viewport().height()
    rects = [c.rect for c in chips._chips if c.rect is not None]
    assert rects[-1].bottom() > height  # the answer wrapped past the row: it scrolled
    assert top > 0
    shown = [r for r in rects if r.bottom() > top and r.top() < top + height]
    assert all(r.top() >= top for r in shown), top  # no line cut at the top
    last = rects[-1]
    assert top <= last.top() and last.bottom() <= top + height  # the newest chip is whole
