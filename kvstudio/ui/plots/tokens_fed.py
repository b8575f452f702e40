"""Tokens fed to the model's forward at each step (bars) and in total (line), both modes.

Owns the drawing of `StepRecord.tokens_fed` against the course formulas
P + (N − 1) (cached) and P·N + N(N − 1)/2 (recompute), drawn dashed as far as
the run goes (the measured line lies on it). The x axis spans the run plus
room for the next steps (`extent.planned_steps`), exactly the run once it ends.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.plots.names import mode_name
from kvstudio.engine.records import MODES, Mode
from kvstudio.ui.plots.base import LivePlot, live_curve, mode_brush, mode_pen
from kvstudio.ui.plots.extent import store_steps
from kvstudio.ui.run.store import RunStore

BAR_OFFSET: dict[Mode, float] = {"cached": -0.2, "recompute": 0.2}


class TokensFedPlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        right = self.add_right_axis("")
        self._bars: dict[Mode, pg.BarGraphItem] = {}
        self._cumulative: dict[Mode, pg.PlotDataItem] = {}
        self._formula: dict[Mode, pg.PlotDataItem] = {}
        for mode in MODES:
            bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=mode_brush(mode),
                                   pen=mode_pen(mode, 1))
            self.plot_item.addItem(bars)
            line = live_curve(mode_pen(mode, 2.5))
            formula = live_curve(mode_pen(mode, 1.5, dashed=True))
            right.addItem(line)
            right.addItem(formula)
            self._bars[mode], self._cumulative[mode], self._formula[mode] = bars, line, formula
        self.retranslate()
        self.show_empty(True)

    def retranslate(self) -> None:
        self.set_title(self.tr("Tokens fed to the model per step"))
        self.plot_item.setLabel("bottom", self.tr("step (0 = prefill)"))
        self.set_axis_title("left", self.tr("tokens fed (bars)"), self.tr("tokens"))
        self.set_axis_title("right", self.tr("cumulative"), "Σ")
        self.legend.clear()
        for mode in MODES:
            name = mode_name(mode)
            self.legend.addItem(self._bars[mode], self.tr("{0}: per step").format(name))
            self.legend.addItem(self._cumulative[mode], self.tr("{0}: cumulative").format(name))
        self.legend.addItem(self._formula["cached"], self.tr("formula P+(N−1)"))
        self.legend.addItem(self._formula["recompute"], self.tr("formula P·N+N(N−1)/2"))

    def refresh(self, store: RunStore) -> None:
        self._store = store
        self.show_empty(store.longest_steps() == 0)
        for mode in MODES:
            trace = store.trace(mode)
            if trace is None:
                self._bars[mode].setOpts(x=[], height=[])
                self._cumulative[mode].setData([], [])
                self._formula[mode].setData([], [])
                continue
            steps = np.asarray(trace.steps, dtype=float)
            self._bars[mode].setOpts(x=steps + BAR_OFFSET[mode],
                                     height=np.asarray(trace.tokens_fed, dtype=float))
            self._cumulative[mode].setData(steps, np.asarray(trace.tokens_fed_cumulative, float))
            formula = trace.formula_cumulative  # as far as the run goes
            self._formula[mode].setData(np.arange(len(formula), dtype=float),
                                        np.asarray(formula, dtype=float))
        self._fit_ranges(store)

    def _fit_ranges(self, store: RunStore) -> None:
        """Ranges from the steps the axes span (a few jumps per run, not one per step)."""
        traces = store.traces()
        if not traces:
            return
        span = store_steps(store)
        bar_top = max(max(t.info.prompt_len + (span - 1 if t.mode == "recompute" else 0), 1)
                      for t in traces)
        total_top = max(max(t.info.formula_cumulative(span)) for t in traces)
        # Headroom above the bars and lines keeps the legend (top left) clear of them.
        self.set_ranges((-0.6, span - 0.4), (0, bar_top * 1.5), (0, total_top * 1.3))

    def bar_heights(self, mode: Mode) -> list[float]:
        """The heights currently drawn for `mode` (what tests compare with the records)."""
        heights = self._bars[mode].opts.get("height")
        return [] if heights is None else [float(h) for h in heights]

    def formula_steps(self, mode: Mode) -> list[float]:
        """The x values of the dashed formula line drawn for `mode`."""
        x, _ = self._formula[mode].getData()
        return [] if x is None else [float(v) for v in x]

    def x_range(self) -> tuple[float, float]:
        low, high = self.plot_item.vb.viewRange()[0]
        return float(low), float(high)

    def cumulative_values(self, mode: Mode) -> list[float]:
        _, y = self._cumulative[mode].getData()
        return [] if y is None else [float(v) for v in y]

    def headline(self) -> str:
        parts = []
        for trace in self._traces():
            parts.append(self.tr("{0}: {1:,} tokens fed (formula {2:,})").format(
                mode_name(trace.mode), trace.tokens_fed_total, trace.formula_total))
        if not parts:
            return ""
        first = self._traces()[0].info
        setting = self.tr("P = {0} prompt tokens, N = {1} steps").format(
            first.prompt_len, max(len(t.records) for t in self._traces()))
        return " · ".join(parts) + "\n" + setting + " · " + self.tr(
            "cached P+(N−1), recompute P·N+N(N−1)/2")

    def data_tables(self) -> list[DataTable]:
        series: list[Series] = []
        for trace in self._traces():
            name = mode_name(trace.mode)
            steps = tuple(trace.steps)
            planned = trace.formula_cumulative  # as drawn
            series += [
                Series(self.tr("{0}: tokens fed at the step (tokens)").format(name), steps,
                       tuple(trace.tokens_fed)),
                Series(self.tr("{0}: tokens fed so far (tokens)").format(name), steps,
                       tuple(trace.tokens_fed_cumulative)),
                Series(self.tr("{0}: formula, so far (tokens)").format(name),
                       tuple(range(len(planned))), tuple(planned)),
            ]
        return [DataTable(self.tr("Tokens fed to the model per step"),
                          self.tr("step (0 = prefill)"), tuple(series))]
