"""One layout rule for every chart: after its lab ran, each lab, chat and inspector chart
keeps a readable plot area (a view box of at least 160 × 120 px) at 1280×720 and
1366×768, in English and Korean (the page scrolls instead of squashing it), and no
results table cuts a cell's text.

Each language runs every lab once, with the smallest settings that fill its charts,
in one window both checks of that language share (they only resize it and look);
then the window is resized to each screen and every page is looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import fill_every_page, show_page
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QScrollArea, QTableView, QWidget

from kvstudio.charts.plots.plain_text import plain_tooltip
from kvstudio.charts.plots.sizing import (
    CORNER_BUTTON_NAME,
    MIN_PLOT_HEIGHT,
    MIN_PLOT_WIDTH,
    chart_plots,
    elided_cells,
    plot_areas,
)
from kvstudio.charts.plotted_data import plain_text
from kvstudio.ui.main_window import initial_geometry
from tests.ui.settle import settle
from tests.ui.shared_window import on_screen
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
SCREENS = [(1280, 720), (1366, 768)]


def _open_on(window, screen: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    """The window at the size it opens at on that screen (40 px of desktop panel)."""
    available = QRect(0, 0, screen[0], screen[1] - 40)
    window.resize(initial_geometry(available, window.minimumSizeHint()).size())


@pytest.fixture(scope="module", params=["en", "ko"])
def filled_once(request: pytest.FixtureRequest, make_module_window,  # type: ignore[no-untyped-def]
                module_qtbot) -> tuple[Any, list[Any], str]:
    """A window in the language, every lab, chat and inspector page filled (once a module)."""
    window = make_module_window(language=request.param)
    return window, fill_every_page(module_qtbot, window), request.param


@pytest.fixture
def filled(filled_once: tuple[Any, list[Any], str]) -> Iterator[tuple[Any, list[Any]]]:
    """The language's filled window on screen for this test."""
    window, pages, language = filled_once
    for _ in on_screen(window, language):
        yield window, pages


def test_every_chart_has_a_readable_plot_area(qtbot, filled) -> None:  # type: ignore[no-untyped-def]
    window, pages = filled
    for screen in SCREENS:
        _open_on(window, screen)
        for page in pages:
            show_page(window, page)
            settle(qtbot)
            for key, chart in page.charts().items():
                areas = plot_areas(chart)
                assert areas, key
                for area in areas:
                    assert area.width() >= MIN_PLOT_WIDTH - 0.5, (screen, key, area)
                    assert area.height() >= MIN_PLOT_HEIGHT - 0.5, (screen, key, area)
                button = chart.findChild(QWidget, CORNER_BUTTON_NAME)  # export, top right
                assert button is not None and button.isVisible(), key
                for plot in chart_plots(chart):  # no title under it
                    title = plot.titleLabel
                    if not title.isVisible() or not plain_text(title.text):
                        continue
                    text = title.item.mapRectToScene(title.item.boundingRect())
                    on_chart = chart.mapFromScene(text).boundingRect()
                    assert not on_chart.intersects(button.geometry()), (screen, key, on_chart)
                # The widget shows its whole scene (not a scene wider than the widget).
                scene = chart.centralWidget.geometry()
                assert scene.width() <= chart.width() + 1, (screen, key, scene, chart.size())
                assert scene.height() <= chart.height() + 1, (screen, key, scene, chart.size())
            # What does not fit scrolls: the page, never a squashed chart.
            scroll = page.findChild(QScrollArea, "labScroll")
            assert scroll is not None and scroll.widgetResizable()


def test_no_table_cell_is_elided_at_1366x768(qtbot, filled) -> None:  # type: ignore[no-untyped-def]
    window, pages = filled
    _open_on(window, (1366, 768))
    for page in pages:
        show_page(window, page)
        settle(qtbot)
        tables = [t for t in page.findChildren(QTableView) if t.isVisible()]
        assert tables, type(page).__name__
        for table in tables:
            assert table.model().rowCount() > 0, type(page).__name__
            assert elided_cells(table) == [], type(page).__name__
            for row in range(table.model().rowCount()):  # a cut would still say it all
                for column in range(table.model().columnCount()):
                    item = table.item(row, column) if hasattr(table, "item") else None
                    if item is not None and item.text():
                        assert item.toolTip() == plain_tooltip(item.text())


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
