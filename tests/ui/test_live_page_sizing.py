"""The live page keeps the layout rule too: after a cached run to the end and a recompute
run, each of its four plots has a readable plot area (a view box of at least 160 × 120 px)
at 1280×720, 1366×768, 1600×900 and 1920×1080, in English and Korean. Where the window is
too low for both rows the plots scroll down under the prompt and run bar (never sideways);
the scroll area never takes the run's keys, and the wheel over a plot scrolls the page.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea

from kvstudio.charts.plots.sizing import MIN_PLOT_HEIGHT, MIN_PLOT_WIDTH
from kvstudio.ui.main_window import initial_geometry
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
SCREENS = [(1280, 720), (1366, 768), (1600, 900), (1920, 1080)]


def _open_on(window, screen: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    """The window at the size it opens at on that screen (40 px of desktop panel)."""
    available = QRect(0, 0, screen[0], screen[1] - 40)
    window.resize(initial_geometry(available, window.minimumSizeHint()).size())


def _settle(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.controller.pacer.flush()
    settle(qtbot)


def _run_both_modes(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """A cached run to the end, then a recompute run to the end, and Sample ×N."""
    store = window.controller.store
    for mode in ("cached", "recompute"):
        window.controls.set_mode(mode)
        qtbot.waitUntil(lambda mode=mode: store.current_mode == mode or store.current is None,
                        timeout=HANG_GUARD_MS)
        window.controller.run_to_end()
        qtbot.waitUntil(lambda mode=mode: store.current is not None
                        and store.current.mode == mode and store.current.finished,
                        timeout=HANG_GUARD_MS)
    window.answers.samples_box.setValue(4)
    window.answers.length_box.setValue(2)
    window.answers.temperatures_edit.setText("0.1, 0.8, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        window.answers.go_button.click()


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_live_plot_keeps_a_readable_plot_area(qtbot, make_window, language: str) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language=language, max_new_tokens=6)
    _run_both_modes(qtbot, window)
    for screen in SCREENS:
        _open_on(window, screen)
        _settle(qtbot, window)
        assert window.width() <= screen[0] and window.height() <= screen[1]
        for name, plot in window.plots().items():
            area = plot.plot_item.vb.sceneBoundingRect()
            assert area.width() >= MIN_PLOT_WIDTH - 0.5, (screen, name, area)
            assert area.height() >= MIN_PLOT_HEIGHT - 0.5, (screen, name, area)
            whole = plot.plot_item.geometry()  # the plot's scene is the widget's, no more
            assert whole.width() <= plot.width() + 1, (screen, name, whole, plot.size())
            assert whole.height() <= plot.height() + 1, (screen, name, whole, plot.size())
        # The prompt and run bar stay in view; the plots scroll down, never sideways.
        scroll = window.findChild(QScrollArea, "liveScroll")
        assert scroll is not None
        assert scroll.horizontalScrollBar().maximum() == 0, screen
        assert window.generation.isVisible() and window.generation.height() > 0
    _open_on(window, (1280, 720))  # too low for both rows: it scrolls rather than squash
    _settle(qtbot, window)
    assert window.plots_scroll.verticalScrollBar().maximum() > 0


def test_the_plots_scroll_by_the_wheel_and_leave_the_run_keys_alone(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language="ko", max_new_tokens=8)
    _open_on(window, (1280, 720))
    store = window.controller.store
    window.controller.step()
    qtbot.waitUntil(lambda: store.current is not None and len(store.current.records) == 1,
                    timeout=HANG_GUARD_MS)
    _settle(qtbot, window)
    scroll = window.plots_scroll
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    assert scroll.focusPolicy() == Qt.FocusPolicy.NoFocus  # never holds the keys

    # The wheel over a plot scrolls the page (the plot's ranges stay as they were).
    plot = window.cache_plot
    ranges = plot.plot_item.vb.viewRange()
    viewport = plot.viewport()
    centre = QPointF(viewport.rect().center())
    wheel = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, -120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, wheel)
    assert bar.value() > 0
    assert plot.plot_item.vb.viewRange() == ranges

    # → still steps the run, with the focus on the page's plots, and nothing scrolls.
    scrolled = bar.value()
    window.tokens_plot.setFocus()
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: len(store.current.records) == 2, timeout=HANG_GUARD_MS)
    _settle(qtbot, window)
    assert bar.value() == scrolled
