"""Lab: top-k and top-p, step by step: the next-token distribution and where each filter cuts.

Owns `TopPTopKPanel`: the boxes (prompt, temperature, top-k, top-p, new
tokens, seed: ``kvstudio.labs.registry``'s CUTOFF, labelled there, built by
`LabPanel`) beside `TopPTopKView` (``kvstudio.charts.labs.cutoff``), which
draws what top-p really sees at each step; the run is
``kvstudio.labs.sampling.cutoff.run``, pulled one step at a time (Step) or to
the end. Selecting a row (click, or ↑/↓ in the table) shows that step's
distribution again: the lab's step history; exports show that step. The
fields start from the course preset (`kvstudio.labs.course.COURSE`: T 0.85,
top-k off, top-p 0.85, seed 42), and a settings line under the table says
which settings made the run (the fields' before one) and what differs from
the course's.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QDoubleSpinBox, QLineEdit, QSpinBox

from kvstudio.charts.labs.cutoff import TopPTopKView
from kvstudio.engine.records import SamplingSettings
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.typing_guard import UnselectedOnFocus
from kvstudio.ui.labs.shared.step_navigation import SteppedLabPanel


class TopPTopKPanel(SteppedLabPanel):
    view_type = TopPTopKView  # its course model and its boxes: the registry's CUTOFF
    prompt: QLineEdit  # the boxes LabPanel builds from the declaration
    temperature: QDoubleSpinBox
    top_k: QSpinBox
    top_p: QDoubleSpinBox
    new_tokens: QSpinBox
    seed: QSpinBox

    def add_widgets(self) -> None:
        super().add_widgets()
        self._started = False  # a run began: the settings line says what made it
        assert isinstance(self.lab_view, TopPTopKView)
        self.cutoff_view: TopPTopKView = self.lab_view
        self.table.currentCellChanged.connect(self._on_table_row_changed)
        self.settings_label = self.add_side_note()  # the settings that made the run, and changes
        for box in (self.temperature, self.top_k, self.top_p, self.seed):
            box.valueChanged.connect(self._show_settings)
        UnselectedOnFocus(self.prompt)  # a stray key must not replace it (Qt owns the guard)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "The bars are the 20 most likely next tokens after the temperature. Top-k keeps "
                "the k most likely (hollow grey bars are cut) and renormalises them to sum to 1; "
                "the green line adds them up, and top-p keeps the most likely tokens until that "
                "sum reaches p (orange bars are cut). The chosen token is outlined; one chosen "
                "from past the 20 is drawn after them, with its rank."
            )
        )
        self.top_k.setSpecialValueText(self.tr("off"))
        self._show_settings()

    def sampling(self) -> SamplingSettings:
        """The knobs in the fields (penalty: the course's)."""
        return SamplingSettings(
            temperature=self.temperature.value(),
            top_k=self.top_k.value(),
            top_p=self.top_p.value(),
            repetition_penalty=COURSE.repetition_penalty,
            seed=self.seed.value(),
        )

    def settings_text(self) -> str:
        """The settings line of the shown run (or of the fields before a run)."""
        if self._started:
            return self.cutoff_view.settings_text()
        return self.cutoff_view.sampling_settings_text(self.sampling(),
                                                       answer_tokens=self.new_tokens.value())

    def _show_settings(self) -> None:
        if hasattr(self, "settings_label"):
            self.settings_label.setText(self.settings_text())

    def clear_views(self) -> None:
        super().clear_views()
        self._started = True
        self._show_settings()

    def run_is_over(self) -> bool:
        """After the last step only the summary is left: collect it without another click."""
        steps = self.cutoff_view.steps
        return bool(steps) and steps[-1].record.all_finished

    def show_step(self, index: int | None) -> None:
        """Show step `index` again (None or the last one: follow the run), and what it chose."""
        if self.cutoff_view.steps:
            self.cutoff_view.show_step(index)
            self.set_status(self.cutoff_view.step_line)

    def draw_progress(self, items: Sequence[object]) -> None:
        super().draw_progress(items)  # the view draws each new step and shows the latest
        steps = self.cutoff_view.steps
        if items and steps:
            self.progress.setRange(0, self.cutoff_view.params["new_tokens"])
            self.progress.setValue(steps[-1].step + 1)
            self.set_status(self.cutoff_view.step_line)

    # ---- slots ----------------------------------------------------------------------------
    def _on_table_row_changed(self, row: int, _column: int, _old_row: int, _old: int) -> None:
        if 0 <= row < len(self.cutoff_view.steps):
            self.show_step(row)
