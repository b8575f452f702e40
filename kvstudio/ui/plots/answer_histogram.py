"""Distinct answers over repeated samples: bars of counts, most common first.

Owns the drawing of an `AnswerCounts`: one bar group per temperature, answers
ordered by their total count, the answer text in a hover tooltip (the panel
around it lists them too).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from kvstudio.ui.plots.base import LivePlot
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore

PALETTE = ("#1f77b4", "#e6550d", "#31a354", "#756bb1", "#636363", "#d62728")
MAX_BARS = 40  # the rest are summed into the side list only


def ordered_answers(counts: AnswerCounts) -> list[tuple[str, list[int]]]:
    """Answers by total count (most common first), with their count per temperature."""
    table: dict[str, list[int]] = {}
    for t_index, row in enumerate(counts.counts):
        for answer, n in row:
            table.setdefault(answer, [0] * len(counts.temperatures))[t_index] += n
    return sorted(table.items(), key=lambda kv: (-sum(kv[1]), kv[0]))


class AnswerHistogramPlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._groups: list[pg.BarGraphItem] = []
        self._answers: list[tuple[str, list[int]]] = []
        self._counts: AnswerCounts | None = None
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.retranslate()

    def retranslate(self) -> None:
        self.set_title(self.tr("Distinct answers over repeated samples"))
        self.plot_item.setLabel("bottom", self.tr("answer (most common first; hover to read)"))
        self.plot_item.setLabel("left", self.tr("count"))
        self._temperature_label = self.tr("T = {0:g}")
        if self._counts is not None:
            self.show_counts(self._counts)

    def refresh(self, store: RunStore) -> None:
        """Repeated sampling does not come from the live run; nothing to do per step."""

    def clear_counts(self) -> None:
        for bars in self._groups:
            self.plot_item.removeItem(bars)
        self._groups.clear()
        self.legend.clear()
        self._answers, self._counts = [], None

    def show_counts(self, counts: AnswerCounts) -> None:
        self.clear_counts()
        self._counts = counts
        self._answers = ordered_answers(counts)[:MAX_BARS]
        k = max(len(counts.temperatures), 1)
        width = 0.8 / k
        x = np.arange(len(self._answers), dtype=float)
        for t_index, temperature in enumerate(counts.temperatures):
            colour = QColor(PALETTE[t_index % len(PALETTE)])
            heights = np.asarray([c[t_index] for _, c in self._answers], dtype=float)
            offset = -0.4 + width * (t_index + 0.5)
            bars = pg.BarGraphItem(x=x + offset, height=heights, width=width * 0.95,
                                   brush=colour, pen=pg.mkPen(colour.darker(130)))
            self.plot_item.addItem(bars)
            self.legend.addItem(bars, self._temperature_label.format(temperature))
            self._groups.append(bars)
        every = 1 if len(self._answers) <= 20 else 5  # rank labels stay readable
        self.plot_item.getAxis("bottom").setTicks(
            [[(float(i), str(i + 1)) for i in range(len(self._answers)) if i == 0
              or (i + 1) % every == 0]])
        # Headroom above the tallest bar keeps the legend (top left) off the bars.
        top = max((max(c) for _, c in self._answers), default=1)
        view = self.plot_item.vb
        view.setXRange(-0.6, max(len(self._answers), 1) - 0.4, padding=0)
        view.setYRange(0, top * 1.6, padding=0)
        self.fit_tick_space()

    @property
    def counts(self) -> AnswerCounts | None:
        """The answers drawn (None before the first Sample ×N)."""
        return self._counts

    def bar_totals(self) -> list[int]:
        return [sum(c) for _, c in self._answers]

    def answer_at(self, x: float) -> str | None:
        i = round(x)
        if 0 <= i < len(self._answers):
            return self._answers[i][0]
        return None

    def _on_mouse_moved(self, pos: QPointF) -> None:
        if not self._answers:
            return
        point = self.plot_item.vb.mapSceneToView(pos)
        answer = self.answer_at(point.x())
        if answer is None:
            self.setToolTip("")
            return
        counts = dict(self._answers)[answer]
        self.setToolTip(f"«{answer or '∅'}»\n" + " · ".join(str(n) for n in counts))
