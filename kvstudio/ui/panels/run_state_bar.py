"""The run state on screen, and the step history: which state the run is in, and a scrubber.

Owns `RunStateBar`: a coloured label naming the state (ready, live, paused,
finished, replay) with how the run ended, a slider over the steps of the run
on screen, "Latest" (End) and, in a replay, "Back to live". ← looks one step
back (→ and Space go forward: they are the Step keys). It only turns clicks
and keys into signals; the controller decides what they mean.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSizePolicy, QSlider, QWidget

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.ui.run.state import RunPhase, RunState

PHASE_COLOURS = {  # (background, text): readable on a projector, distinct without colour names
    RunPhase.IDLE: ("#eeeeee", "#333333"),
    RunPhase.LIVE: ("#2e7d32", "#ffffff"),
    RunPhase.PAUSED: ("#f9a825", "#000000"),
    RunPhase.FINISHED: ("#455a64", "#ffffff"),
    RunPhase.REPLAYING: ("#6a1b9a", "#ffffff"),
}


class RunStateBar(RetranslateOnLanguageChange, QWidget):
    view_requested = Signal(object)  # a step index to look at, or None for the latest
    back_requested = Signal()  # one step back in history
    latest_requested = Signal()
    back_to_live_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._phase = plain_label()
        self._phase.setObjectName("runPhase")
        self._phase.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._slider = QSlider(Qt.Orientation.Horizontal)
        self._slider.setRange(0, 0)
        self._slider.setMinimumWidth(120)
        self._slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # arrows stay the run's keys
        self._step = plain_label()
        self._latest = QPushButton()
        self._latest.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.live_button = QPushButton()  # back to the live step (shown while replaying)
        self.live_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.live_button.setVisible(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self._phase)
        row.addWidget(self._slider, 1)
        row.addWidget(self._step)
        row.addWidget(self._latest)
        row.addWidget(self.live_button)
        self._shortcuts = []
        for key, signal in ((Qt.Key.Key_Left, self.back_requested),
                            (Qt.Key.Key_End, self.latest_requested)):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(signal)
            self._shortcuts.append(shortcut)
        self._slider.valueChanged.connect(self._on_slider_moved)
        self._latest.clicked.connect(self.latest_requested)
        self.live_button.clicked.connect(self.back_to_live_requested)
        self._state: RunState | None = None
        self.retranslate()

    # ---- what the window shows ---------------------------------------------------------------
    def show_state(self, state: RunState) -> None:
        self._state = state
        background, text = PHASE_COLOURS[state.phase]
        self._phase.setStyleSheet(f"QLabel#runPhase {{ background: {background}; color: {text};"
                                  " border-radius: 4px; padding: 2px 8px; font-weight: bold; }")
        self._phase.setText(state.describe())
        last = max(state.steps - 1, 0)
        shown = last if state.viewing is None else state.viewing
        with QSignalBlocker(self._slider):
            self._slider.setRange(0, last)
            self._slider.setValue(shown)
        self._slider.setEnabled(state.steps > 1)
        # Counted 1 … N like the status bar's "Step k/N": the current run's steps shown, of N.
        self._step.setText(self._step_template.format(
            f"{state.shown_step_count():,}", f"{state.budget:,}") if state.steps else "")
        self._latest.setEnabled(state.scrubbing)
        self.live_button.setVisible(state.replaying)

    def phase_text(self) -> str:
        return self._phase.text()

    def step_text(self) -> str:
        """The counter beside the slider, e.g. "step 38 / 64" (1 … N, as the status bar)."""
        return self._step.text()

    def slider(self) -> QSlider:
        return self._slider

    # ---- internals -----------------------------------------------------------------------------
    def _on_slider_moved(self, value: int) -> None:
        self.view_requested.emit(None if value >= self._slider.maximum() else value)

    def retranslate(self) -> None:
        self._step_template = self.tr("step {0} / {1}")
        self._slider.setToolTip(self.tr(
            "Step history: drag to see every plot and chip as they were at that step "
            "(← back, → forward, End = latest). Exports show the step selected here."))
        self._latest.setText(self.tr("Latest"))
        self._latest.setToolTip(self.tr("Show the latest step again (End)."))
        self.live_button.setText(self.tr("Back to live"))
        self.live_button.setToolTip(self.tr(
            "Close the replay and step the loaded model again."))
        self._phase.setToolTip(self.tr(
            "→ or Space: next step · ←: one step back · End: latest · Home (lecture mode): "
            "start again what is on screen"))
        if self._state is not None:
            self.show_state(self._state)
