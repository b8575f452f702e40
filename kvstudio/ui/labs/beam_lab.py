"""Lab: beam search — the beams per step, the cache rows each reorder copies, and paged sharing.

Owns `BeamSearchPanel`: the boxes (question, K, length penalty, early stopping,
N, block size, the transformers check: ``kvstudio.labs.registry``'s BEAM, labelled
there, built by `LabPanel`, two rows of three; early stopping's choices said in
words here) beside `BeamSearchView`
(``kvstudio.charts.labs.beam``), which draws the beam tree and the bytes the
reorders copied; the step slider picks the step its beam table lists. The run is
``kvstudio.labs.beam.run``.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QSlider

from kvstudio.charts.labs.beam import BeamSearchView
from kvstudio.ui.app.typing_guard import UnselectedOnFocus
from kvstudio.ui.labs.shared.base import LabPanel


class BeamSearchPanel(LabPanel):
    view_type = BeamSearchView  # its course model and its boxes: the registry's BEAM
    box_rows = (("beams", "length_penalty", "early_stopping"),
                ("new_tokens", "block_size", "transformers"))
    prompt: QLineEdit  # some of the boxes LabPanel builds from the declaration
    early_stopping: QComboBox  # False, True, "never": each said in words in retranslate

    def add_widgets(self) -> None:
        UnselectedOnFocus(self.prompt)
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setRange(0, 0)
        self.step_slider.valueChanged.connect(self.beam_view.show_step)
        self.add_field("step", self.step_slider)
        self.side_layout.addWidget(self.beam_view.beam_table, 1)
        self.beam_view.beam_table.rows_changed.connect(self._fit_table_later.start)
        self.result_ready.connect(self._follow_steps)

    @property
    def beam_view(self) -> BeamSearchView:
        assert isinstance(self.lab_view, BeamSearchView)
        return self.lab_view

    def retranslate(self) -> None:
        super().retranslate()  # the view redraws a result at its last step
        self.explanation.setText(
            self.tr(
                "Beam search keeps K answers (beams) at once, one KV cache row each. After "
                "every step the K best continuations are kept and the cache rows are reordered "
                "(index_select on the batch dimension): a beam that continues another row's "
                "answer gets a copy of that whole row. A paged cache copies only block tables "
                "and shares the blocks, copying a block only when a row appends to a shared, "
                "half-full one (copy on write). Scores as transformers' generate(num_beams=…)."
            )
        )
        self.set_field_names({"step": self.tr("Beams at step")})
        # transformers' values, each said in the window's language (the combo's order)
        for index, text in enumerate((self.tr("no (False)"), self.tr("yes (True)"),
                                      self.tr("never ('never')"))):
            self.early_stopping.setItemText(index, text)
        self._follow_steps()

    def clear_views(self) -> None:
        super().clear_views()
        self._follow_steps()

    def _follow_steps(self) -> None:
        """The slider spans the result's steps and stands at the step the beam table lists."""
        with QSignalBlocker(self.step_slider):
            self.step_slider.setRange(0, max(self.beam_view.step_count() - 1, 0))
            self.step_slider.setValue(self.beam_view.step)

