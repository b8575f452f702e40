"""Lecture mode: big type, high contrast, thick lines, and a keyboard (or clicker) that drives.

Owns `LectureMode`, which applies and removes, as one switch:

- the application font × `font_scale` (1.6 by default),
- a high-contrast palette (black on white, strong selection),
- the charts' `PlotStyle` with larger fonts and thicker lines (restored exactly),
- keys that a presenter's clicker sends: Page Down / N = step, P / B = play or
  pause, Home = reset (the window's → and Space keep working too).

It does not know what stepping means: the caller passes the actions in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QWidget

from kvstudio.ui.plots.style import PlotStyle, StyleRestorer, apply_plot_style
from kvstudio.ui.slides.export import ChartLike, chart_item, companion_views

log = logging.getLogger(__name__)

Action = Callable[[], None]


@dataclass(frozen=True)
class LectureActions:
    """What the lecture keys do."""

    step: Action
    toggle_play: Action
    reset: Action


def lecture_style(base_px: float, font_scale: float) -> PlotStyle:
    """Chart style for a projector: sizes relative to the screen font, not a slide."""
    px = base_px * font_scale
    return PlotStyle(
        background="#ffffff",
        foreground="#000000",
        tick_px=px,
        label_px=px * 1.1,
        title_px=px * 1.2,
        legend_px=px * 0.75,  # legends sit on the data: keep them modest
        text_px=px,
        axis_pen_px=2.0,
        line_px=3.5,
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
        palette.setColor(group, QPalette.ColorRole.AlternateBase, QColor("#f0f0f0"))
        palette.setColor(group, QPalette.ColorRole.Text, black)
        palette.setColor(group, QPalette.ColorRole.Button, QColor("#f4f4f4"))
        palette.setColor(group, QPalette.ColorRole.ButtonText, black)
        palette.setColor(group, QPalette.ColorRole.Highlight, QColor("#0040c0"))
        palette.setColor(group, QPalette.ColorRole.HighlightedText, white)
        palette.setColor(group, QPalette.ColorRole.ToolTipBase, QColor("#ffffe0"))
        palette.setColor(group, QPalette.ColorRole.ToolTipText, black)
    return palette


class LectureMode(QObject):
    """One switch for the projector; `set_enabled(False)` puts everything back."""

    toggled = Signal(bool)

    def __init__(
        self,
        window: QWidget,
        charts: Callable[[], Iterable[ChartLike]],
        actions: LectureActions,
        font_scale: float = 1.6,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent or window)
        self._window = window
        self._charts = charts
        self._actions = actions
        self.font_scale = font_scale
        self._restorers: list[StyleRestorer] = []
        self._old_font: QFont | None = None
        self._old_palette: QPalette | None = None
        self._shortcuts: list[QShortcut] = []
        self.enabled = False

    def set_enabled(self, enabled: bool) -> None:
        if enabled == self.enabled:
            return
        if enabled:
            self._apply()
        else:
            self._remove()
        self.enabled = enabled
        self.toggled.emit(enabled)

    def toggle(self) -> None:
        self.set_enabled(not self.enabled)

    def _apply(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            self._old_font = QFont(app.font())
            self._old_palette = QPalette(app.palette())
            big = QFont(self._old_font)
            if big.pointSizeF() > 0:
                big.setPointSizeF(big.pointSizeF() * self.font_scale)
            else:
                big.setPixelSize(round(big.pixelSize() * self.font_scale))
            app.setFont(big)
            app.setPalette(high_contrast_palette(self._old_palette))
        base_font = self._old_font or self._window.font()
        base_px = QFontMetrics(base_font).height() / 1.25  # line height → roughly the em size
        style = lecture_style(base_px, self.font_scale)
        for chart in self._charts():
            item = chart_item(chart)
            self._restorers.append(apply_plot_style(item, style))
            self._restorers += [apply_plot_style(v, style) for v in companion_views(item)]
        keys: list[tuple[Qt.Key, Action]] = [
            (Qt.Key.Key_PageDown, self._actions.step),
            (Qt.Key.Key_N, self._actions.step),
            (Qt.Key.Key_P, self._actions.toggle_play),
            (Qt.Key.Key_B, self._actions.toggle_play),
            (Qt.Key.Key_Home, self._actions.reset),
        ]
        for key, action in keys:
            shortcut = QShortcut(QKeySequence(key), self._window)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(action)
            self._shortcuts.append(shortcut)
        log.info("Lecture mode on")

    def _remove(self) -> None:
        for shortcut in self._shortcuts:
            shortcut.setEnabled(False)
            shortcut.deleteLater()
        self._shortcuts = []
        for restorer in reversed(self._restorers):
            restorer.restore()
        self._restorers = []
        app = QApplication.instance()
        if isinstance(app, QApplication):
            if self._old_palette is not None:
                app.setPalette(self._old_palette)
            if self._old_font is not None:
                app.setFont(self._old_font)
        log.info("Lecture mode off")
