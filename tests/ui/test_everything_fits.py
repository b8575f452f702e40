"""Nothing clipped: every chart of the window, every slide and every presenter page has its
titles, legends and tick labels whole and apart, at 1280×720, 1366×768 and 1920×1080, in
Korean and English, measured by item rectangles (`fit_check.layout_faults`). And one layout
rule for every lab, chat and inspector chart: a readable plot area (a view box of at least
160 × 120 px) at 1280×720 and 1366×768 (the page scrolls instead of squashing it), and no
results table cuts a cell's text.

One window a language runs the live lesson (cached and recompute to the end, Sample ×N),
every lab, the chat and the inspector once; the tests then only resize it and look: the
window at each screen size, each chart laid out on the two 16:9 slide canvases as the
export lays it out (with its headline, which must fit unelided), and the presenter view
at each screen size on each of its charts. (The plot-area and table checks share this
window: filling every page is most of what they cost.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyqtgraph as pg
import pytest
from lab_helpers import fill_every_page, show_page
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QScrollArea, QTableView, QWidget

from kvstudio.charts.canvas import canvas_named, settle_layout
from kvstudio.charts.chart_data import chart_item, plot_items
from kvstudio.charts.plots.plain_text import plain_tooltip
from kvstudio.charts.plots.sizing import (
    CORNER_BUTTON_NAME,
    MIN_PLOT_HEIGHT,
    MIN_PLOT_WIDTH,
    chart_plots,
    elided_cells,
    plot_areas,
)
from kvstudio.charts.plotted_data import chart_headline, chart_is_empty, plain_text
from kvstudio.charts.render import _prepared
from kvstudio.charts.style import SLIDE_STYLE
from kvstudio.ui.main_window import initial_geometry
from tests.ui.fit_check import chart_faults, headline_faults, layout_faults
from tests.ui.settle import settle
from tests.ui.shared_window import next_test_shares, on_screen
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
SCREENS = [(1280, 720), (1366, 768), (1920, 1080)]
CANVASES = ["16:9", "16:9 small"]


def _run_live_lesson(qtbot: Any, window: Any) -> None:
    """A cached run to the end, a recompute run to the end, and Sample ×N."""
    store = window.controller.store
    window.tabs.setCurrentIndex(0)
    for mode in ("cached", "recompute"):
        window.controls.set_mode(mode)
        qtbot.waitUntil(lambda mode=mode: store.current_mode == mode or store.current is None,
                        timeout=HANG_GUARD_MS)
        window.controller.run_to_end()
        qtbot.waitUntil(lambda mode=mode: store.current is not None
                        and store.current.mode == mode and store.current.finished,
                        timeout=HANG_GUARD_MS)
    window.answers.samples_box.setValue(3)
    window.answers.length_box.setValue(2)
    window.answers.temperatures_edit.setText("0.3, 0.85, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        window.answers.go_button.click()
    window.controller.pacer.flush()


@pytest.fixture(scope="module", params=["en", "ko"])
def filled_once(request: pytest.FixtureRequest, make_module_window,  # type: ignore[no-untyped-def]
                module_qtbot) -> tuple[Any, list[Any], str]:
    """A window in the language with the live lesson, every lab, chat and inspector run."""
    window = make_module_window(language=request.param, max_new_tokens=6)
    _run_live_lesson(module_qtbot, window)
    return window, fill_every_page(module_qtbot, window), request.param


@pytest.fixture
def filled(request: pytest.FixtureRequest,
           filled_once: tuple[Any, list[Any], str]) -> Iterator[tuple[Any, list[Any], str]]:
    window, pages, language = filled_once
    for _ in on_screen(window, language, next_test_shares(request, "filled_once")):
        yield window, pages, language


def _open_on(window: Any, screen: tuple[int, int]) -> None:
    """The window at the size it opens at on that screen (40 px of desktop panel)."""
    available = QRect(0, 0, screen[0], screen[1] - 40)
    window.resize(initial_geometry(available, window.minimumSizeHint()).size())


def _pages(window: Any, pages: list[Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    """(name, page, its charts): the live tab, then every lab, the chat and the inspector."""
    live = ("live", None, dict(window.plots()))
    return [live, *((type(page).__name__, page, dict(page.charts())) for page in pages)]


def _show(window: Any, page: Any) -> None:
    if page is None:
        window.tabs.setCurrentIndex(0)
    else:
        show_page(window, page)


@pytest.mark.parametrize("screen", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_every_window_chart_fits(qtbot, filled, screen: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    window, pages, language = filled
    _open_on(window, screen)
    faults: list[str] = []
    for name, page, charts in _pages(window, pages):
        _show(window, page)
        window.controller.pacer.flush()
        for chart in charts.values():  # painted (axes measure their tick labels as they paint),
            settle_layout(chart_item(chart))  # even a chart scrolled out of view
        settle(qtbot)
        for key, chart in charts.items():
            faults += chart_faults(chart, f"{language} {screen} {name}:{key}")
    assert faults == [], "\n".join(faults)


def test_every_slide_fits(qtbot, filled) -> None:  # type: ignore[no-untyped-def]
    """Each page is shown and settled once, and each of its charts laid out on both slide
    canvases (`CANVASES`)."""
    window, pages, language = filled
    canvases = [canvas_named(key) for key in CANVASES]
    faults: list[str] = []
    for name, page, charts in _pages(window, pages):
        _show(window, page)
        settle(qtbot)
        for key, chart in charts.items():
            if chart_is_empty(chart):
                continue
            for canvas in canvases:
                where = f"{language} {canvas.key} {name}:{key}"
                with _prepared(chart, canvas, SLIDE_STYLE,
                               chart_headline(chart)) as (item, head, _):
                    plots = [item] if isinstance(item, pg.PlotItem) else plot_items(item)
                    faults += layout_faults(plots, item.sceneBoundingRect(), where)
                    faults += headline_faults(head.lines, head.font,
                                              canvas.width - 2 * head.margin, where)
    assert faults == [], "\n".join(faults)


PRESENTER_SCREENS = SCREENS


@pytest.mark.parametrize("screen", PRESENTER_SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_every_presenter_page_fits(qtbot, filled, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                   screen: tuple[int, int]) -> None:
    """Live charts are the presenter's own plots (measured on screen); a lab chart is drawn
    by the slide renderer at the presenter's canvas and style: measured as the renderer lays
    it out (at the canvas and style of the last time the presenter drew it, once the page
    has settled: a drawing the presenter replaced is not measured), and left unpainted to
    keep the test quick."""
    import kvstudio.ui.slides.presenter as presenter_module

    window, _, language = filled
    drawn: dict[int, tuple[Any, Any, Any]] = {}  # id(lab chart): its last drawing's arguments

    def measured(chart: Any, canvas: Any, style: Any = SLIDE_STYLE, *_: Any) -> QImage:
        drawn[id(chart)] = (chart, canvas, style)
        image = QImage(canvas.width, canvas.height, QImage.Format.Format_ARGB32)
        image.fill(0xFFFFFFFF)
        return image

    monkeypatch.setattr(presenter_module, "render_image", measured)
    presenter = window.classroom.presenter
    presenter.set_enabled(True)
    faults: list[str] = []
    try:
        presenter.showNormal()
        presenter.setGeometry(0, 0, *screen)
        size_type = getattr(presenter, "_size_type", None)
        if size_type is not None:
            size_type(screen[1])
        for index in range(len(presenter.chart_keys())):
            drawn.clear()
            presenter.show_chart(index)
            chart = presenter.current_chart()
            where = f"{language} {screen} presenter {chart.key}"
            if chart.lab is None:
                settle(qtbot)
                for view in presenter.findChildren(pg.GraphicsView):
                    if view.isVisible() and view.scene() is not None and plot_items(view):
                        faults += chart_faults(view, where)
                continue
            wanted = id(chart.lab.chart)
            qtbot.waitUntil(lambda wanted=wanted: wanted in drawn, timeout=HANG_GUARD_MS)
            # The page at rest: drawn again once the layout has its final size (one settle
            # after the drawing; a second one before it waited for the same rest again).
            settle(qtbot)
            last, canvas, style = drawn[wanted]
            with _prepared(last, canvas, style, None) as (item, _, _):
                plots = [item] if isinstance(item, pg.PlotItem) else plot_items(item)
                faults += [where + fault
                           for fault in layout_faults(plots, item.sceneBoundingRect(), "")]
    finally:
        presenter.set_enabled(False)
    assert faults == [], "\n".join(faults)


def test_every_chart_has_a_readable_plot_area(qtbot, filled) -> None:  # type: ignore[no-untyped-def]
    window, pages, _ = filled
    for screen in SCREENS[:2]:  # 1280×720, 1366×768
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
    window, pages, _ = filled
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
