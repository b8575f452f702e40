"""The cache-vs-recompute lab's view: time per step in both modes and the logits' gap.

Owns `CacheVsRecomputeView`: the median ms per step of both modes with a
min–max band and max |Δlogit| per step, and the lab table: tokens fed
measured vs formula, identical tokens, TTFT, ms/token and totals as medians
(with their range), the speed ratio of the medians, and the cache bytes. It
times every step, so it draws from the result only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.labs.base import (
    MODE_COLOURS,
    LabView,
    fill_legend,
    grid_and_legend,
    marked_line,
    name_plot,
    plots_in_a_row,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.names import mode_name
from kvstudio.charts.plots.results_table import ByteCount
from kvstudio.engine.records import MODES, Mode
from kvstudio.labs.course import COURSE, NOTEBOOK

if TYPE_CHECKING:
    from kvstudio.labs import common as lab_common
    from kvstudio.labs.cache import compare as lab
else:
    lab = LazyModule("kvstudio.labs.cache.compare")  # torch loads when a lab first runs


def _band_colour(mode: Mode) -> QColor:
    colour = QColor(MODE_COLOURS[mode])
    colour.setAlpha(60)
    return colour


class CacheVsRecomputeView(LabView):
    key = "compare"
    draw_while_running = False  # it times every step; the chart is drawn from the result

    def result_type(self) -> type:
        return lab.RepeatedCompare

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget, (self.time_plot, self.diff_plot) = plots_in_a_row(2)
        grid_and_legend(self.time_plot)
        self.diff_plot.setLogMode(y=True)
        self.diff_plot.getAxis("left").enableAutoSIPrefix(False)  # "x1e-06" on a log axis misleads
        self.diff_plot.showGrid(x=True, y=True, alpha=0.2)
        self._time_curves = {mode: marked_line(self.time_plot, MODE_COLOURS[mode], "o", 4)
                             for mode in MODES}
        # The range of the rounds at each step, shaded behind the median line.
        self._low: dict[Mode, pg.PlotDataItem] = {}
        self._high: dict[Mode, pg.PlotDataItem] = {}
        self._bands: dict[Mode, pg.FillBetweenItem] = {}
        for mode in MODES:
            low = pg.PlotDataItem([], [], pen=pg.mkPen(None))
            high = pg.PlotDataItem([], [], pen=pg.mkPen(None))
            band = pg.FillBetweenItem(low, high, brush=_band_colour(mode))
            for item in (low, high, band):
                self.time_plot.addItem(item)
            band.setZValue(-10)
            self._low[mode], self._high[mode], self._bands[mode] = low, high, band
        self._diff_curve = self.diff_plot.plot(
            [], [], pen=pg.mkPen("#444", width=2), symbol="o", symbolSize=4, symbolBrush="#444"
        )
        self.add_chart("cache-vs-recompute", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.time_plot, self.tr("Time per step (median, band: min–max)"),
                  self.tr("step (0 = prefill)"), self.tr("ms"))
        name_plot(self.diff_plot, self.tr("max |Δlogit| per step, cached vs recompute"),
                  self.tr("step"), self.tr("max |Δlogit|"))
        fill_legend(self.time_plot, [(self._time_curves[mode], mode_name(mode))
                                     for mode in MODES])
        self.show_result(self.result)

    def clear(self) -> None:
        for curve in (*self._time_curves.values(), *self._low.values(), *self._high.values()):
            curve.setData([], [])
        self._diff_curve.setData([], [])
        self.table.set_rows([], [])

    def draw_result(self, result: lab.RepeatedCompare) -> None:
        for mode in MODES:
            steps = result.step_ms(mode)
            x = np.arange(len(steps), dtype=float)
            self._time_curves[mode].setData(x, np.asarray([s.median for s in steps]))
            self._low[mode].setData(x, np.asarray([s.low for s in steps]))
            self._high[mode].setData(x, np.asarray([s.high for s in steps]))
        first = result.first
        diffs = np.asarray(first.max_abs_logit_diff, dtype=float)
        diffs[diffs <= 0] = np.nan  # an exact 0 (the shared prefill) has no place on a log axis
        self._diff_curve.setData(np.arange(len(diffs), dtype=float), diffs, connect="finite")
        c, r = first.cached, first.recompute
        ratios = result.speed_ratios
        rows: list[tuple[str, Any, Any]] = [
            (self.tr("tokens fed, measured"), c.tokens_fed, r.tokens_fed),
            (self.tr("tokens fed, formula"), c.tokens_fed_formula, r.tokens_fed_formula),
            (
                self.tr("measured = formula"),
                c.tokens_fed == c.tokens_fed_formula,
                r.tokens_fed == r.tokens_fed_formula,
            ),
        ]
        k = len(result.rounds)
        for label, value in (
            (self.tr("TTFT (ms)"), result.ttft_ms),
            (self.tr("decode ms / token (median step)"), result.decode_ms_per_token),
            (self.tr("total (ms)"), result.total_ms),
        ):
            # Numbers, one row each: the CSV keeps them as numbers. Each row says what it is.
            if k > 1:
                rows.append((self.tr("{0}, median of {1} rounds").format(label, k),
                             value("cached").median, value("recompute").median))
                rows.append((self.tr("{0}, fastest round").format(label), value("cached").low,
                             value("recompute").low))
                rows.append((self.tr("{0}, slowest round").format(label), value("cached").high,
                             value("recompute").high))
            else:
                rows.append((self.tr("{0}, single measurement").format(label),
                             value("cached").median, value("recompute").median))
        rows += [
            (self.tr("cache, measured (bytes)"), ByteCount(c.cache_bytes),
             ByteCount(r.cache_bytes)),
            (self.tr("cache, formula 2·L·T·H_kv·d·bytes"), ByteCount(c.cache_bytes_formula), ""),
            (self.tr("identical tokens"), first.identical, ""),  # a bool: ✓ / ✗, CSV true/false
            *([] if first.identical else
              [(self.tr("first divergent step"), first.first_divergent_step, "")]),
            (self.tr("max |Δlogit|"), first.max_logit_diff, ""),
            (self.tr("speed ratio (recompute / cached), medians"), result.speed_ratio, ""),
            (self.tr("speed ratio, lowest round"), ratios.low, ""),
            (self.tr("speed ratio, highest round"), ratios.high, ""),
            (self.tr("rounds"), len(result.rounds), ""),
            (self.tr("number format"), str(self.params["dtype"]), ""),
        ]
        self.table.set_rows(["", mode_name("cached"), mode_name("recompute")], rows)

    def headline_of(self, result: lab.RepeatedCompare) -> str:
        """The lab's result in numbers: the same tokens, the tokens fed, ms/token per mode.

        First line (the slide's big one): how many of the N steps chose the same token,
        tokens fed in each mode, and decode ms/token in each mode (medians of the rounds,
        step 0 left out: it is the prefill, TTFT); then the formulas, TTFT per mode, the
        ratios (each labelled: decode ms/token, total time) and the logits' largest gap.
        """
        first = result.first
        c, r = first.cached, first.recompute
        same = sum(a == b for a, b in zip(c.token_ids, r.token_ids, strict=False))
        steps = max(len(c.token_ids), len(r.token_ids))
        cached_ms, recompute_ms = (result.decode_ms_per_token("cached"),
                                   result.decode_ms_per_token("recompute"))
        rounds = len(result.rounds)
        note = (self.tr("single measurement") if rounds == 1
                else self.tr("median of {0} rounds").format(rounds))
        big = self.tr(
            "Same tokens {0}/{1} · tokens fed {2:,} vs {3:,} · cached {4:.2f} ms/token vs "
            "recompute {5:.2f} ms/token ({6})"
        ).format(same, steps, c.tokens_fed, r.tokens_fed, cached_ms.median,
                 recompute_ms.median, note)
        formulas = self.tr(
            "P+(N−1) = {0:,} and P·N+N(N−1)/2 = {1:,} with P = {2}, N = {3} · TTFT cached {4} "
            "vs recompute {5} ms"
        ).format(c.tokens_fed_formula, r.tokens_fed_formula, first.prompt_tokens,
                 first.new_tokens, f'{result.ttft_ms("cached").median:.1f}',
                 f'{result.ttft_ms("recompute").median:.1f}')  # ranges: the table
        ratios = self.tr(
            "recompute / cached: {0:.1f}× per decoded token, {1:.1f}× in total time · "
            "max |Δlogit| {2:.2g}"
        ).format(result.decode_ratio, result.speed_ratio, first.max_logit_diff)
        return "\n".join([big, formulas, ratios, self.settings_note()])

    def settings_note(self, preset: str | None = None) -> str:
        """The setting the lab changes from the course preset, and why (screen and slide);
        `preset`: the preset's name (``course`` or ``notebook``; None: the run's)."""
        name = self.params["preset"] if preset is None else preset
        shown = (self.tr("the seed notebook's case") if name == NOTEBOOK.name
                 else self.tr("the course preset"))
        return self.tr("Greedy in both modes, not the course's T {0:g}, so that both modes must "
                       "choose the same tokens · {1}").format(COURSE.temperature, shown)

    def tables_of(self, result: lab.RepeatedCompare) -> list[DataTable]:
        step = self.tr("step (0 = prefill)")
        times: list[Series] = []
        fed: list[Series] = []
        for mode in MODES:
            name = mode_name(mode)
            spreads = result.step_ms(mode)
            x = tuple(range(len(spreads)))
            times += [
                Series(self.tr("{0}: median time (ms)").format(name), x,
                       tuple(s.median for s in spreads)),
                Series(self.tr("{0}: fastest round (ms)").format(name), x,
                       tuple(s.low for s in spreads)),
                Series(self.tr("{0}: slowest round (ms)").format(name), x,
                       tuple(s.high for s in spreads)),
            ]
            per_step = result.run(mode).tokens_fed_per_step
            fed.append(Series(self.tr("{0}: tokens fed (tokens)").format(name),
                              tuple(range(len(per_step))), tuple(per_step)))
        diffs = result.first.max_abs_logit_diff
        return [
            DataTable(self.tr("Time per step"), step, tuple(times)),
            DataTable(self.tr("max |Δlogit| per step, cached vs recompute"), step,
                      (Series(self.tr("max |Δlogit| (logit units)"),
                              tuple(range(len(diffs))), tuple(diffs)),)),
            DataTable(self.tr("Tokens fed per step"), step, tuple(fed)),
        ]

    def numbers_of(self, result: lab.RepeatedCompare) -> dict[str, Any]:
        first = result.first
        out: dict[str, Any] = {
            "model": first.model_label,
            "prompt_tokens": first.prompt_tokens,
            "new_tokens": first.new_tokens,
            "rounds": len(result.rounds),
            "identical": first.identical,
            "first_divergent_step": first.first_divergent_step,
            "max_abs_logit_diff": list(first.max_abs_logit_diff),
            "speed_ratio_of_medians": result.speed_ratio,
            "speed_ratio_per_round": [r.speed_ratio for r in result.rounds],
        }
        for mode in MODES:
            run = result.run(mode)
            out.update({
                f"{mode}_tokens_fed": run.tokens_fed,
                f"{mode}_tokens_fed_formula": run.tokens_fed_formula,
                f"{mode}_cache_bytes": run.cache_bytes,
                f"{mode}_cache_bytes_formula": run.cache_bytes_formula,
                f"{mode}_ttft_ms": _spread_dict(result.ttft_ms(mode)),
                f"{mode}_decode_ms_per_token": _spread_dict(result.decode_ms_per_token(mode)),
                f"{mode}_total_ms": _spread_dict(result.total_ms(mode)),
                f"{mode}_step_ms_median": [s.median for s in result.step_ms(mode)],
            })
        return out


def _spread_dict(value: lab_common.Spread) -> dict[str, float]:
    return {"median": value.median, "min": value.low, "max": value.high, "rounds": value.count}
