"""Lab: beam search — the beams per step, the cache rows each reorder copies, and paged sharing.

Owns `BeamSearchPanel`: the boxes (question, K, length penalty, early stopping,
N, block size, the transformers check) beside `BeamSearchView`
(``kvstudio.charts.labs.beam``), which draws the beam tree and the bytes the
reorders copied; the step slider picks the step its beam table lists. The run is
``kvstudio.labs.beam.run``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QSlider, QWidget

from kvstudio.charts.labs.beam import BeamSearchView
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.labs.registry import BEAM as LAB
from kvstudio.ui.app.spin_boxes import param_check, param_float_box, param_int_box, param_line
from kvstudio.ui.app.typing_guard import UnselectedOnFocus
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter

EARLY_STOPPING = LAB.param("early_stopping").choices  # the combo box's order: False, True, never


class BeamSearchPanel(LabPanel):
    view_type = BeamSearchView  # its course model: the registry's course_role

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt = param_line(LAB.param("prompt"))
        UnselectedOnFocus(self.prompt)
        self.beams = param_int_box(LAB.param("beams"))
        self.length_penalty = param_float_box(LAB.param("length_penalty"))
        self.early_stopping = QComboBox()
        for choice in EARLY_STOPPING:  # each said in the window's language in retranslate
            self.early_stopping.addItem(str(choice), choice)
        self.new_tokens = param_int_box(LAB.param("new_tokens"))
        self.block_size = param_int_box(LAB.param("block_size"))
        self.check_transformers = param_check(LAB.param("transformers"))
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setRange(0, 0)
        self.step_slider.valueChanged.connect(self.beam_view.show_step)
        self._penalty_label = plain_label()
        self._stopping_label = plain_label()
        self._block_label = plain_label()
        search_row = _row(self.beams, self._penalty_label, self.length_penalty,
                          self._stopping_label, self.early_stopping)
        length_row = _row(self.new_tokens, self._block_label, self.block_size,
                          self.check_transformers)
        for key, widget in (
            ("prompt", self.prompt),
            ("beams", search_row),
            ("new", length_row),
            ("step", self.step_slider),
        ):
            self.add_field(key, widget)
        self.side_layout.addWidget(self.beam_view.beam_table, 1)
        self.beam_view.beam_table.rows_changed.connect(self._fit_table_later.start)
        self.result_ready.connect(self._follow_steps)
        self.retranslate()

    @property
    def beam_view(self) -> BeamSearchView:
        assert isinstance(self.lab_view, BeamSearchView)
        return self.lab_view

    def title(self) -> str:
        return self.tr("Beam search")

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
        self.set_field_names(
            {
                "prompt": self.tr("Question"),
                "beams": self.tr("Beams K"),
                "new": self.tr("New tokens N"),
                "step": self.tr("Beams at step"),
            }
        )
        self._penalty_label.setText(self.tr("length penalty"))
        self._stopping_label.setText(self.tr("early stopping"))
        # transformers' values, each said in the window's language (the combo's order)
        for index, text in enumerate((self.tr("no (False)"), self.tr("yes (True)"),
                                      self.tr("never ('never')"))):
            self.early_stopping.setItemText(index, text)
        self._block_label.setText(self.tr("block size b"))
        self.check_transformers.setText(self.tr("compare with transformers"))
        self._follow_steps()

    def clear_views(self) -> None:
        super().clear_views()
        self._follow_steps()

    def _follow_steps(self) -> None:
        """The slider spans the result's steps and stands at the step the beam table lists."""
        self.step_slider.blockSignals(True)
        self.step_slider.setRange(0, max(self.beam_view.step_count() - 1, 0))
        self.step_slider.setValue(self.beam_view.step)
        self.step_slider.blockSignals(False)


def _row(*widgets: QWidget) -> QWidget:
    """Several fields on one form row (the form stays short enough for the charts)."""
    host = QWidget()
    layout = QHBoxLayout(host)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    layout.addStretch(1)
    return host
