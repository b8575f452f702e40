"""Lab: ms per token against context length, both modes, with linear and quadratic fits.

Owns `LengthSweepPanel`: it runs `sweep.sweep_with_fits` (the engine's
`length_sweep` repeated k times, medians, plus least-squares fits) and draws
the median points with min–max bars, the fitted line (dashed) and parabola
(solid) for each mode where the fit means something (R² ≥ the threshold, a
parabola opening up; otherwise the table says "no fit"), and a table of the
fits and the points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.names import mode_name
from kvstudio.charts.plots.results_table import Shown
from kvstudio.engine.records import MODES
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import SWEEP
from kvstudio.ui.app.spin_boxes import param_int_box, param_line
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.plots.base import MODE_COLOURS
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.labs.cache import sweep as lab
else:
    lab = LazyModule("kvstudio.labs.cache.sweep")  # torch loads when a lab first runs


def parse_lengths(text: str) -> tuple[int, ...]:
    """ "16, 32 64" → (16, 32, 64), read as every front reads it (`SWEEP`'s values)."""
    return tuple(SWEEP.param("values").parse(text))


def _poly_text(coefficients: tuple[float, ...]) -> str:
    powers = len(coefficients) - 1
    terms = []
    for i, c in enumerate(coefficients):
        power = powers - i
        x = "" if power == 0 else ("·x" if power == 1 else f"·x{'²' if power == 2 else power}")
        terms.append(f"{c:.3g}{x}")
    return " + ".join(terms).replace("+ -", "− ")


class LengthSweepPanel(LabPanel):
    course_role = "cache"  # the course's model for this lab (lab_models.py)
    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.vary = QComboBox()
        self.vary.addItem("", "prompt")
        self.vary.addItem("", "new")
        self.vary.setCurrentIndex(self.vary.findData(COURSE.sweep_vary))  # the course preset
        self.values = param_line(SWEEP.param("values"))
        self.fixed = param_int_box(SWEEP.param("fixed"))
        self.repeats = param_int_box(SWEEP.param("repeats"))
        for key, widget in (("vary", self.vary), ("values", self.values), ("fixed", self.fixed),
                            ("repeats", self.repeats)):
            self.add_field(key, widget)

        self.plot = pg.PlotWidget(background="w")
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.2)
        add_legend_row(item)
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

    def title(self) -> str:
        return self.tr("Length sweep")

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Generates at several lengths in both modes and plots the time per generated "
                "token (the median decode step, the prefill apart) against the context length "
                "P + N. With the cache it stays nearly flat; "
                "without it, every token re-reads the whole context, so it grows with length. "
                "Each point is the median of several rounds, its bar the fastest and slowest "
                "round. Dashed: best straight line; solid: best parabola; a curve is drawn only "
                "when it explains the points (R² at least {0:g})."
            ).format(lab.MIN_R_SQUARED)
        )
        self.vary.setItemText(0, self.tr("prompt length P"))
        self.vary.setItemText(1, self.tr("new tokens N"))
        self.set_field_names(
            {
                "vary": self.tr("Vary"),
                "values": self.tr("Lengths"),
                "fixed": self.tr("The other length"),
                "repeats": self.tr("Rounds (median of)"),
            }
        )
        item = self.plot.getPlotItem()
        item.setTitle(self.tr("Time per token against context length"), color="#222")
        item.setLabel("bottom", self.tr("context length P + N (tokens)"))
        item.setLabel("left", self.tr("ms per generated token"))
        item.legend.clear()
        for mode in MODES:
            item.legend.addItem(self._points[mode], mode_name(mode))
            item.legend.addItem(
                self._linear[mode], self.tr("{0}: linear fit").format(mode_name(mode))
            )
            item.legend.addItem(
                self._quadratic[mode], self.tr("{0}: quadratic fit").format(mode_name(mode))
            )
        if self.result is not None and isinstance(self.result, lab.SweepLabResult):
            self.show_result(self.result)

    def make_job(self, model: LoadedModel) -> JobFactory:
        values = parse_lengths(self.values.text())
        vary, fixed = self.vary.currentData(), self.fixed.value()
        repeats = self.repeats.value()
        longest = max(values) + fixed
        if longest > model.max_positions:
            raise ValueError(
                f"The longest run needs {longest} positions but the model has "
                f"{model.max_positions}; use shorter lengths."
            )
        backend, tokenizer = model.backend, model.tokenizer
        return lambda: lab.sweep_with_fits(
            backend, tokenizer, vary=vary, values=values, fixed=fixed, repeats=repeats
        )

    def clear_views(self) -> None:
        for items in (self._points, self._linear, self._quadratic):
            for data_item in items.values():
                data_item.setData([], [])
        for bars in self._ranges.values():
            bars.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        self.table.set_rows([], [])

    def show_result(self, result: object) -> None:
        if not isinstance(result, lab.SweepLabResult):
            return
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
                    shown = self._no_fit_text(fits, fit)
                rows.append((mode_name(fits.mode), kind, shown, fit.r_squared))
        for point in result.sweep.points:
            rows.append(
                (
                    mode_name(point.mode),
                    f"P={point.prompt_tokens}, N={point.new_tokens}",
                    Shown(point.ms_per_token,  # the CSV gets the number
                          self.tr("{0:.3g} ms/token").format(point.ms_per_token)),
                    Shown(point.tokens_fed, self.tr("fed {0} (formula {1})").format(
                        point.tokens_fed, point.tokens_fed_formula)),
                )
            )
        self.table.set_rows(
            [self.tr("mode"), self.tr("fit / run"), self.tr("ms per token"), self.tr("R² / fed")],
            rows,
        )

    def _no_fit_text(self, fits: lab.ModeFits, fit: lab.Fit) -> str:
        if fit.r_squared < lab.MIN_R_SQUARED:
            return self.tr("no fit (R² {0:.2f} < {1:g})").format(fit.r_squared,
                                                                 lab.MIN_R_SQUARED)
        return self.tr("no fit (the parabola bends down)")

    def headline(self) -> str:
        result = self.result
        if not isinstance(result, lab.SweepLabResult):
            return ""
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

    def data_tables(self) -> list[DataTable]:
        result = self.result
        if not isinstance(result, lab.SweepLabResult):
            return []
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

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, lab.SweepLabResult):
            return {}
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
