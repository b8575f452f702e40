"""The presenter view: one chart (with the token chips) and its headline numbers, full screen.

Owns `PresenterView`, a second top-level window for the projector. It is
another view, not a zoom: it draws its own instances of the live plots from
the same `RunStore` (so the working window underneath is never resized,
restyled or re-fonted, and leaving restores nothing because nothing changed),
in high contrast and large type sized to its screen, with the chart's headline
numbers (`headlines.py`) large beside it.

Keys (a presenter's clicker sends Page Up / Page Down): Page Down, →, Space or
N steps the run; ↓ shows the next chart, Page Up, ↑ or ← the previous one (both
wrap around), 1–4 a chart by number; P or B plays and pauses; Home starts over;
Esc, F5 or Ctrl+L leaves. It does not know what stepping means: the caller
passes the actions in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QColor, QFont, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from kvstudio.ui.app.i18n import RetranslateOnLanguageChange
from kvstudio.ui.app.plain_text import plain_label
from kvstudio.ui.panels.generation_view import GenerationView
from kvstudio.ui.plots import CacheBytesPlot, LivePlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.plots.style import PlotStyle, StyleRestorer, apply_plot_style
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides import headlines
from kvstudio.ui.slides.headlines import Headline

log = logging.getLogger(__name__)

Action = Callable[[], None]
LINES_PER_SCREEN = 34.0  # body text: the screen's height / this (1080 px → 32 px type)


@dataclass(frozen=True)
class PresenterActions:
    """What the clicker's keys do to the run."""

    step: Action
    toggle_play: Action
    reset: Action


@dataclass
class PresenterChart:
    key: str  # the live plot's name in MainWindow.plots()
    title: Callable[[], str]
    plot: LivePlot
    headline: Callable[[], Headline]
    with_chips: bool  # the run's tokens above the chart (not for repeated sampling)


def presenter_style(body_px: float) -> PlotStyle:
    """Chart style for a projector: black on white, thick lines, type relative to the screen."""
    return PlotStyle(
        background="#ffffff",
        foreground="#000000",
        tick_px=body_px * 0.8,
        label_px=body_px * 0.85,
        title_px=body_px * 0.9,
        legend_px=body_px * 0.75,
        text_px=body_px * 0.8,
        axis_pen_px=2.0,
        line_px=4.0,
        bar_pen_px=1.5,
        max_luminance=0.3,
    )


def high_contrast_palette(base: QPalette) -> QPalette:
    palette = QPalette(base)
    black, white = QColor("#000000"), QColor("#ffffff")
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.Window, white)
        palette.setColor(group, QPalette.ColorRole.WindowText, black)
        palette.setColor(group, QPalette.ColorRole.Base, white)
        palette.setColor(group, QPalette.ColorRole.Text, black)
        palette.setColor(group, QPalette.ColorRole.Button, QColor("#f4f4f4"))
        palette.setColor(group, QPalette.ColorRole.ButtonText, black)
        palette.setColor(group, QPalette.ColorRole.ToolTipBase, QColor("#ffffe0"))
        palette.setColor(group, QPalette.ColorRole.ToolTipText, black)
    return palette


