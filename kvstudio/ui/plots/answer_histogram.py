"""Distinct answers over repeated samples: bars of counts, most common first.

Owns the drawing of an `AnswerCounts`: one bar group per temperature, answers
ordered by their total count, the answer text in a hover tooltip (the panel
around it lists them too; shown as plain text, since an answer read from a run
file may hold HTML). Past `MAX_BARS` answers the rest are folded into one
grey "others" element labelled with how many answers it holds and how often
each came ("others: 29 answers, 1 each"), drawn as high as one of them, never
as their sum (a tall bar would read as one common answer); exports get every
answer with its count per temperature.

Answers are numbered over all temperatures together ("answer no.", 1 = the
most common in all samples); "rank" is kept for the temperature lab's
meaning, the place of an answer within its own temperature.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.korean import attach_particles
from kvstudio.charts.plots.empty import EmptyChart
from kvstudio.charts.plots.plain_text import plain_tooltip
from kvstudio.ui.plots.base import LivePlot
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore

PALETTE = ("#1f77b4", "#e6550d", "#31a354", "#756bb1", "#636363", "#d62728")
MAX_BARS = 40  # answers drawn one by one; the rest are folded into one "others" element
FOLD_COLOUR = "#9e9e9e"


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
        self._folded: list[tuple[str, list[int]]] = []
        self._fold_bar = pg.BarGraphItem(x=[], height=[], width=0.8, brush=QColor(FOLD_COLOUR),
                                         pen=pg.mkPen("#555555", width=1,
                                                      style=Qt.PenStyle.DashLine))
        self._fold_label = pg.TextItem("", color="#333333", anchor=(1.0, 1.0))
        self._fold_label.setZValue(10)
        self.plot_item.addItem(self._fold_bar)
        self.plot_item.addItem(self._fold_label, ignoreBounds=True)
        self._fold_bar.setVisible(False)
        self._fold_label.setVisible(False)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._empty = EmptyChart(self)  # before Sample ×N: no rank ticks, how to fill it
        self.retranslate()

    def retranslate(self) -> None:
        self.set_title(self.tr("Distinct answers over repeated samples"))
        self.plot_item.setLabel("left", self.tr("count"))
        self._temperature_label = self.tr("T = {0:g}")
        self.set_axis_title("bottom", self.tr(
            "answer no. (1 = the most common over all temperatures)"),
            self.tr("answer no. (1 = most common)"))
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
        self._answers, self._counts, self._folded = [], None, []
        self._fold_bar.setOpts(x=[], height=[])
        self._fold_bar.setVisible(False)
        self._fold_label.setVisible(False)
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
        rest: list[tuple[str, list[int]]] = []
        if len(every_answer) > MAX_BARS:  # fold the rarest into one element
            self._answers = every_answer[: MAX_BARS - 1]
            rest = every_answer[MAX_BARS - 1:]
        self._folded = rest
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
        slots = len(self._answers) + (1 if rest else 0)
        every = 1 if slots <= 20 else 5  # number labels stay readable
        ticks = [(float(i), str(i + 1)) for i in range(len(self._answers))
                 if i == 0 or (i + 1) % every == 0]
        top = max((max(c) for _, c in self._answers), default=1)
        if rest:
            ticks = [t for t in ticks if t[0] < len(self._answers) - 2]
            slot = float(len(self._answers))
            ticks.append((slot, self.tr("others")))
            each = max(max(c) for _, c in rest)  # as high as one answer, never their sum
            self._fold_bar.setOpts(x=[slot], height=[float(each)], width=0.8)
            self._fold_bar.setVisible(True)
            self._fold_label.setText(self.fold_text())
            self._fold_label.setPos(slot + 0.4, each + top * 0.04)
            self._fold_label.setVisible(True)
        self.plot_item.getAxis("bottom").setTicks([ticks])
        # Headroom above the tallest bar keeps the legend (top left) off the bars.
        view = self.plot_item.vb
        # Room right of the folded slot for half its "others" label: pyqtgraph drops a tick
        # label that sticks out of the axis.
        right = max(slots, 1) - 0.4 + (3.5 if rest else 0.0)
        view.setXRange(-1.0, right, padding=0)  # room for half of the "1" label, too
        view.setYRange(0, top * 1.6, padding=0)
        self.fit_tick_space()

    def fold_text(self) -> str:
        """The folded answers' label: "others: 29 answers, 1 each" ("" when none is folded)."""
        if not self._folded:
            return ""
        totals = [sum(c) for _, c in self._folded]
        low, high = min(totals), max(totals)
        each = (self.tr("{0} each").format(low) if low == high
                else self.tr("{0}–{1} each").format(low, high))
        return attach_particles(self.tr("others: {0} answers, {1}").format(len(totals), each))

    def folded_answers(self) -> list[str]:
        """The answers the "others" element holds (rarest, past `MAX_BARS` − 1)."""
        return [answer for answer, _ in self._folded]

    def headline(self) -> str:
        counts = self._counts
        if counts is None:
            return ""
        parts = [self.tr("T = {0:g}: {1} distinct of {2}").format(
            t, counts.distinct(i), counts.samples_per_temperature)
            for i, t in enumerate(counts.temperatures)]
        first = self.tr("Distinct answers") + " · " + " · ".join(parts)
        return first + "\n" + self.tr("Settings: {0}").format(self.settings_text())

    def settings_text(self) -> str:
        """The settings that made the samples, as the slide states them."""
        counts = self._counts
        if counts is None:
            return ""
        parts = []
        sampling = counts.sampling
        if sampling is not None:
            parts.append(self.tr("top-k off") if sampling.top_k <= 0
                         else self.tr("top-k {0}").format(sampling.top_k))
            parts.append(self.tr("top-p off") if sampling.top_p >= 1.0
                         else self.tr("top-p {0:g}").format(sampling.top_p))
            parts.append(self.tr("penalty {0:g}").format(sampling.repetition_penalty))
            parts.append(self.tr("seed {0}").format(sampling.seed))
        if counts.answer_tokens:
            parts.append(self.tr("≤ {0:,} tokens").format(counts.answer_tokens))
        parts.append(self.tr("chat template") if counts.use_chat_template
                     else self.tr("no chat template"))
        return " · ".join(parts)

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
                      self.tr("answer no. (1 = the most common over all temperatures)"),
                      tuple(series)),
            DataTable(self.tr("Distinct answers per temperature"), self.tr("temperature"),
                      summary),
        ]

    def bar_totals(self) -> list[int]:
        """Each drawn answer's count over all temperatures, then the folded ones' sum."""
        drawn = [sum(c) for _, c in self._answers]
        return drawn + ([sum(sum(c) for _, c in self._folded)] if self._folded else [])

    def answer_at(self, x: float) -> str | None:
        i = round(x)
        if 0 <= i < len(self._answers):
            return self._answers[i][0]
        if self._folded and i == len(self._answers):
            return self.fold_text()
        return None

    def _on_mouse_moved(self, pos: QPointF) -> None:
        if not self._answers:
            return
        point = self.plot_item.vb.mapSceneToView(pos)
        answer = self.answer_at(point.x())
        if answer is None:
            self.setToolTip("")
            return
        if answer == self.fold_text():
            names = ", ".join(f"«{a or '∅'}»" for a in self.folded_answers()[:12])
            self.setToolTip(plain_tooltip(f"{answer}\n{names}"))
            return
        counts = dict(self._answers)[answer]
        text = f"«{answer or '∅'}»\n" + " · ".join(str(n) for n in counts)
        self.setToolTip(plain_tooltip(text))
