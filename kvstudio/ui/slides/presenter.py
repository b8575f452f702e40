"""The presenter view: one chart (with the token chips) and its headline numbers, full screen.

Owns `PresenterView`, a second top-level window for the projector. It is
another view, not a zoom: it draws its own instances of the live plots from
the same `RunStore` (so the working window underneath is never resized,
restyled or re-fonted, and leaving restores nothing because nothing changed),
in high contrast and large type sized to its screen, with the chart's headline
numbers (`headlines.py`) large above it. The chart takes the screen's whole
width (a projector's room is its width) and the height the headline leaves;
all its text is at least `CHART_TEXT` of the body type (28 px at 1080p).

Besides the four live charts it shows any lab's chart that has a result
(`LabChart`, listed by the caller): drawn by the slide renderer at the
screen's size in the projector style, never moved out of its lab, with the
lab's headline above it. Switching to it draws it before the screen shows the
new chart (the screen keeps the old one meanwhile, never a blank chart).

Keys mean what they mean in the main window (a clicker's Page Down steps the
run; `key_bindings` in ``presenter_charts.py`` lists them) and the hint at the
bottom says so. It does not know what stepping means: the caller passes the
actions in.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QKeySequence, QPixmap, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts import weights_notice
from kvstudio.charts.canvas import SlideCanvas
from kvstudio.charts.chart_data import ExportError
from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.charts.render import render_image
from kvstudio.charts.style import SLIDE_REFERENCE_WIDTH, StyleRestorer, apply_plot_style
from kvstudio.engine.records import MODES, Mode
from kvstudio.ui.panels.generation_view import GenerationView
from kvstudio.ui.plots import CacheBytesPlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides import headlines
from kvstudio.ui.slides.headlines import Headline, keep_together, lab_headline
from kvstudio.ui.slides.presenter_charts import (
    LabChart,
    PresenterActions,
    PresenterChart,
    key_bindings,
)
from kvstudio.ui.slides.presenter_look import (
    CHART_TEXT,
    high_contrast_palette,
    presenter_style,
    sized_font,
)

log = logging.getLogger(__name__)

BIG_CHARS = 30  # a headline's big line longer than this is set smaller
LINES_PER_SCREEN = 34.0  # body text: the screen's height / this (1080 px → 32 px type)
MARGIN = 0.4  # the window's margins, in body text heights
SPACING = 0.2  # between the title, headline, chart and hint, in body text heights


class PresenterView(RetranslateOnLanguageChange, QWidget):
    """Full-screen projector view over a `RunStore`; `enter()` shows it, `leave()` hides it."""

    toggled = Signal(bool)

    def __init__(self, store: RunStore | Callable[[], RunStore], actions: PresenterActions,
                 counts: Callable[[], AnswerCounts | None],
                 parent: QWidget | None = None,
                 lab_charts: Callable[[], Sequence[LabChart]] = tuple) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("presenter_view")
        self._store_source = store if callable(store) else (lambda: store)
        self._lab_charts = lab_charts
        self._lab_image_key: tuple[object, ...] | None = None  # what the image shows now
        self._actions = actions
        self._counts = counts
        self._shown_counts: AnswerCounts | None = None
        self._restorers: list[StyleRestorer] = []
        self._body_px = 0.0
        self.setAutoFillBackground(True)
        self.setPalette(high_contrast_palette(self.palette()))

        self.tokens_plot = TokensFedPlot()
        self.time_plot = StepTimePlot()
        self.cache_plot = CacheBytesPlot()
        self.answers_plot = AnswerHistogramPlot()
        self.live_charts = [
            PresenterChart("tokens_fed", lambda: self.tr("Tokens fed to the model"),
                           self.tokens_plot, lambda: headlines.tokens_fed(self._store), True),
            PresenterChart("step_time", lambda: self.tr("Time per step"),
                           self.time_plot, lambda: headlines.step_time(self._store), True),
            PresenterChart("cache_bytes", lambda: self.tr("KV cache per layer"),
                           self.cache_plot, lambda: headlines.cache_bytes(self._store), True),
            PresenterChart("answers", lambda: self.tr("Distinct answers over repeated samples"),
                           self.answers_plot, lambda: headlines.answers(self._shown_counts),
                           False),
        ]
        self.charts = list(self.live_charts)
        self.index = 0
        self._end_labels: dict[Mode, pg.TextItem] = {}
        right = self.tokens_plot.right_view
        for mode in MODES:  # the cumulative lines' end values (they may lie flat far below)
            label = pg.TextItem("", color="#000000", anchor=(1.0, 1.0))
            label.setZValue(20)
            if right is not None:
                right.addItem(label, ignoreBounds=True)
            self._end_labels[mode] = label

        self._heading = plain_label()
        self._position = plain_label()
        self._chips = GenerationView(chips_only=True)
        self._stack = QStackedWidget()
        for chart in self.live_charts:
            if chart.plot is not None:
                self._stack.addWidget(chart.plot)
        self._lab_view = plain_label()  # a lab's chart, rendered at this screen's size
        self._lab_view.setObjectName("presenter_lab_chart")
        self._lab_view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._lab_view.setMinimumSize(160, 120)
        # The image is drawn at the room the label has: it never asks for more itself.
        self._lab_view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self._redraw_lab = QTimer(self)
        self._redraw_lab.setSingleShot(True)
        self._redraw_lab.setInterval(0)
        self._redraw_lab.timeout.connect(self._redraw_lab_image)
        self._restyle_later = QTimer(self)
        self._restyle_later.setSingleShot(True)
        self._restyle_later.setInterval(0)
        self._restyle_later.timeout.connect(lambda: self.refresh(rebuild=True))
        self._stack.addWidget(self._lab_view)
        self._big = plain_label()
        self._big.setWordWrap(True)
        self._details = plain_label()
        self._details.setWordWrap(True)
        self._details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self._keys = plain_label()
        self._keys.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self._heading, 1)
        top.addWidget(self._position)
        # Title, tokens, headline, then the chart across the whole width (beside the
        # headline it had 58% of a 1080p projector, and the column under the numbers was
        # blank); the headline takes the lines it needs, the chart the rest.
        # All of it on one page, held unpainted while a chart is drawn (`refresh`).
        self._page = QWidget()
        self._page.setObjectName("presenter_page")
        layout = self._page_layout = QVBoxLayout(self._page)
        layout.addLayout(top)
        layout.addWidget(self._chips, 1)
        layout.addWidget(self._big)
        layout.addWidget(self._details)
        layout.addWidget(self._stack, 5)
        layout.addWidget(self._keys)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self._page)

        # Keys belong to the view (the clicker), never to a chart or the chips' scroll area.
        for child in self.findChildren(QWidget):
            child.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._shortcuts: list[QShortcut] = []
        self._bind_keys()
        self.retranslate()

    # ---- handles: what a user presses (tests and scripts press them too) ----------------
    @property
    def chips_view(self) -> GenerationView:
        """The run's tokens above the chart."""
        return self._chips

    @property
    def big_label(self) -> QLabel:
        """The headline's big number as the screen shows it."""
        return self._big

    @property
    def details_label(self) -> QLabel:
        """The headline's smaller lines as the screen shows them."""
        return self._details

    @property
    def keys_label(self) -> QLabel:
        """The hint that says what each key does."""
        return self._keys

    @property
    def chart_widget(self) -> QWidget:
        """What shows the chart on screen now (a live plot, or the lab chart's image)."""
        current = self._stack.currentWidget()
        assert current is not None
        return current

    @property
    def lab_image(self) -> QPixmap:
        """The lab chart as the screen shows it (null when a live chart is shown)."""
        return self._lab_view.pixmap()

    def end_label_texts(self) -> dict[str, str]:
        """The cumulative lines' end values as drawn on the tokens chart ("" = none)."""
        return {mode: label.textItem.toPlainText() if label.isVisible() else ""
                for mode, label in self._end_labels.items()}

    @property
    def _store(self) -> RunStore:
        return self._store_source()

    # ---- entering and leaving ----------------------------------------------------------------
    @property
    def active(self) -> bool:
        return self.isVisible()

    def enter(self, over: QWidget | None = None) -> None:
        """Full screen on the screen of `over` (the main window), drawn from the store as it is."""
        screen = (over.screen() if over is not None else None) or QApplication.primaryScreen()
        if screen is not None:
            self.setScreen(screen)
            self.setGeometry(screen.geometry())
            self._size_type(screen.geometry().height())
        self.showFullScreen()
        self.raise_()
        self.activateWindow()
        self.setFocus()
        self.update_charts()
        self.refresh(rebuild=True)
        self.toggled.emit(True)
        log.info("Presenter view on")

    def leave(self) -> None:
        if not self.isVisible():
            return
        self.hide()
        parent = self.parentWidget()
        if parent is not None:
            parent.activateWindow()
        self.toggled.emit(False)
        log.info("Presenter view off")

    def set_enabled(self, enabled: bool) -> None:
        if enabled == self.isVisible():
            return
        if enabled:
            self.enter(self.parentWidget())
        else:
            self.leave()

    # ---- charts ------------------------------------------------------------------------------
    def current_chart(self) -> PresenterChart:
        return self.charts[self.index]

    def update_charts(self) -> None:
        """The live charts, then every lab chart that has a result now (in the labs' order)."""
        current = self.current_chart().key
        labs = [
            PresenterChart(lab.key, lab.title, None,
                           lambda lab=lab: lab_headline(lab.headline()),  # type: ignore[misc]
                           False, lab)
            for lab in self._lab_charts()
        ]
        self.charts = [*self.live_charts, *labs]
        keys = [chart.key for chart in self.charts]
        self.index = keys.index(current) if current in keys else min(self.index,
                                                                      len(keys) - 1)
        self._lab_image_key = None

    def chart_keys(self) -> list[str]:
        return [chart.key for chart in self.charts]

    def show_chart(self, index: int) -> None:
        self.index = index % len(self.charts)
        self.refresh()

    def show_chart_named(self, key: str) -> bool:
        """Show the chart with this key (a live plot's name or a lab chart's pack name)."""
        self.update_charts()
        keys = self.chart_keys()
        if key not in keys:
            return False
        self.show_chart(keys.index(key))
        return True

    def next_chart(self) -> None:
        self.update_charts()  # a lab may have finished since
        self.show_chart(self.index + 1)

    def previous_chart(self) -> None:
        self.update_charts()
        self.show_chart(self.index - 1)

    def headline(self) -> Headline:
        return self.current_chart().headline()

    def refresh(self, rebuild: bool = False) -> None:
        """Redraw the chart on show, the chips and the numbers (only while visible).

        The screen is not repainted until all of it is drawn: a lab chart's image takes
        a moment to draw (and drawing processes events), and meanwhile the screen kept
        showing the new title over an empty or old chart.
        """
        if not self.isVisible():
            return
        with self._screen_held():
            self._refresh(rebuild)

    @contextlib.contextmanager
    def _screen_held(self) -> Iterator[None]:
        """The page as the screen shows it now, until the block has drawn all of it (the
        page, not the window: a window held as it is first shown is never painted)."""
        held = self._page.updatesEnabled()
        self._page.setUpdatesEnabled(False)
        try:
            yield
        finally:
            self._page.setUpdatesEnabled(held)

    def _refresh(self, rebuild: bool) -> None:
        chart = self.current_chart()
        counts = self._counts()
        if counts is not self._shown_counts:
            self._shown_counts = counts
            if counts is None:
                self.answers_plot.clear_counts()
            else:
                self.answers_plot.show_counts(counts)
            rebuild = True  # new bars: style them too
        store = self._store
        if rebuild:
            self._restyle()
            self._chips.redraw(store)
        if chart.plot is not None:
            self._stack.setCurrentWidget(chart.plot)
            chart.plot.refresh(store)
            if chart.plot is self.tokens_plot:
                self._label_line_ends()
        elif chart.lab is not None:
            self._stack.setCurrentWidget(self._lab_view)
        self._chips.setVisible(chart.with_chips)
        if chart.with_chips:
            self._chips.refresh(store)
        headline = chart.headline()
        self._heading.setText(chart.title())
        self._position.setText(self.tr("chart {0} of {1}").format(self.index + 1,
                                                                   len(self.charts)))
        big = keep_together(headline.big)
        if self._body_px:  # a lab's long first line in smaller type than "246 vs 13,728"
            font = QFont(self._big.font())
            font.setPixelSize(round(self._body_px * (2.0 if len(big) <= BIG_CHARS else 1.3)))
            self._big.setFont(font)
        self._big.setText(big)
        warning = weights_notice.notice()  # random weights: said first, on every chart
        lines = [warning, *headline.lines] if warning else headline.lines
        self._details.setText("\n".join(keep_together(line) for line in lines))
        if chart.lab is not None:
            # Drawn once the chips are hidden and the headline has its lines, at the room
            # the chart then has (drawn before, it filled a third of a 1280×720 screen).
            for layout in (self.layout(), self._page_layout):
                if layout is not None:
                    layout.activate()
            self._show_lab_image(chart.lab)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self.isVisible():
            return
        if self._size_type(event.size().height()):
            self._restyle_later.start()  # type and charts at the new size
        elif self.current_chart().lab is not None:
            self._redraw_lab.start()  # at the new size, once the layout has it

    def _redraw_lab_image(self) -> None:
        lab = self.current_chart().lab if self.isVisible() else None
        if lab is not None:
            with self._screen_held():  # the old image until the new one is drawn
                self._show_lab_image(lab)

    def _label_line_ends(self) -> None:
        """Write each cumulative line's last value at its end (246 stays readable under a
        15,000 axis)."""
        for mode, label in self._end_labels.items():
            values = self.tokens_plot.cumulative_values(mode)
            if not values:
                label.setVisible(False)
                continue
            label.setText(headlines.count(values[-1]))
            label.setPos(len(values) - 1, values[-1])
            label.setVisible(True)

    def _show_lab_image(self, lab: LabChart) -> None:
        """Draw the lab's chart as the slide renderer does, at the space this screen gives it."""
        size = self._stack.size()
        width, height = max(size.width(), 320), max(size.height(), 240)
        key = (lab.key, id(lab.version()), width, height, self._body_px)
        if key == self._lab_image_key:
            return
        canvas = SlideCanvas("presenter", width, height)
        # Slide styles are in px of a 1920-wide slide; this canvas is the screen's space.
        factor = SLIDE_REFERENCE_WIDTH / width
        style = presenter_style(self._body_px or 24.0).scaled(factor, factor)
        try:
            image = render_image(lab.chart, canvas, style)
        except ExportError as exc:
            log.warning("Cannot show %s in the presenter view: %s", lab.key, exc)
            self._lab_view.setPixmap(QPixmap())
            return
        self._lab_view.setPixmap(QPixmap.fromImage(image))
        self._lab_image_key = key

    # ---- look ------------------------------------------------------------------------------
    def _size_type(self, screen_height: int) -> bool:
        """Type sized to the screen's height; False if it already was."""
        body = max(14.0, screen_height / LINES_PER_SCREEN)
        if body == self._body_px:
            return False
        self._body_px = body
        margin = round(body * MARGIN)
        self._page_layout.setContentsMargins(margin, margin, margin, margin)
        self._page_layout.setSpacing(round(body * SPACING))
        font = sized_font(self.font(), body)
        self.setFont(font)  # children (chips, labels) inherit it
        for label, factor, bold in ((self._heading, 1.3, True), (self._big, 2.0, True),
                                    (self._details, 1.0, False), (self._keys, 0.6, False),
                                    (self._position, CHART_TEXT, False)):
            label.setFont(sized_font(font, body * factor, bold))
        for chart in self.live_charts:
            if chart.plot is not None:
                chart.plot.title_size = f"{round(body)}px"
        for end_label in self._end_labels.values():
            end_label.setFont(sized_font(font, body * CHART_TEXT, bold=True))
        return True

    def _restyle(self) -> None:
        for restorer in reversed(self._restorers):
            restorer.restore()
        style = presenter_style(self._body_px or 24.0)
        plots = [chart.plot for chart in self.live_charts if chart.plot is not None]
        self._restorers = [apply_plot_style(plot.plot_item, style) for plot in plots]
        for plot in plots:
            if plot.right_view is not None:
                self._restorers.append(apply_plot_style(plot.right_view, style))
            plot.set_title(plot.title_text())
            plot.fit_frame()

    # ---- keys ------------------------------------------------------------------------------
    def _bind_keys(self) -> None:
        for key, action in key_bindings(self._actions, self.next_chart, self.previous_chart,
                                        self.leave, self._chart_number):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(action)
            self._shortcuts.append(shortcut)

    def _chart_number(self, number: int) -> None:
        self.update_charts()
        if number <= len(self.charts):
            self.show_chart(number - 1)

    # ---- language ----------------------------------------------------------------------------
    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("KV Studio — presenter view"))
        self._keys.setText(keep_together(self.tr(
            "Page Down / → / Space: next step · Page Up / ←: one step back (as in the window) · "
            "↓ / ↑: next / previous chart · 1–9: chart by number · P: play or pause · "
            "Home: start over · Esc: back to the window")))
        self.refresh()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the projector window (a window manager's ✕) leaves the view."""
        event.ignore()
        self.leave()
