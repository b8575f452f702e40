"""Repeated sampling: "Sample ×N" at the current temperature or a list, progress, cancel, results.

Owns `AnswerPanel`: the controls around an `AnswerHistogramPlot` and a side
list where every distinct answer can be read in full. Sampling itself runs
in the worker; this panel only asks and shows.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.plain_text import plain_label, plain_tooltip
from kvstudio.labs.course import COURSE, EMPTY_ANSWER
from kvstudio.ui.app.spin_boxes import int_box
from kvstudio.ui.panels.wrapped_list import wrapped_list
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot, ordered_answers
from kvstudio.ui.run.engine_adapter import AnswerCounts

DEFAULT_SAMPLES = COURSE.samples  # the course preset (kvstudio.labs.course)
DEFAULT_ANSWER_TOKENS = COURSE.answer_tokens  # the same budget as the labs and `kvstudio sample`


class AnswerPanel(RetranslateOnLanguageChange, QWidget):
    sample_requested = Signal(int, str, int)  # samples, temperatures text, answer tokens
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = AnswerHistogramPlot()
        self.samples_box = int_box(1, 512, DEFAULT_SAMPLES)  # how many answers per temperature
        self.temperatures_edit = QLineEdit(COURSE.temperatures_text())  # empty: the current T
        # Three temperatures read whole however narrow the panel gets (it scrolled at 1366×768).
        three = self.temperatures_edit.fontMetrics().horizontalAdvance("0.1, 0.8, 1.5")
        self.temperatures_edit.setMinimumWidth(three + 24)
        self.length_box = int_box(1, 512, DEFAULT_ANSWER_TOKENS)  # the token budget per answer
        self._length_label = plain_label()
        self.go_button = QPushButton()  # sample the answers
        self.cancel_button = QPushButton()  # stop sampling
        self.cancel_button.setEnabled(False)
        self._progress = QProgressBar()
        self._progress.setTextVisible(True)
        # Each answer wraps to the list's width at every width, a long unbroken run too
        # ("엇<0xEC><0x9D>": a character cut into bytes), so no line is cut at the edge.
        self._answers = wrapped_list()
        self._temps_label = plain_label()

        row = QHBoxLayout()
        row.addWidget(self.go_button)
        row.addWidget(self.samples_box)
        row.addWidget(self._temps_label)
        row.addWidget(self.temperatures_edit, 1)
        row.addWidget(self._length_label)
        row.addWidget(self.length_box)
        row.addWidget(self.cancel_button)
        split = QSplitter()
        split.addWidget(self.plot)
        split.addWidget(self._answers)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self._answers.setMinimumWidth(150)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self._progress)
        layout.addWidget(split, 1)

        self.go_button.clicked.connect(self._on_go_clicked)
        self.temperatures_edit.returnPressed.connect(self.go_button.click)  # Enter samples, if idle
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.retranslate()

    def samples(self) -> int:
        return self.samples_box.value()

    def set_busy(self, busy: bool) -> None:
        self.go_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        if busy:
            self._progress.setValue(0)

    def set_progress(self, done: int, total: int) -> None:
        self._progress.setMaximum(max(total, 1))
        self._progress.setValue(done)

    def show_counts(self, counts: AnswerCounts | None) -> None:
        self.set_busy(False)
        if counts is None:
            self._progress.setFormat(self.tr("Cancelled"))
            return
        self._progress.setFormat("%p%")
        self.plot.show_counts(counts)
        self._answers.clear()
        temps = ", ".join(f"{t:g}" for t in counts.temperatures)
        for rank, (answer, per_t) in enumerate(ordered_answers(counts), start=1):
            empty = not answer or answer == EMPTY_ANSWER
            shown = self.tr("(empty: eos at step 0)") if empty else answer
            self._answers.addItem(f"{rank}. ×{sum(per_t)} [{temps}: "
                                  f"{' / '.join(map(str, per_t))}]\n{shown}")
            item = self._answers.item(self._answers.count() - 1)
            item.setToolTip(plain_tooltip(item.text()))

    def answer_lines(self) -> list[str]:
        return [self._answers.item(i).text() for i in range(self._answers.count())]

    def _on_go_clicked(self) -> None:
        self.sample_requested.emit(self.samples_box.value(), self.temperatures_edit.text(),
                                   self.length_box.value())

    def retranslate(self) -> None:
        self.go_button.setText(self.tr("Sample ×N"))
        self.go_button.setToolTip(self.tr(
            "Generate N answers to the prompt in one batch and count the distinct ones."))
        self.samples_box.setToolTip(self.tr("N: samples per temperature."))
        self._temps_label.setText(self.tr("T ="))  # as the legend writes them: T = 0.8
        self.temperatures_edit.setPlaceholderText(self.tr("current, or e.g. 0.3, 0.85, 1.5"))
        self.temperatures_edit.setToolTip(self.tr(
            "Temperatures: leave empty to use the current temperature, or list several "
            "separated by commas."))
        self._temps_label.setToolTip(self.temperatures_edit.toolTip())
        self.cancel_button.setText(self.tr("Cancel"))
        self._length_label.setText(self.tr("Tokens"))
        self.length_box.setToolTip(self.tr(
            "Answer length: each sample generates at most this many tokens. Short answers "
            "repeat, long ones are almost always all different."))
