"""Lab: cache vs recompute on the course prompt (P = 183, N = 64), in fp32, fp16 or bf16.

Owns `CacheVsRecomputePanel`: it runs `compare.repeated_cache_vs_recompute`
(the engine's `compare_modes` on the lab prompt, k interleaved rounds), draws
the median ms per step of both modes with a min–max band and max |Δlogit| per
step, and fills the lab table: tokens fed measured vs formula, identical
tokens, TTFT, ms/token and totals as medians (with their range), the speed
ratio of the medians, and the cache bytes. P and N start from the course
preset (P = 183, N = 64); the preset box switches to the seed notebook's
case (its 16-token sentence, N = 64) in one click, and back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QSizePolicy, QWidget

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.names import mode_name
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.charts.plots.results_table import ByteCount
from kvstudio.engine.records import DTYPES, MODES, Mode
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import CACHE_PRESETS, COURSE, NOTEBOOK, CachePreset
from kvstudio.labs.registry import COMPARE
from kvstudio.ui.app.spin_boxes import param_int_box
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.plots.base import MODE_COLOURS
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.labs import common as lab_common
    from kvstudio.labs.cache import compare as lab
else:
    lab_common = LazyModule("kvstudio.labs.common")  # torch loads when a lab first runs
    lab = LazyModule("kvstudio.labs.cache.compare")  # torch loads when a lab first runs


def _band_colour(mode: Mode) -> QColor:
    colour = QColor(MODE_COLOURS[mode])
    colour.setAlpha(60)
    return colour


def spread_text(value: lab_common.Spread, digits: int = 2) -> str:
    """"5.10 (4.90–5.60)": the median, then the range of the rounds."""
    if value.count < 2:
        return f"{value.median:.{digits}f}"
    return f"{value.median:.{digits}f} ({value.low:.{digits}f}–{value.high:.{digits}f})"


class CacheVsRecomputePanel(LabPanel):
    course_role = "cache"  # the course's model for this lab (lab_models.py)
    draw_while_running = False  # it times every step; the chart is drawn from the result
    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.preset = QComboBox()  # the course (P = 183) or the seed notebook (P = 16)
        for name in CACHE_PRESETS:
            self.preset.addItem("", name)
        self.prompt_tokens = param_int_box(COMPARE.param("prompt_tokens"))
        self.new_tokens = param_int_box(COMPARE.param("new_tokens"))
        self.preset.currentIndexChanged.connect(self._on_preset_chosen)
        self.add_field("preset", self.preset)
        self.warmup = param_int_box(COMPARE.param("warmup"))
        self.repeats = param_int_box(COMPARE.param("repeats"))
        self.dtype = QComboBox()
        for dtype in DTYPES:
            self.dtype.addItem(dtype, dtype)
        self.add_field("prompt", self.prompt_tokens)
        self.add_field("new", self.new_tokens)
        self.add_field("warmup", self.warmup)
        self.add_field("repeats", self.repeats)
        self.add_field("dtype", self.dtype)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.time_plot = self.view.addPlot(row=0, col=0)
        self.diff_plot = self.view.addPlot(row=0, col=1)
        add_legend_row(self.time_plot)
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
        self._times: dict[Mode, list[float]] = {m: [] for m in MODES}
        self.add_chart("cache-vs-recompute", self.view)
        self.settings_label = plain_label()  # what the lab changes from the course preset
        self.settings_label.setWordWrap(True)
        self.settings_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.side_layout.addWidget(self.settings_label)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Cache vs recompute")

    def choose_preset(self, name: str) -> None:
        """Show the preset `name` (``course`` or ``notebook``): its P and N, in one click."""
        self.preset.setCurrentIndex(max(0, self.preset.findData(name)))
        self._on_preset_chosen()

    def chosen_preset(self) -> CachePreset:
        return CACHE_PRESETS[str(self.preset.currentData())]

    def _on_preset_chosen(self) -> None:
        preset = self.chosen_preset()
        if hasattr(self, "settings_label"):
            self.settings_label.setText(self.settings_note())
        self.prompt_tokens.setValue(preset.prompt_tokens)
        self.new_tokens.setValue(preset.new_tokens)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Greedy generation on the lab prompt in both modes, after a short warm-up. "
                "Cached mode feeds P + (N − 1) tokens in total, recompute P·N + N(N − 1)/2. "
                "In 16-bit the two modes' logits drift apart; in fp32 they agree to about 1e-5 "
                "(float32 rounding: the headline gives the measured largest gap)."
            )
        )
        self.preset.setItemText(0, self.tr("course: P = 183, N = 64"))
        self.preset.setItemText(1, self.tr("seed notebook: P = 16, N = 64"))
        self.set_field_names(
            {
                "preset": self.tr("Preset"),
                "prompt": self.tr("Prompt tokens P"),
                "new": self.tr("New tokens N"),
                "warmup": self.tr("Warm-up tokens"),
                "repeats": self.tr("Rounds (median of)"),
                "dtype": self.tr("Number format"),
            }
        )
        self.settings_label.setText(self.settings_note())
        self.time_plot.setTitle(self.tr("Time per step (median, band: min–max)"), color="#222")
        self.time_plot.setLabel("bottom", self.tr("step (0 = prefill)"))
        self.time_plot.setLabel("left", self.tr("ms"))
        self.diff_plot.setTitle(self.tr("max |Δlogit| per step, cached vs recompute"), color="#222")
        self.diff_plot.setLabel("bottom", self.tr("step"))
        self.diff_plot.setLabel("left", self.tr("max |Δlogit|"))
        legend = self.time_plot.legend
        legend.clear()
        for mode in MODES:
            legend.addItem(self._time_curves[mode], mode_name(mode))
        if self.result is not None and isinstance(self.result, lab.RepeatedCompare):
            self.show_result(self.result)

    def make_job(self, model: LoadedModel) -> JobFactory:
        backend, tokenizer = model.backend, model.tokenizer
        p, n = self.prompt_tokens.value(), self.new_tokens.value()
        warm, dtype = self.warmup.value(), self.dtype.currentData()
        repeats = self.repeats.value()
        notebook = self.chosen_preset() is NOTEBOOK and p == NOTEBOOK.prompt_tokens
        text = lab_common.lab_text(short=True) if notebook else None  # the notebook's sentence
        if p + n > model.max_positions:
            raise ValueError(
                f"P + N = {p + n} is more than the model's {model.max_positions} positions; "
                "lower P or N."
            )
        return lambda: lab.repeated_cache_vs_recompute(
            backend, tokenizer, repeats=repeats, prompt_tokens=p, new_tokens=n, dtype=dtype,
            warmup_tokens=warm, prompt_text=text,
        )

    def clear_views(self) -> None:
        self._times = {m: [] for m in MODES}
        for curve in (*self._time_curves.values(), *self._low.values(), *self._high.values()):
            curve.setData([], [])
        self._diff_curve.setData([], [])
        self.table.set_rows([], [])

    def show_progress(self, item: object) -> None:
        super().show_progress(item)
        if (isinstance(item, lab_common.Progress) and item.record is not None
                and item.stage in MODES):
            mode: Mode = item.record.mode
            self._times[mode].append(item.record.elapsed_s * 1000.0)
            ys = np.asarray(self._times[mode])
            self._time_curves[mode].setData(np.arange(len(ys), dtype=float), ys)

    def show_result(self, result: object) -> None:
        if not isinstance(result, lab.RepeatedCompare):
            return
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
            (self.tr("number format"), self.dtype.currentText(), ""),
        ]
        self.table.set_rows(["", mode_name("cached"), mode_name("recompute")], rows)

    def headline(self) -> str:
        """The lab's result in numbers: the same tokens, the tokens fed, ms/token per mode.

        First line (the slide's big one): how many of the N steps chose the same token,
        tokens fed in each mode, and decode ms/token in each mode (medians of the rounds,
        step 0 left out: it is the prefill, TTFT); then the formulas, TTFT per mode, the
        ratios (each labelled: decode ms/token, total time) and the logits' largest gap.
        """
        result = self.result
        if not isinstance(result, lab.RepeatedCompare):
            return ""
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

    def settings_note(self) -> str:
        """The setting the lab changes from the course preset, and why (screen and slide)."""
        preset = (self.tr("the seed notebook's case") if self.chosen_preset() is NOTEBOOK
                  else self.tr("the course preset"))
        return self.tr("Greedy in both modes, not the course's T {0:g}, so that both modes must "
                       "choose the same tokens · {1}").format(COURSE.temperature, preset)

    def data_tables(self) -> list[DataTable]:
        result = self.result
        if not isinstance(result, lab.RepeatedCompare):
            return []
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

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, lab.RepeatedCompare):
            return {}
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
