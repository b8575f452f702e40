"""The window fits laptop and projector screens: every plot whole, legends off the data,
the controls dock without a horizontal scrollbar, in English and Korean.

The window is resized to common screen sizes after a cached run and a
recompute step (the KV-cache plot then has its longest title), with answers
sampled at three temperatures (the histogram has its legend). The screen-size checks
of one language share a window (each first resizes it to its screen).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, QSizeF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QScrollArea, QWidget

from kvstudio.charts.canvas import on_canvas
from kvstudio.ui.main_window import FRAME_ROOM, initial_geometry
from kvstudio.ui.plots.base import CORNER_BUTTON_NAME, LivePlot
from kvstudio.ui.run.engine_adapter import AnswerCounts
from tests.ui.settle import settle
from tests.ui.shared_window import next_test_shares, on_screen
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
SCREENS = [(1280, 720), (1366, 768)]


def _visible_scene_rect(plot: LivePlot) -> QRectF:
    """The part of the plot's scene its view actually shows."""
    return plot.mapToScene(plot.viewport().rect()).boundingRect()


def _opening_size(window, screen: tuple[int, int]) -> QSize:  # type: ignore[no-untyped-def]
    """The size the window opens at on a screen of that size with nothing else on it
    (1280×720 gives 1264×632: the frame and title bar take the rest)."""
    return initial_geometry(QRect(0, 0, *screen), window.minimumSizeHint()).size()


