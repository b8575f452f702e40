"""What a lab that runs one step at a time shares: Start, Step and Run to end.

Owns `SteppedLabPanel`, a `LabPanel` whose run pauses after each step. Start
(the panel's run button) pulls the first step; it adds the Step and Run to end
buttons next to it, pulls one more step or the rest of the run on the lab
thread (`step`, `run_to_end`), and enables them only while a paused run waits
for them. When a subclass says the run is over (`run_is_over`, checked each
time the run pauses) the remaining summary is collected without another click.
What each step draws, and any looking back at earlier steps, stays with the lab.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from kvstudio.ui.labs.shared.base import LabPanel


class SteppedLabPanel(LabPanel):
    """A lab stepped by hand: Start shows the first step, Step and Run to end continue."""

    start_count = 1

    def add_widgets(self) -> None:
        self.step_button = QPushButton()
        self.step_button.clicked.connect(self.step)
        self.to_end_button = QPushButton()
        self.to_end_button.clicked.connect(self.run_to_end)
        self.extra_buttons.insertWidget(1, self.step_button)
        self.extra_buttons.insertWidget(2, self.to_end_button)
        # After LabPanel's own paused slot, which draws the steps that arrived.
        self.runner.paused.connect(self._on_step_paused)
        self.runner.running_changed.connect(self._enable_step_buttons)
        self._enable_step_buttons(False)

    def retranslate(self) -> None:
        super().retranslate()
        self.run_button.setText(self.tr("Start"))
        self.step_button.setText(self.tr("Step"))
        self.to_end_button.setText(self.tr("Run to end"))

    def step(self) -> bool:
        """Pull one more step; False if no paused run waits for it."""
        return self.runner.advance(1)

    def run_to_end(self) -> bool:
        """Pull the rest of the run; False if no paused run waits for it."""
        return self.runner.advance(-1)

    def run_is_over(self) -> bool:
        """Whether the last step is drawn and only the run's summary is left to collect."""
        return False

    # ---- slots ----------------------------------------------------------------------------
    def _on_step_paused(self) -> None:
        if self.run_is_over():
            self.runner.advance(-1)
        self._enable_step_buttons(self.runner.busy)

    def _enable_step_buttons(self, running: bool) -> None:
        can_step = self.runner.has_job and not running
        self.step_button.setEnabled(can_step)
        self.to_end_button.setEnabled(can_step)
