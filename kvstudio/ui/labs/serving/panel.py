"""Lab: many users, one cache — requests served by a scheduler, and why batching pays.

Owns `ServingPanel`: the requests file (the shipped example or one the user picks)
and the boxes of ``kvstudio.labs.registry``'s SERVING (labelled there, built by
`LabPanel`: a shared system prompt; the scheduler's row: policy, chunk, block size,
prefix cache, max batch; the answers' budget and rounds; the batch sweep's sizes;
the choices said in words here) beside `ServingView`
(``kvstudio.charts.labs.serving``), which draws the timeline, the tokens fed, the
blocks and the batch sweep, and fills the requests' and the sweep's tables. The run
is ``kvstudio.labs.serving.lab.run``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QComboBox, QFileDialog, QLineEdit, QPushButton, QSpinBox

from kvstudio.charts.labs.serving import ServingView
from kvstudio.ui.labs.shared.base import LabPanel, box_row


class ServingPanel(LabPanel):
    view_type = ServingView  # its course model and its boxes: the registry's SERVING
    # The scheduler on one row, labelled by its policy; the answers' budget, rounds and
    # sampling on a row of their own ("run": its title is said here); the sweep on a third.
    box_rows = (("policy", "chunk", "block_size", "prefix", "max_batch"),
                ("run", "answer_tokens", "rounds", "temperature", "seed"),
                ("batch_sizes", "repeats", "context"))
    system: QLineEdit  # some of the boxes LabPanel builds from the declaration
    policy: QComboBox  # "continuous", "static": said in words in retranslate
    chunk: QSpinBox  # 0 = no chunking
    block_budget: QSpinBox  # 0 = no limit
    prefix: QComboBox  # "none", "blocks", "radix": said in words in retranslate

    def add_widgets(self) -> None:
        self.requests_box = QComboBox()
        self.requests_box.addItem("", None)
        self.choose_button = QPushButton()
        self.choose_button.clicked.connect(self._on_choose_clicked)
        self.add_field("requests", box_row(self.requests_box, self.choose_button), row=0)
        self.requests_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.requests_box.currentIndexChanged.connect(self._show_blank_system)
        self.policy.currentIndexChanged.connect(self._on_policy_changed)
        assert isinstance(self.lab_view, ServingView)
        self.sweep_table = self.lab_view.sweep_table  # below the requests' table
        self.sweep_table.rows_changed.connect(self._fit_table_later.start)
        self.side_layout.addWidget(self.sweep_table, 1)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(self.tr(
            "Several requests share one model and one pool of cache blocks. The scheduler "
            "decides each step which requests run: static batching pads a batch to its "
            "longest prompt and feeds finished rows until the last one ends; continuous "
            "batching lets requests join and leave every step (chunked prefill shares a "
            "token budget per step); a prefix cache serves a shared system prompt once. "
            "Every answer is checked against the same request run alone. Then one decode "
            "step is timed at each batch size: the weights are read once whatever the "
            "batch, so more rows cost little until the step is bound by compute."
        ))
        self.requests_box.setItemText(0, self.tr("the shipped example"))
        self.choose_button.setText(self.tr("Choose file…"))
        self._show_blank_system()
        self.policy.setItemText(0, self.tr("continuous batching"))
        self.policy.setItemText(1, self.tr("static batching"))
        self.chunk.setSpecialValueText(self.tr("off"))
        self.block_budget.setSpecialValueText(self.tr("no limit"))
        for index, text in enumerate((self.tr("off"), self.tr("blocks (vLLM)"),
                                      self.tr("radix tree (SGLang)"))):  # none, blocks, radix
            self.prefix.setItemText(index, text)
        self.set_field_names({"requests": self.tr("Requests"),
                              "run": self.tr("Answers and timing")})

    # ---- the requests file ----------------------------------------------------------------
    def _on_choose_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Open a requests file"), "",
            self.tr("Text files (*.txt);;All files (*)"))
        if path:
            self.choose_requests(Path(path))

    def choose_requests(self, path: Path | None) -> None:
        """Use the requests in `path` (None: the shipped example)."""
        if path is None:
            self.requests_box.setCurrentIndex(0)
            return
        index = self.requests_box.findData(str(path))
        if index < 0:
            self.requests_box.addItem(path.name, str(path))
            index = self.requests_box.count() - 1
        self.requests_box.setCurrentIndex(index)

    def _show_blank_system(self) -> None:
        """The system box, left blank, says what the run will use (`lab.shared_system`)."""
        example = self.requests_box.currentData() is None
        self.system.setPlaceholderText(self.tr("the example's system prompt") if example
                                       else self.tr("no system prompt"))

    def _on_policy_changed(self) -> None:
        static = self.policy.currentData() == "static"
        self.chunk.setEnabled(not static)  # chunked prefill is a continuous policy

    # ---- run ----------------------------------------------------------------------------
    def read_params(self) -> dict[str, Any]:
        """The boxes' parameters and the requests file chosen (None: the shipped example)."""
        try:
            params = super().read_params()
        except ValueError as exc:  # the box's words, not the keyword's
            raise ValueError(str(exc).replace("batch_sizes", "batch sizes", 1)) from None
        return {**params, "requests": self.requests_box.currentData()}

    def clear_views(self) -> None:
        super().clear_views()
        self.table.setVisible(True)
        self.sweep_table.setVisible(True)

    def take_result(self, result: object) -> None:
        super().take_result(result)
        assert isinstance(self.lab_view, ServingView)
        # A part that did not run (no batch sizes, a model the engine cannot serve) has no table.
        self.table.setVisible(self.lab_view.shown_run() is not None)
        self.sweep_table.setVisible(self.lab_view.shown_sweep() is not None)

    def table_values(self) -> list[dict[str, Any]]:
        """Both tables for the slide pack's CSV: the requests, then the sweep."""
        return self.lab_view.table_values()