def _settle(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.controller.pacer.flush()
    settle(qtbot)


def _fill_every_plot(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: store.current_mode == "recompute", timeout=HANG_GUARD_MS)
    window.controller.step()
    qtbot.waitUntil(lambda: store.current is not None and store.current.mode == "recompute"
                    and len(store.current.records) == 1, timeout=HANG_GUARD_MS)
    window.answers.samples_box.setValue(4)
    window.answers.length_box.setValue(2)
    window.answers.temperatures_edit.setText("0.1, 0.8, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        window.answers.go_button.click()


@pytest.fixture(scope="module", params=["en", "ko"])
def filled_once(request: pytest.FixtureRequest, make_module_window,  # type: ignore[no-untyped-def]
                module_qtbot) -> tuple[Any, str]:
    """A window in the language with every plot filled (once a module)."""
    window = make_module_window(language=request.param, max_new_tokens=6)
    _fill_every_plot(module_qtbot, window)
    return window, request.param


@pytest.fixture(scope="module", params=["en", "ko"])
def bare_once(request: pytest.FixtureRequest,  # type: ignore[no-untyped-def]
              make_module_window) -> tuple[Any, str, QSize, QRect, QSize]:
    """A window in the language, its model loaded and nothing run (once a module), with
    what it opened with before any test resized it: its size, its screen's available
    geometry and its minimum size hint."""
    window = make_module_window(language=request.param)
    return (window, request.param, window.size(), window.screen().availableGeometry(),
            window.minimumSizeHint())


@pytest.fixture
def filled(request: pytest.FixtureRequest, filled_once: tuple[Any, str]) -> Iterator[Any]:
    yield from on_screen(*filled_once, next_test_shares(request, "filled_once"))


@pytest.fixture
def bare(request: pytest.FixtureRequest,
         bare_once: tuple[Any, str, QSize, QRect, QSize]) -> Iterator[tuple[Any, str]]:
    window, language, *_ = bare_once
    for _ in on_screen(window, language, next_test_shares(request, "bare_once")):
        yield window, language


@pytest.mark.parametrize("size", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_every_plot_is_whole_on_small_screens(qtbot, filled, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    window = filled
    window.resize(_opening_size(window, size))
    _settle(qtbot, window)
    assert window.width() <= size[0] and window.height() <= size[1]  # it can be that small

    cache = window.cache_plot
    bars = cache.layer_bar_rects()
    layers = len(window.controller.store.trace("cached").records[-1].cache_layer_bytes)
    assert layers >= 2 and len(bars) == 2 * layers  # K and V of every layer
    view_box = cache.plot_item.vb.sceneBoundingRect()
    shown = _visible_scene_rect(cache).intersected(view_box)
    for rect in bars:
        assert shown.adjusted(-1, -1, 1, 1).contains(rect), (rect, shown)

    # The plots' page is inside the window; where the window is too low for both rows it
    # scrolls down (never sideways), and each plot lies whole on it.
    page_scroll = window.plots_scroll
    viewport = page_scroll.viewport()
    assert window.rect().contains(QRect(viewport.mapTo(window, QPoint(0, 0)), viewport.size()))
    assert page_scroll.horizontalScrollBar().maximum() == 0
    for name, plot in window.plots().items():
        on_page = QRect(plot.mapTo(page_scroll.widget(), QPoint(0, 0)), plot.size())
        assert page_scroll.widget().rect().contains(on_page), (name, on_page)
        legend = plot.legend.sceneBoundingRect()
        assert plot.legend.isVisible() and legend.width() > 0, name
        assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(legend), (name, legend)
        for _, label in plot.legend.items:  # every entry's text, not only the legend's box
            text = label.mapRectToScene(label.itemRect())
            assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(text), (name, text)
        # Outside the data: the legend never covers the view box.
        assert not legend.intersects(plot.plot_item.vb.sceneBoundingRect()), name
        title = plot.plot_item.titleLabel
        title_rect = title.mapRectToScene(title.itemRect())
        assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(title_rect), name
        button = plot.findChild(QWidget, CORNER_BUTTON_NAME)  # the export button, top right
        assert button is not None and button.isVisible(), name
        on_plot = plot.mapFromScene(title_rect).boundingRect()
        assert not on_plot.intersects(button.geometry()), (name, on_plot, button.geometry())
        for side in ("left", "right", "bottom"):  # every axis title is shown whole
            axis = plot.plot_item.getAxis(side)
            if not axis.isVisible() or not axis.label.isVisible() or not axis.labelText:
                continue
            margin = axis.label.document().documentMargin()  # blank around the text
            text = axis.label.mapRectToScene(
                axis.label.boundingRect().adjusted(margin, margin, -margin, -margin))
            assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(text), (name, side)
            along = axis.sceneBoundingRect()  # and no longer than its axis
            if side == "bottom":
                assert text.width() <= along.width() + 1, (name, side, text, along)
            else:
                assert text.height() <= along.height() + 1, (name, side, text, along)

    temperatures = window.answers.temperatures_edit  # the Sample ×N temperatures read whole
    shown = temperatures.fontMetrics().horizontalAdvance(temperatures.text())
    assert shown < temperatures.contentsRect().width() - 4, (shown, temperatures.width())

    scroll = window.findChild(QScrollArea, "controls_scroll")
    assert scroll is not None
    assert not scroll.horizontalScrollBar().isVisible()
    assert scroll.horizontalScrollBar().maximum() == 0


def test_window_opens_inside_every_screen(  # type: ignore[no-untyped-def]
    qtbot, bare_once: tuple[Any, str, QSize, QRect, QSize]
) -> None:
    """The opening size fits each screen's available area, and the window can be that small
    (in each language: the shared bare window, as it opened)."""
    _, _, opened, available_at_open, minimum = bare_once
    for width, height in [*SCREENS, (1280, 800), (1600, 900), (1920, 1080)]:
        available = QRect(0, 0, width, height - 40)  # a desktop panel takes 40 px
        rect = initial_geometry(available, minimum)
        frame = rect.adjusted(-FRAME_ROOM.width() // 2, -(FRAME_ROOM.height()
                              - FRAME_ROOM.width() // 2), FRAME_ROOM.width() // 2,
                              FRAME_ROOM.width() // 2)
        assert available.contains(frame), (width, height, frame)
        assert rect.width() >= minimum.width() and rect.height() >= minimum.height()
    # The window itself opened with that rule on the screen it is on.
    expected = initial_geometry(available_at_open, minimum)
    assert opened == expected.size()


def test_a_plot_takes_its_view_size_back_after_a_wide_moment(qtbot, make_window,
                                                             monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Something wider than the plot for a moment (here a legend entry that is not wrapped)
    does not make the PlotItem grow past its view (`keep_readable` keeps it at the view's
    size: grown, it stayed so until the widget was resized); once everything fits again the
    plot is whole. A legend entry wider than the plot is wrapped, so the plot stays whole."""
    window = make_window(language="ko", max_new_tokens=6)
    window.resize(1366, 768)
    _settle(qtbot, window)
    plot = window.time_plot
    extra = pg.PlotDataItem()
    plot.legend.addItem(extra, "x" * 200)  # wider than any plot: wrapped
    _settle(qtbot, window)
    assert plot.plot_item.geometry().width() <= plot.width() + 1
    label = plot.legend.items[-1][1]
    assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(
        label.mapRectToScene(label.itemRect()))
    plot.legend.removeItem(extra)
    monkeypatch.setattr(plot.legend, "_wrap_labels", lambda width: None)  # kept on one line
    plot.legend.addItem(extra, "x" * 200)
    _settle(qtbot, window)
    assert plot.plot_item.geometry().width() <= plot.width() + 1
    plot.legend.removeItem(extra)
    _settle(qtbot, window)
    assert plot.plot_item.geometry().width() <= plot.width() + 1
    assert _visible_scene_rect(plot).adjusted(-1, -1, 1, 1).contains(
        plot.plot_item.getAxis("right").sceneBoundingRect())


@pytest.mark.parametrize("size", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_the_folded_answers_bar_is_labelled_on_a_laptop_screen(
    qtbot, bare, size: tuple[int, int]  # type: ignore[no-untyped-def]
) -> None:
    """Past 40 answers the rest are folded into one "others" element; its tick is drawn, not
    dropped for want of room at the axis' end (a longer "other N" was, at 1366×768)."""
    window, language = bare
    window.resize(_opening_size(window, size))
    answers = tuple(tuple((f"answer {t}-{i}", 1) for i in range(30)) for t in range(3))
    window.answers.show_counts(AnswerCounts((0.1, 0.8, 1.5), answers, 30))
    _settle(qtbot, window)
    axis = window.answers.plot.plot_item.getAxis("bottom")
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        drawn = [text for _, _, text in axis.generateDrawSpecs(painter)[2]]
    finally:
        painter.end()
    others = {"en": "others", "ko": "기타"}[language]
    assert drawn[-1] == others, drawn  # 90 answers: 39 bars of their own, 51 folded
    assert "1" in drawn


def test_short_axis_titles_on_a_small_screen_full_ones_on_a_slide(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """A y axis shorter than its title shows the short title ("Σ ms"); laid out on a slide
    it has room again and the export gets the full one; back on screen, short. At 1280×720
    the live plots keep a readable plot area, so "cumulative ms" itself fits there."""
    window = make_window(language="en", max_new_tokens=6)
    _fill_every_plot(qtbot, window)
    window.resize(_opening_size(window, (1280, 720)))
    _settle(qtbot, window)
    plot = window.plots()["step_time"]
    assert plot.axis_title("right") == "cumulative ms"
    assert plot.axis_title("left") == "ms per step"
    longer = "cumulative milliseconds (all steps)"  # longer than the axis
    plot.set_axis_title("right", longer, "Σ ms")
    _settle(qtbot, window)
    assert plot.axis_title("right") == "Σ ms"
    with on_canvas(plot.plot_item, QSizeF(1600, 900)):
        assert plot.axis_title("right") == longer
        assert plot.axis_title("left") == "ms per step"
    assert plot.axis_title("right") == "Σ ms"
    window.resize(1900, 1000)  # a big screen: the full titles
    _settle(qtbot, window)
    assert plot.axis_title("right") == longer
