"""The temperature lab's view: how often each answer came up at each temperature.

Owns `TemperatureView`: a grouped histogram (answer rank × temperature), the
number of distinct answers per temperature, the answers themselves (a text box
under the chart), and a table that says whether both modes gave the same
answers for the same seed. Its settings line (in the headline the slide
prints) says which settings made the result and what differs from the
course's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPlainTextEdit

from kvstudio.charts.chart_data import DataTable, Series, table_at
from kvstudio.charts.labs.base import LabView, name_plot, plots_in_a_row, series_colour
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.results_table import CHECK, CROSS
from kvstudio.labs.course import EMPTY_ANSWER

if TYPE_CHECKING:
    from kvstudio.labs.sampling import temperature as lab
else:
    lab = LazyModule("kvstudio.labs.sampling.temperature")  # torch loads when a lab first runs

MAX_RANKS = 15  # answers drawn per temperature; the axis says how many more there are


class TemperatureView(LabView):
    key = "sample"

    def result_type(self) -> type:
        return lab.TemperatureLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget, (self.hist_plot, self.distinct_plot) = plots_in_a_row(2)
        self.layout_widget.ci.layout.setColumnStretchFactor(0, 3)
        self.layout_widget.ci.layout.setColumnStretchFactor(1, 1)
        for plot in (self.hist_plot, self.distinct_plot):
            plot.showGrid(x=False, y=True, alpha=0.2)
        self._legend = add_legend_row(self.hist_plot)
        self._bars: list[pg.BarGraphItem] = []
        self._distinct_bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#0072B2")
        self.distinct_plot.addItem(self._distinct_bars)
        self.add_chart("temperature", self.layout_widget)
        self.answers = QPlainTextEdit()  # every answer and its count, under the chart
        self.answers.setReadOnly(True)
        self.answers.setMaximumHeight(160)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.hist_plot, self.tr("How often each answer came up"),
                  self.tr("answer rank (1 = most frequent)"), self.tr("count"))
        name_plot(self.distinct_plot, self.tr("Distinct answers"), self.tr("temperature"))
        self.show_result(self.result)

    def clear(self) -> None:
        self._legend.clear()  # first: removing a plot item removes its entry (and re-flows)
        for bars in self._bars:
            self.hist_plot.removeItem(bars)
        self._bars = []
        self._distinct_bars.setOpts(x=[], height=[])
        self.answers.clear()
        self.table.set_rows([], [])

    def draw_result(self, result: lab.TemperatureLabResult) -> None:
        self.clear()
        temps = result.cached.temperatures
        k = len(temps)
        width = 0.8 / max(k, 1)
        with self._legend.adding():  # one legend layout for all the temperatures
            for i, t in enumerate(temps):
                counts = [c for _, c in t.counts[:MAX_RANKS]]
                x = np.arange(1, len(counts) + 1, dtype=float) - 0.4 + width * (i + 0.5)
                colour = series_colour(i)
                bars = pg.BarGraphItem(x=x, height=np.asarray(counts, dtype=float),
                                       width=width * 0.9, brush=colour, pen=pg.mkPen(colour))
                self.hist_plot.addItem(bars)
                self._bars.append(bars)
                self._legend.addItem(
                    bars, self.tr("T = {0:g} ({1} distinct)").format(t.temperature, t.distinct))
        hidden = sum(max(0, len(t.counts) - MAX_RANKS) for t in temps)
        label = self.tr("answer rank (1 = most frequent)")
        if hidden:
            label = self.tr("answer rank (1 = most frequent; {0} rarer answers beyond rank {1} "
                            "are listed, not drawn)").format(hidden, MAX_RANKS)
        self.hist_plot.setLabel("bottom", label)
        self._distinct_bars.setOpts(x=np.arange(k, dtype=float),
                                    height=np.asarray([t.distinct for t in temps], dtype=float),
                                    brushes=[series_colour(i) for i in range(k)])
        self.distinct_plot.getAxis("bottom").setTicks(
            [[(float(i), f"{t.temperature:g}") for i, t in enumerate(temps)]])
        counted = result.same_answers_count
        check: Any = "—" if counted is None else (
            CHECK if counted[0] == counted[1] else f"{CROSS} {counted[0]} / {counted[1]}")
        rows: list[tuple[Any, ...]] = [
            (f"{t.temperature:g}", t.distinct,
             _short(self._answer(t.counts[0][0])) if t.counts else "",
             t.counts[0][1] if t.counts else 0, t.seconds * 1000)
            for t in temps
        ]
        rows.append((self.tr("same seed, both modes"), check, "", "", ""))
        self.table.set_rows([self.tr("T"), self.tr("distinct"), self.tr("most common answer"),
                             self.tr("count"), self.tr("ms")], rows)
        lines = []
        for t in temps:
            lines.append(self.tr("T = {0:g}:").format(t.temperature))
            lines += [f"  {count:>3} × {_short(self._answer(answer), 80)}"
                      for answer, count in t.counts]
        self.answers.setPlainText("\n".join(lines))

    def _answer(self, text: str) -> str:
        """An answer as shown: the empty answer's note in the current language."""
        return self.tr("(empty: eos at step 0)") if text == EMPTY_ANSWER else text

    def settings_text(self) -> str:
        """The settings that made the result, and what differs from the course ("": none yet)."""
        result = self.finished()
        if result is None:
            return ""
        made = result.cached
        return self.sampling_settings_text(
            made.settings, temperatures=[t.temperature for t in made.temperatures],
            samples=made.samples, answer_tokens=made.new_tokens)

    def headline_of(self, result: lab.TemperatureLabResult) -> str:
        temps = result.cached.temperatures
        parts = [self.tr("T = {0:g}: {1}").format(t.temperature, t.distinct) for t in temps]
        first = self.tr("Distinct answers out of {0} per temperature: ").format(
            result.cached.samples) + " · ".join(parts)
        counted = result.same_answers_count
        check = "" if counted is None else (
            self.tr("recompute mode gave the same answers for the same seed")
            if counted[0] == counted[1]
            else self.tr("recompute mode gave the same answer for {0} of {1} samples (float "
                         "rounding tipped the others)").format(*counted))
        most = [self.tr("T = {0:g}: top answer ×{1}").format(t.temperature, t.counts[0][1])
                for t in temps if t.counts]
        settings = self.settings_text()
        return "\n".join([first, " · ".join(most), *([check] if check else []), settings])

    def tables_of(self, result: lab.TemperatureLabResult) -> list[DataTable]:
        temps = result.cached.temperatures
        series: list[Series] = []
        for t in temps:
            r = tuple(range(1, len(t.counts) + 1))
            series.append(Series(self.tr("T = {0:g}: count (samples)").format(t.temperature), r,
                                 tuple(c for _, c in t.counts)))
            series.append(Series(self.tr("T = {0:g}: answer").format(t.temperature), r,
                                 tuple(a for a, _ in t.counts)))
        return [
            DataTable(self.tr("How often each answer came up"),
                      self.tr("answer rank (1 = most frequent)"), tuple(series)),
            table_at(self.tr("Distinct answers"), self.tr("temperature"),
                     [t.temperature for t in temps], [
                (self.tr("distinct answers"), [t.distinct for t in temps]),
                (self.tr("samples"), [result.cached.samples for _ in temps]),
            ]),
        ]

    def numbers_of(self, result: lab.TemperatureLabResult) -> dict[str, Any]:
        settings = result.cached.settings
        return {
            "settings_line": result.settings_line,
            "changed_from_course": list(result.changes),
            "top_k": settings.top_k,
            "top_p": settings.top_p,
            "repetition_penalty": settings.repetition_penalty,
            "samples": result.cached.samples,
            "new_tokens": result.cached.new_tokens,
            "seed": result.cached.settings.seed,
            "same_in_both_modes": result.same_in_both_modes,
            "temperatures": [
                {
                    "temperature": t.temperature,
                    "distinct": t.distinct,
                    "counts": [list(c) for c in t.counts],
                    "seconds": t.seconds,
                }
                for t in result.cached.temperatures
            ],
        }


def _short(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
