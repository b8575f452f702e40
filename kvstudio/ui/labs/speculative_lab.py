"""Lab: speculative decoding — a draft proposes k tokens, the target checks them in one forward.

Owns `SpeculativePanel`: the boxes (question, k values, N, temperature, timing
repeats: ``kvstudio.labs.registry``'s SPECULATIVE, labelled there, built by
`LabPanel`) beside `SpeculativeView` (``kvstudio.charts.labs.speculative``), which
shows every round of one run, its cache rows, and α and tokens per target call
against k; "Show rounds of" picks the run whose rounds it shows. The run is
``kvstudio.labs.speculative.run`` (plain decoding and, for the draft model
ko-draft and prompt lookup at every k, speculative decoding of the same
question, interleaved repeats; when ko-draft does not fit the model, only prompt
lookup runs and the status says why).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox

from kvstudio.charts.labs.speculative import SpeculativeView
from kvstudio.ui.labs.shared.base import LabPanel


class SpeculativePanel(LabPanel):
    view_type = SpeculativeView  # its course model and its boxes: the registry's SPECULATIVE

    def add_widgets(self) -> None:
        self.shown_run = QComboBox()
        self.shown_run.currentIndexChanged.connect(self.speculative_view.show_run)
        self.add_field("shown", self.shown_run)
        self.chart_layout.insertWidget(0, self.speculative_view.rounds_view, 1)  # above charts
        self.result_ready.connect(self._list_runs)

    @property
    def speculative_view(self) -> SpeculativeView:
        assert isinstance(self.lab_view, SpeculativeView)
        return self.lab_view

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(self.tr(
            "A small draft proposes k tokens; the target checks all k in one forward over its "
            "cache, keeps the longest prefix it agrees with and adds one token of its own (the "
            "correction where a draft was rejected, the bonus when all passed). Both caches are "
            "then cropped back to the committed tokens: after a of k drafts are accepted the "
            "target drops k − a rows and the draft model k − 1 − a. Greedy output must equal "
            "plain greedy decoding token for token. Drafts: the 1-layer ko-draft model, or "
            "prompt lookup (the tokens that followed the last n-gram earlier in the text)."
        ))
        self.set_field_names({"shown": self.tr("Show rounds of")})
        self._list_runs()

    def clear_views(self) -> None:
        super().clear_views()
        self._list_runs()

    def _list_runs(self) -> None:
        """"Show rounds of" lists the result's runs, at the one the view shows."""
        with QSignalBlocker(self.shown_run):
            self.shown_run.clear()
            self.shown_run.addItems(self.speculative_view.run_names())
            self.shown_run.setCurrentIndex(self.speculative_view.shown_index)
