"""Issue #33: switching Korean → English while a run plays left the controls dock
narrower than its rows (fitted once, on words the panels had not yet replaced), so
"Recompute (no cache)", "Open model folder…" and the spin boxes were cut at its right edge.

Measured on the widgets: every label, button and box of the dock asks for no more width
than it has, and lies inside the dock's viewport (the dock never scrolls sideways).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QWidget,
)

from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def flush_posted_events(passes: int = 30) -> None:
    """Deliver what Qt has posted, and what that posts in turn: the language change, then
    each level's layout request (a label's, its group box's, its panel's, the dock's)."""
    for _ in range(passes):
        QApplication.sendPostedEvents()


def dock_faults(window: Any) -> list[str]:
    """One line per dock widget cut: asking for more width than it has, or reaching past
    the right edge of the dock's viewport."""
    scroll = window._side_scroll
    view = scroll.viewport()
    faults = []
    for widget in scroll.widget().findChildren(QWidget):
        if not widget.isVisibleTo(window):
            continue
        name = f"{type(widget).__name__} {getattr(widget, 'text', lambda: '')()!r}"
        if isinstance(widget, (QLabel, QAbstractButton, QComboBox, QAbstractSpinBox)):
            wraps = isinstance(widget, QLabel) and widget.wordWrap()
            wanted = (widget.minimumSizeHint() if wraps else widget.sizeHint()).width()
            if wanted > widget.width():
                faults.append(f"{name}: asks {wanted} px, has {widget.width()}")
        right = widget.mapTo(view, widget.rect().topRight()).x()
        if right >= view.width():
            faults.append(f"{name}: right edge {right} past the viewport's {view.width()}")
    return faults


def test_switching_korean_to_english_while_running_keeps_the_dock_whole(  # type: ignore[no-untyped-def]
        qtbot, make_window) -> None:
    window = make_window(language="ko", max_new_tokens=64)
    window.resize(1366, 768)
    window.controls.set_speed(0)  # slowest: the run is still playing at the switch
    window.controls.play_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) >= 1,
                    timeout=HANG_GUARD_MS)
    flush_posted_events()
    assert dock_faults(window) == []  # whole in Korean
    korean = window._side_scroll.width()
    window.language_actions["en"].trigger()
    assert window.controls.play_button.text() != ""  # (still the playing run's button)
    flush_posted_events()  # the new words reach the dock over a few layout passes
    assert dock_faults(window) == []
    assert not window.controller.store.current.finished  # it was measured while running
    assert window._side_scroll.width() > korean  # the English rows are wider: so is the dock
    window.language_actions["ko"].trigger()  # and back
    flush_posted_events()
    assert dock_faults(window) == []
