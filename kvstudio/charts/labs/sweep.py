"""The length-sweep lab's view: ms per token against context length, with fitted curves.

Owns `LengthSweepView`: the median points of both modes with min–max bars,
the fitted line (dashed) and parabola (solid) for each mode where the fit
means something (R² ≥ the threshold, a parabola opening up; otherwise the
table says "no fit"), and a table of the fits and the points. It times every
run, so it draws from the result only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.labs.base import MODE_COLOURS, LabView, fill_legend, grid_and_legend, name_plot
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.names import mode_name
from kvstudio.charts.plots.results_table import Shown
from kvstudio.engine.records import MODES

if TYPE_CHECKING:
    from kvstudio.labs.cache import sweep as lab
else:
    lab = LazyModule("kvstudio.labs.cache.sweep")  # torch loads when a lab first runs


def _poly_text(coefficients: tuple[float, ...]) -> str:
    powers = len(coefficients) - 1
    terms = []
    for i, c in enumerate(coefficients):
        power = powers - i
        x = "" if power == 0 else ("·x" if power == 1 else f"·x{'²' if power == 2 else power}")
        terms.append(f"{c:.3g}{x}")
    return " + ".join(terms).replace("+ -", "− ")


class LengthSweepView(LabView):
    key = "sweep"
    draw_while_running = False  # it times every run; the chart is drawn from the result

    def result_type(self) -> type:
        return lab.SweepLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        item = self.plot.getPlotItem()
        grid_and_legend(item)
        self._points: dict[str, pg.PlotDataItem] = {}
        self._linear: dict[str, pg.PlotDataItem] = {}
        self._quadratic: dict[str, pg.PlotDataItem] = {}
        self._ranges: dict[str, pg.ErrorBarItem] = {}
        for mode in MODES:
            colour = MODE_COLOURS[mode]
            self._points[mode] = item.plot(
                [], [], pen=None, symbol="o", symbolSize=9, symbolBrush=colour, symbolPen="w"
            )
            self._linear[mode] = item.plot(
                [], [], pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine)
            )
            self._quadratic[mode] = item.plot([], [], pen=pg.mkPen(colour, width=2.5))
            self._ranges[mode] = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0),
                                                 pen=pg.mkPen(colour, width=1.5), beam=4)
            item.addItem(self._ranges[mode])
        self.add_chart("length-sweep", self.plot)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        item = self.plot.getPlotItem()
        name_plot(item, self.tr("Time per token against context length"),
                  self.tr("context length P + N (tokens)"), self.tr("ms per generated token"))
        fill_legend(item, [entry for mode in MODES for entry in (
            (self._points[mode], mode_name(mode)),
            (self._linear[mode], self.tr("{0}: linear fit").format(mode_name(mode))),
            (self._quadratic[mode], self.tr("{0}: quadratic fit").format(mode_name(mode))))])
        self.show_result(self.result)

    def clear(self) -> None:
        for items in (self._points, self._linear, self._quadratic):
            for data_item in items.values():
                data_item.setData([], [])
        for bars in self._ranges.values():
            bars.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        self.table.set_rows([], [])

    def draw_result(self, result: lab.SweepLabResult) -> None:
        rows: list[tuple[Any, ...]] = []
        for fits in result.fits:
            x = np.asarray(fits.context, dtype=float)
            ms = np.asarray(fits.ms_per_token, dtype=float)
            self._points[fits.mode].setData(x, ms)
            if fits.ms_low:
                self._ranges[fits.mode].setData(
                    x=x, y=ms, top=np.asarray(fits.ms_high) - ms,
                    bottom=ms - np.asarray(fits.ms_low))
            grid = np.linspace(float(x.min()), float(x.max()), 64)
            for fit, curve, kind in ((fits.linear, self._linear[fits.mode], self.tr("linear")),
                                     (fits.quadratic, self._quadratic[fits.mode],
                                      self.tr("quadratic"))):
                if fits.usable(fit):
                    curve.setData(grid, fit(grid))
                    shown = _poly_text(fit.coefficients)
                else:
                    curve.setData([], [])
                    shown = self._no_fit_text(fit)
                rows.append((mode_name(fits.mode), kind, shown, fit.r_squared))
        for point in result.sweep.points:
            rows.append((mode_name(point.mode), f"P={point.prompt_tokens}, N={point.new_tokens}",
                         Shown(point.ms_per_token,  # the CSV gets the number
                               self.tr("{0:.3g} ms/token").format(point.ms_per_token)),
                         Shown(point.tokens_fed, self.tr("fed {0} (formula {1})").format(
                             point.tokens_fed, point.tokens_fed_formula))))
        self.table.set_rows(
            [self.tr("mode"), self.tr("fit / run"), self.tr("ms per token"), self.tr("R² / fed")],
            rows,
        )

    def _no_fit_text(self, fit: lab.Fit) -> str:
        if fit.r_squared < lab.MIN_R_SQUARED:
            return self.tr("no fit (R² {0:.2f} < {1:g})").format(fit.r_squared,
                                                                 lab.MIN_R_SQUARED)
        return self.tr("no fit (the parabola bends down)")

    def headline_of(self, result: lab.SweepLabResult) -> str:
        parts = []
        for fits in result.fits:
            parts.append(self.tr("{0}: {1:.2f} → {2:.2f} ms per token").format(
                mode_name(fits.mode), fits.ms_per_token[0], fits.ms_per_token[-1]))
        first = self.tr("Context {0} → {1} tokens: ").format(
            result.fits[0].context[0], result.fits[0].context[-1]) + " · ".join(parts)
        fitted = []
        for fits in result.fits:
            best = max((f for f in (fits.linear, fits.quadratic) if fits.usable(f)),
                       key=lambda f: f.r_squared, default=None)
            fitted.append(
                self.tr("{0}: no curve fits (flat or noisy)").format(mode_name(fits.mode))
                if best is None else self.tr("{0}: {1} fit R² {2:.2f}").format(
                    mode_name(fits.mode),
                    self.tr("linear") if best is fits.linear else self.tr("quadratic"),
                    best.r_squared))
        return first + "\n" + " · ".join(fitted) + " · " + self.tr(
            "median of {0} rounds").format(result.repeats)

    def tables_of(self, result: lab.SweepLabResult) -> list[DataTable]:
        series: list[Series] = []
        for fits in result.fits:
            name = mode_name(fits.mode)
            series.append(Series(self.tr("{0}: median ms per generated token").format(name),
                                 fits.context, fits.ms_per_token))
            if fits.ms_low:
                series += [
                    Series(self.tr("{0}: fastest round (ms per token)").format(name),
                           fits.context, fits.ms_low),
                    Series(self.tr("{0}: slowest round (ms per token)").format(name),
                           fits.context, fits.ms_high),
                ]
            for fit, kind in ((fits.linear, self.tr("linear")),
                              (fits.quadratic, self.tr("quadratic"))):
                if fits.usable(fit):
                    series.append(Series(self.tr("{0}: {1} fit (ms per token)").format(
                        name, kind), fits.context, tuple(float(v) for v in fit(fits.context))))
        return [DataTable(self.tr("Time per token against context length"),
                          self.tr("context length P + N (tokens)"), tuple(series))]

    def numbers_of(self, result: lab.SweepLabResult) -> dict[str, Any]:
        return {
            "vary": result.sweep.vary,
            "rounds": result.repeats,
            "min_r_squared": lab.MIN_R_SQUARED,
            "points": [
                {
                    "mode": p.mode,
                    "prompt_tokens": p.prompt_tokens,
                    "new_tokens": p.new_tokens,
                    "seconds": p.seconds,
                    "ttft_ms": 1000.0 * p.ttft_seconds,
                    "decode_ms_per_token": p.ms_per_token,
                    "tokens_fed": p.tokens_fed,
                    "tokens_fed_formula": p.tokens_fed_formula,
                }
                for p in result.sweep.points
            ],
            "fits": {
                f.mode: {
                    "linear": list(f.linear.coefficients),
                    "linear_r2": f.linear.r_squared,
                    "quadratic": list(f.quadratic.coefficients),
                    "quadratic_r2": f.quadratic.r_squared,
                    "linear_usable": f.usable(f.linear),
                    "quadratic_usable": f.usable(f.quadratic),
                    "ms_per_token_min": list(f.ms_low),
                    "ms_per_token_max": list(f.ms_high),
                }
                for f in result.fits
            },
        }