class PresenterView(RetranslateOnLanguageChange, QWidget):
    """Full-screen projector view over a `RunStore`; `enter()` shows it, `leave()` hides it."""

    toggled = Signal(bool)

    def __init__(self, store: RunStore, actions: PresenterActions,
                 counts: Callable[[], AnswerCounts | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("presenter_view")
        self._store = store
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
        self.charts = [
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
        self.index = 0

        self._heading = plain_label()
        self._position = plain_label()
        self._chips = GenerationView(chips_only=True)
        self._stack = QStackedWidget()
        for chart in self.charts:
            self._stack.addWidget(chart.plot)
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
        numbers = QVBoxLayout()
        numbers.addWidget(self._big)
        numbers.addWidget(self._details, 1)
        middle = QHBoxLayout()
        middle.addWidget(self._stack, 3)
        middle.addLayout(numbers, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self._chips, 1)
        layout.addLayout(middle, 5)
        layout.addWidget(self._keys)

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

    def toggle(self) -> None:
        self.set_enabled(not self.isVisible())

    # ---- charts ------------------------------------------------------------------------------
    def current_chart(self) -> PresenterChart:
        return self.charts[self.index]

    def show_chart(self, index: int) -> None:
        self.index = index % len(self.charts)
        self._stack.setCurrentIndex(self.index)
        self.refresh()

    def next_chart(self) -> None:
        self.show_chart(self.index + 1)

    def previous_chart(self) -> None:
        self.show_chart(self.index - 1)

    def headline(self) -> Headline:
        return self.current_chart().headline()

    def refresh(self, rebuild: bool = False) -> None:
        """Redraw the chart on show, the chips and the numbers (only while visible)."""
        if not self.isVisible():
            return
        chart = self.current_chart()
        counts = self._counts()
        if counts is not self._shown_counts:
            self._shown_counts = counts
            if counts is None:
                self.answers_plot.clear_counts()
            else:
                self.answers_plot.show_counts(counts)
            rebuild = True  # new bars: style them too
        if rebuild:
            self._restyle()
            self._chips.redraw(self._store)
        chart.plot.refresh(self._store)
        self._chips.setVisible(chart.with_chips)
        if chart.with_chips:
            self._chips.refresh(self._store)
        headline = chart.headline()
        self._heading.setText(chart.title())
        self._position.setText(self.tr("chart {0} of {1}").format(self.index + 1,
                                                                   len(self.charts)))
        self._big.setText(headline.big)
        self._details.setText("\n".join(headline.lines))

    # ---- look ------------------------------------------------------------------------------
    def _size_type(self, screen_height: int) -> None:
        body = max(14.0, screen_height / LINES_PER_SCREEN)
        if body == self._body_px:
            return
        self._body_px = body
        font = QFont(self.font())
        font.setPixelSize(round(body))
        self.setFont(font)  # children (chips, labels) inherit it
        for label, factor, bold in ((self._heading, 1.3, True), (self._big, 2.0, True),
                                    (self._details, 1.0, False), (self._keys, 0.6, False),
                                    (self._position, 0.7, False)):
            label_font = QFont(font)
            label_font.setPixelSize(round(body * factor))
            label_font.setBold(bold)
            label.setFont(label_font)
        for chart in self.charts:
            chart.plot.title_size = f"{round(body * 0.9)}px"

    def _restyle(self) -> None:
        for restorer in reversed(self._restorers):
            restorer.restore()
        style = presenter_style(self._body_px or 24.0)
        self._restorers = [apply_plot_style(chart.plot.plot_item, style) for chart in self.charts]
        for chart in self.charts:
            if chart.plot.right_view is not None:
                self._restorers.append(apply_plot_style(chart.plot.right_view, style))
            chart.plot.set_title(chart.plot.title_text())
            chart.plot.fit_frame()

    # ---- keys ------------------------------------------------------------------------------
    def _bind_keys(self) -> None:
        bindings: list[tuple[QKeySequence | Qt.Key | str, Action]] = [
            (Qt.Key.Key_PageDown, self._step),
            (Qt.Key.Key_Right, self._step),
            (Qt.Key.Key_Space, self._step),
            (Qt.Key.Key_N, self._step),
            (Qt.Key.Key_Down, self.next_chart),
            (Qt.Key.Key_PageUp, self.previous_chart),
            (Qt.Key.Key_Up, self.previous_chart),
            (Qt.Key.Key_Left, self.previous_chart),
            (Qt.Key.Key_P, self._actions.toggle_play),
            (Qt.Key.Key_B, self._actions.toggle_play),
            (Qt.Key.Key_Home, self._actions.reset),
            (Qt.Key.Key_Escape, self.leave),
            (Qt.Key.Key_F5, self.leave),
            ("Ctrl+L", self.leave),
        ]
        for number in range(1, len(self.charts) + 1):
            bindings.append((str(number),
                             lambda n=number: self.show_chart(n - 1)))  # type: ignore[misc]
        for key, action in bindings:
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(action)
            self._shortcuts.append(shortcut)

    def _step(self) -> None:
        self._actions.step()

    # ---- language ----------------------------------------------------------------------------
    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("KV Studio — presenter view"))
        self._keys.setText(self.tr(
            "Page Down / → / Space: next step · Page Up / ↑ / ↓: other chart · 1–4: chart · "
            "P: play or pause · Home: start over · Esc: back to the window"))
        self.refresh()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the projector window (a window manager's ✕) leaves the view."""
        event.ignore()
        self.leave()
