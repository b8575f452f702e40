"""Lab: cache vs recompute on the course prompt (P = 183, N = 64), in fp32, fp16 or bf16.

Owns `CacheVsRecomputePanel`: it runs `labs.cache_vs_recompute` (the engine's
`compare_modes` on the lab prompt), draws ms per step for both modes as they
arrive and max |Δlogit| per step at the end, and fills the lab table: tokens
fed measured vs formula, identical tokens, TTFT, ms/token, totals, the speed
ratio and the cache bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QWidget

from kvstudio.core.records import DTYPES, MODES, Mode
from kvstudio.ui.app.lazy import LazyModule
from kvstudio.ui.app.names import format_bytes, mode_name
from kvstudio.ui.labs.base import LabPanel, int_box
from kvstudio.ui.plots.base import MODE_COLOURS
from kvstudio.ui.run.engine_adapter import ModelHandle
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.core import experiments, labs
else:
    experiments = LazyModule("kvstudio.core.experiments")  # torch loads when a lab first runs
    labs = LazyModule("kvstudio.core.labs")  # torch loads when a lab first runs


class CacheVsRecomputePanel(LabPanel):
    draw_while_running = False  # it times every step; the chart is drawn from the result
    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt_tokens = int_box(1, 4096, 183)
        self.new_tokens = int_box(1, 2048, 64)
        self.warmup = int_box(0, 64, 4)
        self.dtype = QComboBox()
        for dtype in DTYPES:
            self.dtype.addItem(dtype, dtype)
        self.add_field("prompt", self.prompt_tokens)
        self.add_field("new", self.new_tokens)
        self.add_field("warmup", self.warmup)
        self.add_field("dtype", self.dtype)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.time_plot = self.view.addPlot(row=0, col=0)
        self.diff_plot = self.view.addPlot(row=0, col=1)
        self.time_plot.addLegend(offset=(8, 8), labelTextColor="#222")
        self.diff_plot.setLogMode(y=True)
        self.diff_plot.getAxis("left").enableAutoSIPrefix(False)  # "x1e-06" on a log axis misleads
        for plot in (self.time_plot, self.diff_plot):
            plot.showGrid(x=True, y=True, alpha=0.2)
        self._time_curves = {
            mode: self.time_plot.plot(
                [],
                [],
                pen=pg.mkPen(MODE_COLOURS[mode], width=2),
                symbol="o",
                symbolSize=4,
                symbolBrush=MODE_COLOURS[mode],
                symbolPen=None,
            )
            for mode in MODES
        }
        self._diff_curve = self.diff_plot.plot(
            [], [], pen=pg.mkPen("#444", width=2), symbol="o", symbolSize=4, symbolBrush="#444"
        )
        self._times: dict[Mode, list[float]] = {m: [] for m in MODES}
        self.add_chart("cache-vs-recompute", self.view)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Cache vs recompute")

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Greedy generation on the lab prompt in both modes, after a short warm-up. "
                "Cached mode feeds P + (N − 1) tokens in total, recompute P·N + N(N − 1)/2. "
                "In 16-bit the two modes' logits drift apart; in fp32 they agree to ~1e-6."
            )
        )
        self.set_field_names(
            {
                "prompt": self.tr("Prompt tokens P"),
                "new": self.tr("New tokens N"),
                "warmup": self.tr("Warm-up tokens"),
                "dtype": self.tr("Number format"),
            }
        )
        self.time_plot.setTitle(self.tr("Time per step"), color="#222")
        self.time_plot.setLabel("bottom", self.tr("step (0 = prefill)"))
        self.time_plot.setLabel("left", self.tr("ms"))
        self.diff_plot.setTitle(self.tr("max |Δlogit| per step, cached vs recompute"), color="#222")
        self.diff_plot.setLabel("bottom", self.tr("step"))
        self.diff_plot.setLabel("left", self.tr("max |Δlogit|"))
        legend = self.time_plot.legend
        legend.clear()
        for mode in MODES:
            legend.addItem(self._time_curves[mode], mode_name(mode))
        if self.result is not None and isinstance(self.result, experiments.CompareResult):
            self.show_result(self.result)

    def make_job(self, model: ModelHandle) -> JobFactory:
        backend, tokenizer = model.backend, model.tokenizer
        p, n = self.prompt_tokens.value(), self.new_tokens.value()
        warm, dtype = self.warmup.value(), self.dtype.currentData()
        if p + n > model.max_positions:
            raise ValueError(
                f"P + N = {p + n} is more than the model's {model.max_positions} positions; "
                "lower P or N."
            )
        return lambda: labs.cache_vs_recompute(
            backend, tokenizer, prompt_tokens=p, new_tokens=n, dtype=dtype, warmup_tokens=warm
        )

    def clear_views(self) -> None:
        self._times = {m: [] for m in MODES}
        for curve in self._time_curves.values():
            curve.setData([], [])
        self._diff_curve.setData([], [])
        self.table.set_rows([], [])

    def show_progress(self, item: object) -> None:
        super().show_progress(item)
        if (isinstance(item, experiments.Progress) and item.record is not None
                and item.stage in MODES):
            mode: Mode = item.record.mode
            self._times[mode].append(item.record.elapsed_s * 1000.0)
            ys = np.asarray(self._times[mode])
            self._time_curves[mode].setData(np.arange(len(ys), dtype=float), ys)

    def show_result(self, result: object) -> None:
        if not isinstance(result, experiments.CompareResult):
            return
        for mode, run in (("cached", result.cached), ("recompute", result.recompute)):
            ms = np.asarray(run.step_seconds) * 1000.0
            self._time_curves[mode].setData(np.arange(len(ms), dtype=float), ms)  # type: ignore[index]
        diffs = np.asarray(result.max_abs_logit_diff, dtype=float)
        diffs[diffs <= 0] = np.nan  # an exact 0 (the shared prefill) has no place on a log axis
        self._diff_curve.setData(np.arange(len(diffs), dtype=float), diffs, connect="finite")
        c, r = result.cached, result.recompute
        identical = (
            "✓"
            if result.identical
            else self.tr("✗ first differs at step {0}").format(result.first_divergent_step)
        )
        rows: list[tuple[str, Any, Any]] = [
            (self.tr("tokens fed, measured"), c.tokens_fed, r.tokens_fed),
            (self.tr("tokens fed, formula"), c.tokens_fed_formula, r.tokens_fed_formula),
            (
                self.tr("measured = formula"),
                c.tokens_fed == c.tokens_fed_formula,
                r.tokens_fed == r.tokens_fed_formula,
            ),
            (self.tr("TTFT (ms)"), c.ttft_seconds * 1000, r.ttft_seconds * 1000),
            (
                self.tr("decode ms / token"),
                c.decode_seconds_per_token * 1000,
                r.decode_seconds_per_token * 1000,
            ),
            (self.tr("total (ms)"), c.total_seconds * 1000, r.total_seconds * 1000),
            (self.tr("cache, measured"), format_bytes(c.cache_bytes), format_bytes(r.cache_bytes)),
            (
                self.tr("cache, formula 2·L·T·H_kv·d·bytes"),
                format_bytes(c.cache_bytes_formula),
                "—",
            ),
            (self.tr("identical tokens"), identical, ""),
            (self.tr("max |Δlogit|"), result.max_logit_diff, ""),
            (self.tr("speed ratio (recompute / cached)"), f"{result.speed_ratio:.1f}×", ""),
            (self.tr("number format"), self.dtype.currentText(), ""),
        ]
        self.table.set_rows(["", mode_name("cached"), mode_name("recompute")], rows)

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, experiments.CompareResult):
            return {}
        return {
            "model": result.model_label,
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "identical": result.identical,
            "first_divergent_step": result.first_divergent_step,
            "max_abs_logit_diff": list(result.max_abs_logit_diff),
            "speed_ratio": result.speed_ratio,
            **{
                f"{run.mode}_{key}": value
                for run in (result.cached, result.recompute)
                for key, value in (
                    ("tokens_fed", run.tokens_fed),
                    ("tokens_fed_formula", run.tokens_fed_formula),
                    ("ttft_ms", run.ttft_seconds * 1000),
                    ("decode_ms_per_token", run.decode_seconds_per_token * 1000),
                    ("total_ms", run.total_seconds * 1000),
                    ("cache_bytes", run.cache_bytes),
                    ("cache_bytes_formula", run.cache_bytes_formula),
                    ("step_ms", [s * 1000 for s in run.step_seconds]),
                )
            },
        }
