"""Run controls: step, play/pause with a speed, reset, run to the end, and the mode toggle.

Owns `ControlsPanel`, which only turns clicks and keys into signals; it does
not know about the worker. The → and Space shortcuts are window-wide and
live here with the button they press.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.engine.records import Mode

# Play speeds, slowest first: milliseconds between steps (0 = as fast as the model goes).
SPEED_INTERVALS_MS = (1000, 500, 250, 120, 60, 30, 15, 0)
DEFAULT_SPEED_INDEX = 3


class ControlsPanel(RetranslateOnLanguageChange, QWidget):
    step_requested = Signal()
    play_toggled = Signal(bool)
    interval_changed = Signal(int)  # ms between steps while playing
    reset_requested = Signal()
    run_to_end_requested = Signal()
    mode_changed = Signal(str)  # "cached" | "recompute"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step_button = QPushButton()  # step: one token
        self.play_button = QPushButton()  # play / Pause
        self.play_button.setCheckable(True)
        self.reset_button = QPushButton()  # reset the run
        self.to_end_button = QPushButton()  # run to the end
        self._speed = QSlider(Qt.Orientation.Horizontal)
        self._speed.setRange(0, len(SPEED_INTERVALS_MS) - 1)
        self._speed.setValue(DEFAULT_SPEED_INDEX)
        self._speed_label = plain_label()
        self._speed_value = plain_label()

        self._cached = QPushButton()
        self._recompute = QPushButton()
        self._modes = QButtonGroup(self)
        for button in (self._cached, self._recompute):
            button.setCheckable(True)
            self._modes.addButton(button)
        self._cached.setChecked(True)
        self._mode_box = QGroupBox()
        mode_row = QHBoxLayout(self._mode_box)
        mode_row.addWidget(self._cached)
        mode_row.addWidget(self._recompute)

        self._run_box = QGroupBox()
        grid = QGridLayout(self._run_box)
        grid.addWidget(self.step_button, 0, 0)
        grid.addWidget(self.play_button, 0, 1)
        grid.addWidget(self.to_end_button, 1, 0)
        grid.addWidget(self.reset_button, 1, 1)
        speed_row = QHBoxLayout()
        speed_row.addWidget(self._speed_label)
        speed_row.addWidget(self._speed, 1)
        speed_row.addWidget(self._speed_value)
        grid.addLayout(speed_row, 2, 0, 1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._mode_box)
        layout.addWidget(self._run_box)

        self._shortcuts = [QShortcut(QKeySequence(key), self) for key in
                           (Qt.Key.Key_Right, Qt.Key.Key_Space)]
        for shortcut in self._shortcuts:
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(self.step_button.click)

        self.step_button.clicked.connect(self.step_requested)
        self.play_button.toggled.connect(self.play_toggled)
        self.reset_button.clicked.connect(self.reset_requested)
        self.to_end_button.clicked.connect(self.run_to_end_requested)
        self._speed.valueChanged.connect(self._on_speed_changed)
        self._cached.toggled.connect(self._on_cached_toggled)
        self._replaying = False
        self.retranslate()

    # ---- state the window sets -------------------------------------------------------------------
    def mode(self) -> Mode:
        return "cached" if self._cached.isChecked() else "recompute"

    def set_mode(self, mode: Mode) -> None:
        (self._cached if mode == "cached" else self._recompute).setChecked(True)

    def show_mode(self, mode: Mode) -> None:
        """Show the mode of the run on screen without asking for a new run (after Cancel)."""
        with QSignalBlocker(self._cached), QSignalBlocker(self._recompute):
            (self._cached if mode == "cached" else self._recompute).setChecked(True)

    def set_speed(self, index: int) -> None:
        """Choose a play speed by its index in SPEED_INTERVALS_MS (last = as fast as possible)."""
        self._speed.setValue(max(0, min(index, len(SPEED_INTERVALS_MS) - 1)))

    def interval_ms(self) -> int:
        return SPEED_INTERVALS_MS[self._speed.value()]

    def set_playing(self, playing: bool) -> None:
        """Reflect the worker's state without re-emitting play_toggled."""
        with QSignalBlocker(self.play_button):
            self.play_button.setChecked(playing)
        self._update_play_text()

    def is_playing(self) -> bool:
        return self.play_button.isChecked()

    def set_replaying(self, replaying: bool) -> None:
        """In a replay the buttons drive the saved run; the mode cannot change it."""
        self._replaying = replaying
        self._mode_box.setEnabled(not replaying)
        self._update_step_tip()

    # ---- internals ----------------------------------------------------------------------------
    def _on_speed_changed(self, _index: int) -> None:
        self._update_speed_text()
        self.interval_changed.emit(self.interval_ms())

    def _on_cached_toggled(self, _checked: bool) -> None:
        self.mode_changed.emit(self.mode())

    def _update_speed_text(self) -> None:
        ms = self.interval_ms()
        self._speed_value.setText(self.tr("max") if ms == 0 else
                                  self.tr("{0:g}/s").format(round(1000 / ms, 1)))

    def _update_step_tip(self) -> None:
        self.step_button.setToolTip(
            self.tr("Show the next step of the saved run (→ or Space).") if self._replaying
            else self.tr("Generate exactly one token (→ or Space; ← looks one step back)."))

    def _update_play_text(self) -> None:
        self.play_button.setText(self.tr("❚❚ Pause") if self.play_button.isChecked()
                                 else self.tr("▶ Play"))

    def retranslate(self) -> None:
        self._mode_box.setTitle(self.tr("Mode"))
        self._run_box.setTitle(self.tr("Run"))
        self._cached.setText(self.tr("Cached (KV cache)"))
        self._cached.setToolTip(self.tr(
            "Feed the prompt once, then only the newest token; keys and values of earlier "
            "tokens are kept in the KV cache."))
        self._recompute.setText(self.tr("Recompute (no cache)"))
        self._recompute.setToolTip(self.tr(
            "Feed the whole sequence again at every step: no cache, the work grows with length."))
        self.step_button.setText(self.tr("Step ▸"))
        self._update_step_tip()
        self.reset_button.setText(self.tr("Reset"))
        self.reset_button.setToolTip(
            self.tr("Forget the drawn runs and start again from the prompt."))
        self.to_end_button.setText(self.tr("Run to end"))
        self.to_end_button.setToolTip(
            self.tr("Generate until the end-of-text token or the budget."))
        self._speed_label.setText(self.tr("Speed"))
        self._speed.setToolTip(self.tr("Steps per second while playing."))
        self._update_play_text()
        self._update_speed_text()
