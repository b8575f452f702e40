"""Everything a filled window shows, checked on one window a language (English, Korean)
that has run the live lesson (cached and recompute to the end, Sample ×N), every lab, the
chat and the inspector once. Filling every page is most of what these checks cost (about
10 s of CPU a language): each test only resizes the window, shows a page and looks.

Nothing clipped: every chart of the window, every slide and every presenter page has its
titles, legends and tick labels whole and apart, at 1280×720, 1366×768 and 1920×1080, in
Korean and English, measured by item rectangles (`fit_check.layout_faults`): the window at
each screen size, each chart laid out on the two 16:9 slide canvases as the export lays it
out (with its headline, which must fit unelided), and the presenter view at each screen
size on each of its charts. And one layout rule for every lab, chat and inspector chart: a
readable plot area (a view box of at least 160 × 120 px) at 1280×720 and 1366×768 (the
page scrolls instead of squashing it), and no results table cuts a cell's text.

Lab legends stay off the data: in the window at 1366×768 (and 1280×720 in Korean) and on
a slide canvas, each lab and chat plot's legend is in its own row under the plot.

The presenter view fills the projector (#33): every chart it shows at least 85% of its
width, its text at projector size, its headlines broken only between phrases.

A wheel turn over a chart never zooms it, and never changes what it exports (#33): every
lab, chat and inspector chart, and the live plots (checked on the English window).

(These checks lived in four modules, each filling its own windows: here they share them.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyqtgraph as pg
import pytest
from lab_helpers import fill_every_page, show_page
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSizeF, Qt
from PySide6.QtGui import QFont, QImage, QTextLayout, QTextOption, QWheelEvent
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsItem,
    QLabel,
    QScrollArea,
    QTableView,
    QWidget,
)

import kvstudio.charts.render as render_module
from kvstudio.charts.canvas import (
    SlideCanvas,
    canvas_named,
    companion_views,
    on_canvas,
    settle_layout,
    slide_theme,
)
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
from kvstudio.charts.render import _prepared, render_png
from kvstudio.charts.style import SLIDE_STYLE
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.main_window import initial_geometry
from kvstudio.ui.slides.headlines import NBSP, WORD_JOINER, keep_together, plain
from tests.ui.fit_check import chart_faults, headline_faults, layout_faults
from tests.ui.settle import settle
from tests.ui.shared_window import next_test_shares, on_screen
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
LANGUAGES = ["en", "ko"]  # a filled window each, in this order
# The window's size while its pages fill: the lab-legend check's first size, so that it sees
# each lab drawn at the size it checks first, as when it ran the labs itself (a Speculative
# chart drawn in a smaller window and then resized has had a legend entry 5 px below its
# plot on the slide canvas). Each other test sets its own size.
FILLED_AT = (1366, 768)
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


# ---- the windows, filled once ----------------------------------------------------------------
@pytest.fixture(scope="module", params=LANGUAGES)
def filled_once(request: pytest.FixtureRequest, make_module_window,  # type: ignore[no-untyped-def]
                module_qtbot) -> Iterator[tuple[Any, list[Any], str]]:
    """A window in the language with the live lesson, every lab, chat and inspector run;
    at the module's end every lab's thread must stop when asked (`LabPanel.shutdown`).

    A test for one language only says so with
    ``@pytest.mark.parametrize("filled_once", LANGUAGES[:1], indirect=True)``: the same
    value at the same index, so pytest runs it with the other English tests, on their
    window (a value at another index would build and fill a window of its own)."""
    window = make_module_window(language=request.param, max_new_tokens=6)
    window.resize(*FILLED_AT)
    _run_live_lesson(module_qtbot, window)
    pages = fill_every_page(module_qtbot, window)
    yield window, pages, request.param
    still_running = [type(page).__name__ for page in pages
                     if isinstance(page, LabPanel) and not page.shutdown()]
    assert still_running == [], f"these labs' threads did not stop: {still_running}"


@pytest.fixture
def filled(request: pytest.FixtureRequest,
           filled_once: tuple[Any, list[Any], str]) -> Iterator[tuple[Any, list[Any], str]]:
    """The filled window on screen in its language for one test (`shared_window`)."""
    window, pages, language = filled_once
    for _ in on_screen(window, language, next_test_shares(request, "filled_once")):
        yield window, pages, language
    # The language change back to English, delivered while the window lives (a last test's
    # left queued reached the window as the session deleted it).
    QApplication.processEvents()


# ---- every chart fits -------------------------------------------------------------------------


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


# ---- lab legends stay off the data -------------------------------------------------------------
# The window sizes the legends are checked at, by language (the smallest screen in Korean,
# whose legend entries are the widest).
LEGEND_SCREENS = {"en": [FILLED_AT], "ko": [FILLED_AT, (1280, 720)]}


def _legend_plots(lab: Any) -> list[tuple[str, pg.PlotItem]]:
    return [(f"{key}/{index}", plot) for key, chart in lab.charts().items()
            for index, plot in enumerate(plot_items(chart))
            if plot.legend is not None and plot.legend.items]


def _assert_legend_off_the_data(name: str, plot: pg.PlotItem, shown: QRectF | None) -> None:
    """The legend is under the data, and (with `shown`, the view's visible scene rect) its
    plot, title and entries are whole on screen."""
    legend = plot.legend
    box = legend.sceneBoundingRect()
    assert legend.isVisible() and box.width() > 0, name
    data = plot.vb.sceneBoundingRect()
    assert not box.intersects(data), (name, box, data)
    assert box.top() >= data.bottom(), (name, box, data)  # in its row under the data
    whole = plot.sceneBoundingRect().adjusted(-1, -1, 1, 1)
    for _, label in legend.items:  # every entry's text is inside its plot, off the data
        text = label.mapRectToScene(label.itemRect())
        assert whole.contains(text) and not text.intersects(data), (name, label.text, text)
    if shown is not None:
        title = plot.titleLabel
        for part in (plot.sceneBoundingRect(), title.mapRectToScene(title.itemRect())):
            assert shown.adjusted(-1, -1, 1, 1).contains(part), (name, part, shown)


def test_lab_legends_stay_off_the_data(qtbot, filled) -> None:  # type: ignore[no-untyped-def]
    """Every lab of the Labs tab, and the Chat tab (the inspector draws no legend), in the
    window at each of its `LEGEND_SCREENS`: each of their plots that has a legend shows it
    in its own row under the plot, never over the view box, and the plot with its title
    and legend is whole on screen. The same holds when a chart is laid out and themed for
    a slide export."""
    window, pages, language = filled
    with_legends = [page for page in pages if page is not window.classroom.inspector]
    for size in LEGEND_SCREENS[language]:
        window.resize(*size)
        checked = 0
        for page in with_legends:
            name = type(page).__name__
            show_page(window, page)
            settle(qtbot)
            assert window.width() <= size[0] and window.height() <= size[1]
            plots = _legend_plots(page)
            assert plots, f"{name} draws no legend"
            for key, plot in plots:
                view = plot.scene().views()[0]
                shown = view.mapToScene(view.viewport().rect()).boundingRect()
                _assert_legend_off_the_data(f"{size} {name}:{key}", plot, shown)
                checked += 1
            # On the slide canvas (as an export lays it out, themed): still off the data.
            for chart in page.charts().values():
                item = chart_item(chart)
                canvas = canvas_named("16:9 small")
                with on_canvas(item, QSizeF(canvas.width, canvas.height)), \
                        slide_theme(item, canvas.width):
                    for key, plot in _legend_plots(page):
                        _assert_legend_off_the_data(f"{name}:{key} on {canvas.key}", plot, None)
        assert checked >= 11  # every lab plot that has a legend (some labs have two)


# ---- the presenter fills the projector -----------------------------------------------------------
# On every chart it shows (the four live charts and every lab's), at 1920×1080 and 1366×768,
# in English and Korean, the chart is at least 85% of the window's width, its smallest text
# (ticks, legends, axis titles, value labels) at least 28 px at 1080p (proportionally less
# on a smaller screen), the headline's lines break only between phrases and nothing is
# clipped; a lab chart is drawn before the screen shows it (the page is held unpainted
# meanwhile, never blank). Measured from widget and item geometry and font pixel sizes: the
# lab charts' fonts as the slide renderer paints them into the presenter's image.
PROJECTOR_SCREENS = [(1920, 1080), (1366, 768)]
MIN_SHARE = 0.85  # of the window's width
MIN_TEXT_1080 = 28.0  # px, at 1080p; proportionally less on a smaller screen
LINE_ENDS = (" ", "\n", "\u2028")  # where a shown line may end: a space the policy left
# Lab charts whose own layout needs more height at projector type than any screen gives
# below a headline, so the renderer draws them smaller (text and all). None now: Serving's
# five plots, in rows with their legends under them, needed ~1,070 px at 29-px type (745
# px to spare at 1080p); on a wide page they go in columns, legends beside (its grid.py).
# Checked to be still too tall, so that an entry goes once it fits.
TOO_TALL: set[str] = set()


def _px(size: object) -> float:
    return float(str(size).removesuffix("px")) if size else 0.0


def _font_px(font: QFont) -> float:
    return float(font.pixelSize()) if font.pixelSize() > 0 else font.pointSizeF() * 96 / 72


def _items(root: QGraphicsItem) -> Iterator[QGraphicsItem]:
    for top in (root, *companion_views(root)):
        stack = [top]
        while stack:
            item = stack.pop()
            yield item
            stack.extend(item.childItems())


def chart_text_px(root: QGraphicsItem, scale: float = 1.0) -> dict[str, float]:
    """The smallest pixel size of each kind of text shown in a chart, × `scale`."""
    found: dict[str, list[float]] = {}
    for item in _items(root):
        if not item.isVisible():
            continue
        if isinstance(item, pg.AxisItem):
            if item.style.get("showValues", True):
                found.setdefault("tick", []).append(
                    _font_px(item.style.get("tickFont") or QApplication.font()))
            if item.label.isVisible() and item.labelText:
                found.setdefault("axis title", []).append(_px(item.labelStyle.get("font-size")))
        elif isinstance(item, pg.LegendItem) and item.items:
            found.setdefault("legend", []).append(_px(item.opts.get("labelTextSize")))
        elif isinstance(item, pg.TextItem) and item.textItem.toPlainText().strip():
            found.setdefault("text", []).append(_font_px(item.textItem.font()))
    return {kind: min(sizes) * scale for kind, sizes in found.items()}


def shown_lines(label: QLabel) -> list[tuple[str, float]]:
    """The label's text as its word wrap lays it out: each line (with what ends it) and
    its width."""
    text = label.text().replace("\n", "\u2028")
    layout = QTextLayout(text, label.font())
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap)
    layout.setTextOption(option)
    width = label.contentsRect().width()
    lines = []
    layout.beginLayout()
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(width)
        start = line.textStart()
        lines.append((text[start:start + line.textLength()], line.naturalTextWidth()))
    layout.endLayout()
    return lines


def label_line_faults(label: QLabel, where: str) -> list[str]:
    """A presenter label's shown lines: each fits, breaks between phrases, none is cut."""
    faults = []
    width = label.contentsRect().width()
    lines = shown_lines(label)
    for index, (line, natural) in enumerate(lines):
        if natural > width + 1:
            faults.append(f"{where}: line wider than the screen gives it: {plain(line)!r}")
        if index < len(lines) - 1 and not line.endswith(LINE_ENDS):
            faults.append(f"{where}: breaks inside a phrase after {plain(line)!r}")
    needed = label.heightForWidth(label.width())
    if needed > label.height() + 1:
        faults.append(f"{where}: headline cut ({needed} px tall in {label.height()} px)")
    return faults


def inside(child: QWidget, window: QWidget) -> bool:
    top_left = child.mapTo(window, child.rect().topLeft())
    return window.rect().contains(QRect(top_left, child.size()).adjusted(1, 1, -1, -1))


@pytest.fixture
def presenter_on(filled: tuple[Any, list[Any], str],
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The presenter over the filled window, in its language; what the slide renderer
    painted last into its lab chart image (text sizes, whether the page was held)."""
    painted: dict[str, Any] = {}
    real = render_module._paint_page
    presenter = filled[0].classroom.presenter

    def recording(painter: Any, item: Any, head: Any, canvas: Any, background: str) -> None:
        # The scene is drawn into the rect keeping its aspect ratio: a chart whose layout
        # needs more height than the screen gives it is drawn smaller, text and all.
        rect, source = render_module._chart_rect(head, canvas), item.sceneBoundingRect()
        scale = min(rect.width() / max(1.0, source.width()),
                    rect.height() / max(1.0, source.height()))
        painted["text"] = chart_text_px(item, scale)
        painted["width"] = source.width() * scale
        page = presenter.findChild(QWidget, "presenter_page")
        painted["page held"] = page is not None and not page.updatesEnabled()
        painted["count"] = painted.get("count", 0) + 1
        real(painter, item, head, canvas, background)

    monkeypatch.setattr(render_module, "_paint_page", recording)
    presenter.set_enabled(True)
    try:
        yield presenter, painted
    finally:
        presenter.set_enabled(False)


@pytest.mark.parametrize("screen", PROJECTOR_SCREENS,
                         ids=[f"{w}x{h}" for w, h in PROJECTOR_SCREENS])
def test_every_presenter_page_fills_the_screen(qtbot, presenter_on,  # type: ignore[no-untyped-def]
                                               screen: tuple[int, int]) -> None:
    presenter, painted = presenter_on
    presenter.showNormal()
    presenter.setGeometry(0, 0, *screen)
    settle(qtbot)
    assert presenter.size().toTuple() == screen
    smallest = MIN_TEXT_1080 * screen[1] / 1080
    keys = presenter.chart_keys()
    assert len(keys) >= 4 + 12, keys  # the live charts and every lab's
    faults: list[str] = []
    for index, key in enumerate(keys):
        before = painted.get("count", 0)
        presenter.show_chart(index)
        chart = presenter.current_chart()
        where = f"{screen} {key}"
        shown = presenter.chart_widget
        if chart.lab is not None:
            # Drawn before show_chart returned, at the room it has, with the page held.
            image = presenter.lab_image
            assert painted.get("count", 0) > before, where
            assert painted["page held"], where
            assert not image.isNull(), where
            assert abs(image.width() - shown.width()) <= 2, (where, image.size(), shown.size())
            assert abs(image.height() - shown.height()) <= 2, (where, image.size(), shown.size())
            text = painted["text"]
            width = painted["width"]
        else:
            settle(qtbot)
            text = chart_text_px(chart.plot.plot_item)
            width = shown.width()
        share = width / presenter.width()
        small = {kind: px for kind, px in text.items() if px < smallest - 0.5}
        if key in TOO_TALL:
            if share >= MIN_SHARE and not small:
                faults.append(f"{where}: fits now; take it off TOO_TALL")
        else:
            if share < MIN_SHARE:
                faults.append(f"{where}: chart {width:.0f} px = {share:.0%} of the width")
            faults += [f"{where}: {kind} text {px:.1f} px < {smallest:.1f} px"
                       for kind, px in small.items()]
        assert "tick" in text, (where, text)
        for name, label in (("headline", presenter.big_label),
                            ("details", presenter.details_label),
                            ("keys", presenter.keys_label)):
            faults += label_line_faults(label, f"{where} {name}")
            if not inside(label, presenter):
                faults.append(f"{where}: {name} outside the window")
        if not inside(shown, presenter):
            faults.append(f"{where}: chart outside the window")
    presenter.show_chart(0)
    assert faults == [], "\n".join(faults)


# The line-break policy the presenter's headlines follow (no window needed).
@pytest.mark.parametrize(("text", "whole"), [
    ("Cached: P = 14, N = 6 → P+(N−1) = 19", "P+(N−1) = 19"),
    ("Recompute: P = 14, N = 6 → P·N+N(N−1)/2 = 99", "P·N+N(N−1)/2 = 99"),
    ("cached 1.68 ms/token vs recompute 7.98 ms/token (median of 5 rounds)", "7.98 ms/token"),
    ("Context 24 → 72 tokens: Recompute: 5.35 → 9.88 ms per token", "9.88 ms per token"),
    ("The window W = 16 is shorter than the context P + N − 1 = 43.", "P + N − 1 = 43."),
    ("토큰당 대상 호출 0.72회 (공식 1.40), 최소-/최대 값", "최소-/최대"),
    ("top-p = 0.85가 토큰 6,400개 중 89개를 남기고 그 확률 합은 0.85 ≥ 0.85",
     "그 확률 합은 0.85 ≥ 0.85"),
])
def test_headlines_break_only_between_phrases(text: str, whole: str) -> None:
    """Laid out at any width, a formula, a number with its unit or a word-like run is
    never split over two lines ("P+ / (N−1)", "ms/ / token", "최소- / /최대")."""
    kept = keep_together(text)
    assert plain(kept) == text
    font = QFont()
    font.setPixelSize(20)
    for width in range(40, 900, 7):
        label = QLabel(kept)
        label.setFont(font)
        label.setWordWrap(True)
        label.setFixedWidth(width)
        lines = [plain(line).strip() for line, _ in shown_lines(label)]
        assert any(whole in line for line in lines), (width, lines)


def test_a_headlines_parts_break_after_the_dot() -> None:
    kept = keep_together("2,048 B per token · 204,800 B per 100 tokens")
    assert kept.count(" ") == 1 and f"{NBSP}· " in kept  # the only break: after the dot
    assert WORD_JOINER not in keep_together("tokens fed")


# ---- a wheel turn zooms nothing ------------------------------------------------------------------
# Last in the module: each check exports the chart (laid out at the canvas and back).
EXPORT_CANVAS = SlideCanvas("test", 800, 450)


def _ranges(chart: Any) -> list[Any]:
    return [plot.vb.viewRange() for plot in plot_items(chart)]


def _wheel(chart: Any) -> None:
    """Three notches in over the middle of each plot's data area."""
    for plot in plot_items(chart):
        centre = plot.vb.sceneBoundingRect().center()
        at = QPointF(chart.mapFromScene(centre))
        for _ in range(3):
            event = QWheelEvent(at, QPointF(chart.mapToGlobal(at.toPoint())), QPoint(0, 0),
                                QPoint(0, 120), Qt.MouseButton.NoButton,
                                Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                                False)
            QApplication.sendEvent(chart.viewport(), event)


def _stable_png(chart: Any) -> bytes:
    """The chart's PNG once two exports in a row are identical (pending auto-ranges and
    layouts done: on a busy machine they may take more than one pass)."""
    previous = b""
    for _ in range(12):
        QApplication.processEvents()
        picture = render_png(chart, EXPORT_CANVAS)
        if picture == previous:
            break
        previous = picture
    return previous


def _check_untouched(chart: Any) -> None:
    picture = _stable_png(chart)
    QApplication.processEvents()  # back from the export's layout
    before = _ranges(chart)
    _wheel(chart)
    QApplication.processEvents()
    # (an export lays the chart out at the canvas and back: its auto-range padding moves
    # by a hair; three notches of zoom would halve the range)
    for now, was in zip(_ranges(chart), before, strict=True):
        for (lo, hi), (lo0, hi0) in zip(now, was, strict=True):
            span = abs(hi0 - lo0) or 1.0
            assert (lo, hi) == pytest.approx((lo0, hi0), abs=0.02 * span)
    # The exported picture is not compared byte for byte: in 2 of 6 loaded CI runs it
    # differed by a re-layout after the wheel (the page scrolled) with every view range
    # unchanged; the ranges above are what a zoom changes (by half, not by 2 %).
    assert _stable_png(chart)[:24] == picture[:24]  # same size of image
    for plot in plot_items(chart):
        assert plot.vb.state["mouseEnabled"] == [False, False]


@pytest.mark.parametrize("filled_once", LANGUAGES[:1], indirect=True)
def test_a_wheel_turn_leaves_every_lab_chart_as_drawn(filled) -> None:  # type: ignore[no-untyped-def]
    window, pages, _ = filled
    checked = 0
    for page in pages:
        show_page(window, page)
        for chart in page.charts().values():
            _check_untouched(chart)
            checked += 1
    assert checked >= len(pages)


@pytest.mark.parametrize("filled_once", LANGUAGES[:1], indirect=True)
def test_a_wheel_turn_leaves_every_live_plot_as_drawn(filled) -> None:  # type: ignore[no-untyped-def]
    """On the live plots after the lesson's runs (the live tab shown)."""
    window, _, _ = filled
    _show(window, None)
    plots = window.plots()
    assert plots
    for plot in plots.values():
        _check_untouched(plot)
