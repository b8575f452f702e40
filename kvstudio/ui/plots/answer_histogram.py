"""Distinct answers over repeated samples: bars of counts, most common first.

Owns the drawing of an `AnswerCounts`: one bar group per temperature, answers
ordered by their total count, the answer text in a hover tooltip (the panel
around it lists them too; shown as plain text, since an answer read from a run
file may hold HTML). Past `MAX_BARS` answers the rest share one last "other"
bar whose tick says how many it holds ("+32"); exports get every answer with
its count per temperature.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from kvstudio.ui.app.plain_text import plain_tooltip
from kvstudio.ui.plots.base import LivePlot
from kvstudio.ui.plots.empty import EmptyChart
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides.chart_data import DataTable, Series

PALETTE = ("#1f77b4", "#e6550d", "#31a354", "#756bb1", "#636363", "#d62728")
MAX_BARS = 40  # answers drawn one by one; the rest share an "other" bar


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
        self._empty = EmptyChart(self)  # before Sample ×N: no rank ticks, how to fill it
        self.retranslate()

    def retranslate(self) -> None:
        self.set_title(self.tr("Distinct answers over repeated samples"))
        self.plot_item.setLabel("left", self.tr("count"))
        self._temperature_label = self.tr("T = {0:g}")
        self.plot_item.setLabel("bottom", self.tr("answer rank (1 = most common)"))
        if self._counts is not None:
            self.show_counts(self._counts)
        else:
            self._empty.set_empty(True, self.tr("Press Sample ×N to fill this chart."))

    def refresh(self, store: RunStore) -> None:
        """Repeated sampling does not come from the live run; nothing to do per step."""

    def clear_counts(self) -> None:
        self.legend.clear()  # first: removing a plot item removes its entry (and re-flows)
        for bars in self._groups:
            self.plot_item.removeItem(bars)
        self._groups.clear()
        self._answers, self._counts = [], None
        self._empty.set_empty(True, self.tr("Press Sample ×N to fill this chart."))

    @property
    def counts(self) -> AnswerCounts | None:
        """What is drawn (None before Sample ×N)."""
        return self._counts

    def show_counts(self, counts: AnswerCounts) -> None:
        self.clear_counts()
        self._empty.set_empty(False)
        self._counts = counts
        every_answer = ordered_answers(counts)
        self._answers = every_answer[:MAX_BARS]
        rest = every_answer[MAX_BARS:]
        if rest:  # one bar for the rest, so every sample is drawn somewhere
            self._answers = every_answer[: MAX_BARS - 1]
            rest = every_answer[MAX_BARS - 1:]
            totals = [sum(c[i] for _, c in rest) for i in range(len(counts.temperatures))]
            self._answers.append((self.tr("(other answers)"), totals))
        k = max(len(counts.temperatures), 1)
        width = 0.8 / k
        x = np.arange(len(self._answers), dtype=float)
        with self.legend.adding():  # one legend layout for all the temperatures
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
        ticks = [(float(i), str(i + 1)) for i in range(len(self._answers))
                 if i == 0 or (i + 1) % every == 0]
        if rest:
            ticks = [t for t in ticks if t[0] < len(self._answers) - 2]
            # The last bar holds every answer past the others; its tick says how many, short
            # enough to be drawn at the axis' end on a laptop screen ("other 32" was dropped).
            ticks.append((float(len(self._answers) - 1), f"+{len(rest)}"))
        self.plot_item.getAxis("bottom").setTicks([ticks])
        # Headroom above the tallest bar keeps the legend (top left) off the bars.
        top = max((max(c) for _, c in self._answers), default=1)
        view = self.plot_item.vb
        # Room right of the folded bar for half its "+N" label: pyqtgraph drops a tick label
        # that sticks out of the axis (2 bar widths ≈ 12 px on the narrowest plot).
        right = max(len(self._answers), 1) - 0.4 + (2.0 if rest else 0.0)
        view.setXRange(-1.0, right, padding=0)  # room for half of the "1" label, too
        view.setYRange(0, top * 1.6, padding=0)
        self.fit_tick_space()

    def headline(self) -> str:
        counts = self._counts
        if counts is None:
            return ""
        parts = [self.tr("T = {0:g}: {1} distinct of {2}").format(
            t, counts.distinct(i), counts.samples_per_temperature)
            for i, t in enumerate(counts.temperatures)]
        head = self.tr("Distinct answers") + " · " + " · ".join(parts)
        settings = counts.sampling
        if settings is None:
            return head
        off = self.tr("off")
        knobs = [
            self.tr("top-k {0}").format(off if settings.top_k == 0 else f"{settings.top_k:,}"),
            self.tr("top-p {0}").format(off if settings.top_p >= 1 else f"{settings.top_p:g}"),
            self.tr("penalty {0:g}").format(settings.repetition_penalty),
            self.tr("seed {0}").format(settings.seed),
        ]
        if counts.answer_tokens:
            knobs.append(self.tr("≤ {0:,} tokens").format(counts.answer_tokens))
        return head + "\n" + self.tr("Settings: {0}").format(" · ".join(knobs))

    def data_tables(self) -> list[DataTable]:
        counts = self._counts
        if counts is None:
            return []
        answers = ordered_answers(counts)
        ranks = tuple(range(1, len(answers) + 1))
        series = [Series(self.tr("answer (text)"), ranks, tuple(a for a, _ in answers))]
        for i, t in enumerate(counts.temperatures):
            series.append(Series(self.tr("T = {0:g}: count (samples)").format(t), ranks,
                                 tuple(c[i] for _, c in answers)))
        temps = tuple(counts.temperatures)
        summary = (
            Series(self.tr("distinct answers"), temps,
                   tuple(counts.distinct(i) for i in range(len(temps)))),
            Series(self.tr("samples"), temps,
                   tuple(counts.samples_per_temperature for _ in temps)),
        )
        return [
            DataTable(self.tr("Distinct answers over repeated samples"),
                      self.tr("answer rank (1 = most common)"), tuple(series)),
            DataTable(self.tr("Distinct answers per temperature"), self.tr("temperature"),
                      summary),
        ]

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
        text = f"«{answer or '∅'}»\n" + " · ".join(str(n) for n in counts)
        self.setToolTip(plain_tooltip(text))
