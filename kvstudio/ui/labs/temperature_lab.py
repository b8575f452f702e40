"""Lab: a list of temperatures × 30 samples with one seed, and the same seed in both modes.

Owns `TemperaturePanel`: it runs `temperature.temperature_lab` (the engine's
`repeated_sampling`, cached, then recompute as a check) and draws a grouped
histogram (answer rank × temperature), the number of distinct answers per
temperature, the answers themselves, and whether both modes gave the same
histogram for the same seed. Its fields start from the course preset
(`kvstudio.labs.course.COURSE`: the dock's top-k, top-p and penalty), and a
settings line under the chart (and in the headline the slide prints) says
which settings made the result and what differs from the course's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QSizePolicy,
    QWidget,
)

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.charts.plots.results_table import CHECK, CROSS
from kvstudio.engine.records import SamplingSettings
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import COURSE, EMPTY_ANSWER
from kvstudio.labs.registry import SAMPLE
from kvstudio.ui.app.spin_boxes import param_check, param_float_box, param_int_box, param_line
from kvstudio.ui.labs.shared.base import LabPanel, prompt_ids, series_colour
from kvstudio.ui.run.engine_adapter import parse_temperatures
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.labs.sampling import temperature as lab
else:
    lab = LazyModule("kvstudio.labs.sampling.temperature")  # torch loads when a lab first runs

MAX_RANKS = 15  # answers drawn per temperature; the axis says how many more there are


class TemperaturePanel(LabPanel):
    course_role = "sampling"  # the course's model for this lab (lab_models.py)
    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt = param_line(SAMPLE.param("prompt"))
        self.temperatures = param_line(SAMPLE.param("temperatures"))
        self.samples = param_int_box(SAMPLE.param("samples"))
        self.new_tokens = param_int_box(SAMPLE.param("new_tokens"))
        self.top_k = param_int_box(SAMPLE.param("top_k"))
        self.top_p = param_float_box(SAMPLE.param("top_p"))
        self.penalty = param_float_box(SAMPLE.param("penalty"))
        self.seed = param_int_box(SAMPLE.param("seed"))
        self.both_modes = param_check(SAMPLE.param("both_modes"))
        knobs = QWidget()  # one row: the chart keeps its height at 1366×768
        row = QHBoxLayout(knobs)
        row.setContentsMargins(0, 0, 0, 0)
        self._knob_labels = [plain_label() for _ in range(3)]
        for label, box in zip(self._knob_labels, (self.top_k, self.top_p, self.penalty),
                              strict=True):
            row.addWidget(label)
            row.addWidget(box)
        row.addStretch(1)
        for key, widget in (
            ("prompt", self.prompt),
            ("temperatures", self.temperatures),
            ("samples", self.samples),
            ("new", self.new_tokens),
            ("knobs", knobs),
            ("seed", self.seed),
            ("both", self.both_modes),
        ):
            self.add_field(key, widget)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.hist_plot = self.view.addPlot(row=0, col=0)
        self.distinct_plot = self.view.addPlot(row=0, col=1)
        self.view.ci.layout.setColumnStretchFactor(0, 3)
        self.view.ci.layout.setColumnStretchFactor(1, 1)
        for plot in (self.hist_plot, self.distinct_plot):
            plot.showGrid(x=False, y=True, alpha=0.2)
        self._legend = add_legend_row(self.hist_plot)
        self._bars: list[pg.BarGraphItem] = []
        self._distinct_bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#0072B2")
        self.distinct_plot.addItem(self._distinct_bars)
        self.add_chart("temperature", self.view)
        self.settings_label = plain_label()  # the settings that made the chart, and changes
        self.settings_label.setWordWrap(True)
        self.settings_label.setSizePolicy(QSizePolicy.Policy.Ignored,  # wrap to the column
                                          QSizePolicy.Policy.Preferred)
        self.side_layout.addWidget(self.settings_label)  # beside the chart, under the table
        for box in (self.top_k, self.top_p, self.penalty, self.seed, self.samples,
                    self.new_tokens):
            box.valueChanged.connect(self._show_settings)
        self.temperatures.textChanged.connect(self._show_settings)
        self.answers = QPlainTextEdit()
        self.answers.setReadOnly(True)
        self.answers.setMaximumHeight(160)
        self.chart_layout.addWidget(self.answers)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Temperature")

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Each temperature draws the same number of answers from one seed. Low "
                "temperatures repeat one answer; high ones spread out. The same seed gives the "
                "same answers in cached and recompute mode, except where float rounding (the two "
                "modes' logits differ by about 1e-5) tips a draw that sits right at a boundary."
            )
        )
        self.set_field_names(
            {
                "prompt": self.tr("Prompt"),
                "temperatures": self.tr("Temperatures"),
                "samples": self.tr("Samples per temperature"),
                "new": self.tr("New tokens per answer"),
                "knobs": self.tr("Top-k (0 = off)"),
                "seed": self.tr("Seed"),
                "both": self.tr("Check recompute gives the same"),
            }
        )
        self.hist_plot.setTitle(self.tr("How often each answer came up"), color="#222")
        self.hist_plot.setLabel("bottom", self.tr("answer rank (1 = most frequent)"))
        self.hist_plot.setLabel("left", self.tr("count"))
        self.distinct_plot.setTitle(self.tr("Distinct answers"), color="#222")
        self.distinct_plot.setLabel("bottom", self.tr("temperature"))
        self.top_k.setSpecialValueText(self.tr("off"))
        self._knob_labels[0].setText("")  # the row's own label names top-k
        self._knob_labels[1].setText(self.tr("Top-p"))
        self._knob_labels[2].setText(self.tr("Repetition penalty"))
        if self.result is not None and isinstance(self.result, lab.TemperatureLabResult):
            self.show_result(self.result)
        else:
            self._show_settings()

    def sampling(self) -> SamplingSettings:
        """The knobs the lab runs with (each temperature replaces the temperature)."""
        return SamplingSettings(COURSE.temperature, self.top_k.value(), self.top_p.value(),
                                self.penalty.value(), self.seed.value())

    def settings_text(self) -> str:
        """The settings line: from the result once there is one, else from the fields."""
        result = self.result
        if isinstance(result, lab.TemperatureLabResult):
            made = result.cached
            return self.sampling_settings_text(
                made.settings, temperatures=[t.temperature for t in made.temperatures],
                samples=made.samples, answer_tokens=made.new_tokens)
        try:
            temps = parse_temperatures(self.temperatures.text()) or COURSE.temperatures
        except ValueError:
            temps = COURSE.temperatures
        return self.sampling_settings_text(
            self.sampling(), temperatures=list(temps), samples=self.samples.value(),
            answer_tokens=self.new_tokens.value())

    def _show_settings(self) -> None:
        self.settings_label.setText(self.settings_text())

    def make_job(self, model: LoadedModel) -> JobFactory:
        temps = parse_temperatures(self.temperatures.text())
        if not temps:
            raise ValueError("Give at least one temperature, e.g. 0.3, 0.7, 1.0, 1.3.")
        ids = prompt_ids(model, self.prompt.text())
        backend, tokenizer = model.backend, model.tokenizer
        samples, new, seed = self.samples.value(), self.new_tokens.value(), self.seed.value()
        both = self.both_modes.isChecked()
        settings = self.sampling()
        return lambda: lab.temperature_lab(
            backend,
            tokenizer,
            ids,
            temps,
            samples=samples,
            new_tokens=new,
            seed=seed,
            check_both_modes=both,
            settings=settings,
        )

    def clear_views(self) -> None:
        self._legend.clear()  # first: removing a plot item removes its entry (and re-flows)
        for bars in self._bars:
            self.hist_plot.removeItem(bars)
        self._bars = []
        self._distinct_bars.setOpts(x=[], height=[])
        self.answers.clear()
        self.table.set_rows([], [])
        self._show_settings()

    def show_result(self, result: object) -> None:
        if not isinstance(result, lab.TemperatureLabResult):
            return
        self.clear_views()
        temps = result.cached.temperatures
        k = len(temps)
        width = 0.8 / max(k, 1)
        with self._legend.adding():  # one legend layout for all the temperatures
            for i, t in enumerate(temps):
                counts = [c for _, c in t.counts[:MAX_RANKS]]
                x = np.arange(1, len(counts) + 1, dtype=float) - 0.4 + width * (i + 0.5)
                colour = series_colour(i)
                bars = pg.BarGraphItem(
                    x=x,
                    height=np.asarray(counts, dtype=float),
                    width=width * 0.9,
                    brush=colour,
                    pen=pg.mkPen(colour),
                )
                self.hist_plot.addItem(bars)
                self._bars.append(bars)
                self._legend.addItem(
                    bars, self.tr("T = {0:g} ({1} distinct)").format(t.temperature, t.distinct)
                )
        hidden = sum(max(0, len(t.counts) - MAX_RANKS) for t in temps)
        label = self.tr("answer rank (1 = most frequent)")
        if hidden:
            label = self.tr("answer rank (1 = most frequent; {0} rarer answers beyond rank {1} "
                            "are listed, not drawn)").format(hidden, MAX_RANKS)
        self.hist_plot.setLabel("bottom", label)
        self._distinct_bars.setOpts(
            x=np.arange(k, dtype=float),
            height=np.asarray([t.distinct for t in temps], dtype=float),
            brushes=[series_colour(i) for i in range(k)],
        )
        self.distinct_plot.getAxis("bottom").setTicks(
            [[(float(i), f"{t.temperature:g}") for i, t in enumerate(temps)]]
        )
        counted = result.same_answers_count
        check: Any = "—" if counted is None else (
            CHECK if counted[0] == counted[1] else f"{CROSS} {counted[0]} / {counted[1]}")
        rows: list[tuple[Any, ...]] = [
            (
                f"{t.temperature:g}",
                t.distinct,
                _short(self._answer(t.counts[0][0])) if t.counts else "",
                t.counts[0][1] if t.counts else 0,
                t.seconds * 1000,
            )
            for t in temps
        ]
        rows.append((self.tr("same seed, both modes"), check, "", "", ""))
        self.table.set_rows(
            [
                self.tr("T"),
                self.tr("distinct"),
                self.tr("most common answer"),
                self.tr("count"),
                self.tr("ms"),
            ],
            rows,
        )
        lines = []
        for t in temps:
            lines.append(self.tr("T = {0:g}:").format(t.temperature))
            lines += [f"  {count:>3} × {_short(self._answer(answer), 80)}"
                      for answer, count in t.counts]
        self.answers.setPlainText("\n".join(lines))
        self._show_settings()

    def _answer(self, text: str) -> str:
        """An answer as shown: the empty answer's note in the window's language."""
        return self.tr("(empty: eos at step 0)") if text == EMPTY_ANSWER else text

    def headline(self) -> str:
        result = self.result
        if not isinstance(result, lab.TemperatureLabResult):
            return ""
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

    def data_tables(self) -> list[DataTable]:
        result = self.result
        if not isinstance(result, lab.TemperatureLabResult):
            return []
        temps = result.cached.temperatures
        series: list[Series] = []
        for t in temps:
            r = tuple(range(1, len(t.counts) + 1))
            series.append(Series(self.tr("T = {0:g}: count (samples)").format(t.temperature), r,
                                 tuple(c for _, c in t.counts)))
            series.append(Series(self.tr("T = {0:g}: answer").format(t.temperature), r,
                                 tuple(a for a, _ in t.counts)))
        values = tuple(t.temperature for t in temps)
        return [
            DataTable(self.tr("How often each answer came up"),
                      self.tr("answer rank (1 = most frequent)"), tuple(series)),
            DataTable(self.tr("Distinct answers"), self.tr("temperature"), (
                Series(self.tr("distinct answers"), values, tuple(t.distinct for t in temps)),
                Series(self.tr("samples"), values, tuple(result.cached.samples for _ in temps)),
            )),
        ]

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, lab.TemperatureLabResult):
            return {}
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
