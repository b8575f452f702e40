"""KV cache bytes per layer (K and V side by side) for the current run's latest step.

Owns the drawing of `StepRecord.cache_layer_bytes` next to the formula
2·L·T·H_kv·d·bytes (per layer, Σ_l 2·T_l·H_kv·d·bytes, for a hybrid model) and
the measured total; a static cache shows allocated (outline) against used
(filled); a sliding window shows its cap per layer (W − 1 tokens kept); a
hybrid model's layers are labelled with their kind (full, or W for sliding).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from kvstudio.charts.plots.names import format_bytes
from kvstudio.engine import formulas
from kvstudio.engine.records import StepRecord
from kvstudio.ui.plots.base import LivePlot
from kvstudio.ui.plots.extent import trace_steps
from kvstudio.ui.run.engine_adapter import RunInfo
from kvstudio.ui.run.store import RunStore

if TYPE_CHECKING:
    from kvstudio.engine.cache.layout import CachePlan  # (torch: loaded with the first run)
from kvstudio.charts.chart_data import DataTable, Series

K_COLOUR, V_COLOUR = "#3182bd", "#31a354"


def _filled(colour: str) -> QColor:
    c = QColor(colour)
    c.setAlpha(190)
    return c


PARENTHESIS = re.compile(r"\([^()]*\)")  # a title wraps between phrases, never inside one

class CacheBytesPlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._k_used = pg.BarGraphItem(x=[], height=[], width=0.38, brush=_filled(K_COLOUR),
                                       pen=pg.mkPen(K_COLOUR))
        self._v_used = pg.BarGraphItem(x=[], height=[], width=0.38, brush=_filled(V_COLOUR),
                                       pen=pg.mkPen(V_COLOUR))
        outline = pg.mkPen("#555", width=1.5, style=Qt.PenStyle.DashLine)
        self._allocated = pg.BarGraphItem(x=[], height=[], width=0.38, brush=None, pen=outline)
        self._cap = pg.InfiniteLine(angle=0, movable=False,
                                    pen=pg.mkPen("#a50f15", width=1.5,
                                                 style=Qt.PenStyle.DashLine),
                                    label="", labelOpts={"position": 0.85, "color": "#a50f15"})
        for item in (self._allocated, self._k_used, self._v_used, self._cap):
            self.plot_item.addItem(item)
        self._cap.setVisible(False)
        self._tick_labels: list[str] = []
        self.summary = ""
        self._shown: tuple[RunInfo, StepRecord] | None = None  # what is drawn (for exports)
        self._static_in_legend = False
        self.retranslate()
        self.show_empty(True)

    # ---- handles: what a user sees here (tests read them too) ------------------------------
    @property
    def allocated_bars(self) -> pg.BarGraphItem:
        """The bars of bytes allocated per step."""
        return self._allocated

    @property
    def window_cap_line(self) -> pg.InfiniteLine:
        """The line at the sliding window's cap (shown for a uniform sliding cache)."""
        return self._cap

    def retranslate(self) -> None:
        self.plot_item.setLabel("bottom", self.tr("layer"))
        self.plot_item.setLabel("left", self.tr("bytes"))
        self.legend.clear()
        self.legend.addItem(self._k_used, self.tr("K (used)"))
        self.legend.addItem(self._v_used, self.tr("V (used)"))
        self._allocated_name = self.tr("allocated (static)")
        if self._static_in_legend:  # only while a static cache is drawn
            self.legend.addItem(self._allocated, self._allocated_name)
        self._title_empty = self.tr("KV cache per layer")
        self._measured_template = self.tr("KV cache: {0} measured (T = {1} tokens)")
        self._formula_template = self.tr("formula 2·L·T·H_kv·d·bytes = {0}")
        self._no_cache = self.tr("KV cache: recompute mode keeps no cache")
        self._cap_template = self.tr("window W = {0}: keeps {1} tokens")
        self._full_tick = self.tr("{0} full")
        self._sliding_tick = self.tr("{0} W={1}")
        self._hybrid_formula_template = self.tr("formula Σ 2·T_l·H_kv·d·bytes = {0}")
        self._cached_run_note = self.tr("(cached run; recompute keeps none)")
        self.set_title(self._title_empty)

    def refresh(self, store: RunStore) -> None:
        """Draw the current run's cache; in recompute mode the cached run's (recompute has none)."""
        trace = store.cache_trace
        record = trace.last if trace is not None else None
        self.show_empty(record is None)
        if trace is None or record is None:
            self._draw_empty()
            return
        steps = trace_steps(trace)
        self._draw(trace.info, record, recompute_current=store.current_mode == "recompute",
                   planned=steps)

    def _draw_empty(self) -> None:
        self._shown = None
        self._show_allocated_in_legend(False)
        for bars in (self._k_used, self._v_used, self._allocated):
            bars.setOpts(x=[], height=[])
        self._cap.setVisible(False)
        self.summary = self._title_empty
        self.set_title(self.summary)

    def _draw(self, info: RunInfo, record: StepRecord, recompute_current: bool = False,
              planned: int | None = None) -> None:
        layers = np.arange(len(record.cache_layer_bytes), dtype=float)
        k_alloc = np.asarray([k for k, _ in record.cache_layer_bytes], dtype=float)
        v_alloc = np.asarray([v for _, v in record.cache_layer_bytes], dtype=float)
        static = info.request.settings.cache.kind == "static"
        self._shown = (info, record)
        self._show_allocated_in_legend(static)
        if static:
            # Used bytes split by the tokens each layer holds (evenly unless layers differ).
            held = np.asarray(info.cache_plan().used_tokens(info.prompt_len + record.step),
                              dtype=float)
            if len(held) != len(layers) or held.sum() == 0:
                held = np.ones(len(layers))
            k_used = record.cache_used_bytes / 2 * held / held.sum()
            v_used = k_used.copy()
            self._allocated.setOpts(x=np.concatenate([layers - 0.2, layers + 0.2]),
                                    height=np.concatenate([k_alloc, v_alloc]))
        else:
            k_used, v_used = k_alloc, v_alloc
            self._allocated.setOpts(x=[], height=[])
        self._k_used.setOpts(x=layers - 0.2, height=k_used)
        self._v_used.setOpts(x=layers + 0.2, height=v_used)
        plan = info.cache_plan()
        first = plan.layers[0] if plan.layers else None
        if first is not None and plan.uniform and first.keeps is not None \
                and info.mode == "cached":
            cap = formulas.cache_bytes(1, first.keeps, info.num_kv_heads, info.head_dim,
                                       info.dtype_bytes) / 2  # K (or V) of one layer
            self._cap.setValue(cap)
            self._cap.label.setFormat(self._cap_template.format(first.window, first.keeps))
            self._cap.setVisible(True)
        else:
            self._cap.setVisible(False)
        if info.mode == "recompute":
            self.summary = self._no_cache
        else:
            formula = info.formula_used_bytes(info.prompt_len + record.step)
            measured = self._measured_template.format(format_bytes(record.cache_used_bytes),
                                                      record.cache_length)
            if recompute_current:
                measured = self._cached_run_note + " " + measured
            template = self._formula_template if plan.uniform else self._hybrid_formula_template
            # Two lines; each wraps again on a narrow plot, but only between phrases: a
            # parenthesis ("(T = 77 tokens)") stays whole.
            self.summary = "<br>".join(
                PARENTHESIS.sub(lambda m: m.group(0).replace(" ", "\u00a0"), line)
                for line in (measured, template.format(format_bytes(formula))))
        self.set_title(self.summary)
        ticks = self._ticks(plan, len(layers))
        if ticks != self._tick_labels:  # set only when they change (setTicks repaints)
            self._tick_labels = ticks
            self.plot_item.getAxis("bottom").setTicks([list(enumerate(ticks))])
        # Headroom above the bars keeps the legend clear of them.
        self.set_ranges((-0.6, len(layers) - 0.4),
                        (0, self._planned_top(info, record, planned) * 1.45))

    def _ticks(self, plan: CachePlan, count: int) -> list[str]:
        """Layer numbers; with mixed layer kinds, each with its kind ("0 W=8", "3 full")."""
        if plan.uniform or len(plan.layers) != count:
            return [str(i) for i in range(count)]
        return [self._sliding_tick.format(i, layer.window) if layer.kind == "sliding"
                else self._full_tick.format(i) for i, layer in enumerate(plan.layers)]

    def _show_allocated_in_legend(self, static: bool) -> None:
        if static == self._static_in_legend:
            return
        self._static_in_legend = static
        if static:
            self.legend.addItem(self._allocated, self._allocated_name)
        else:
            self.legend.removeItem(self._allocated)

    def headline(self) -> str:
        if self._shown is None:
            return ""
        info, record = self._shown
        if info.mode == "recompute":
            return self._no_cache
        tokens = record.cache_length
        formula = info.formula_used_bytes(info.prompt_len + record.step)  # per layer if mixed
        per_token = info.formula_cache_bytes(1)
        text = self.tr(
            "KV cache measured {0:,} B = formula 2·L·T·H_kv·d·bytes {1:,} B (T = {2} tokens)"
        ).format(record.cache_used_bytes, formula, tokens)
        detail = self.tr("{0:,} B per token · L = {1}, H_kv = {2}, d = {3}, {4} bytes per number"
                         ).format(per_token, info.num_layers, info.num_kv_heads, info.head_dim,
                                  info.dtype_bytes)
        if info.request.settings.cache.kind == "static":
            detail += " · " + self.tr("static: {0:,} B allocated").format(
                record.cache_allocated_bytes)
        return text + "\n" + detail

    def data_tables(self) -> list[DataTable]:
        if self._shown is None:
            return []
        info, record = self._shown
        layers = tuple(range(len(record.cache_layer_bytes)))
        static = info.request.settings.cache.kind == "static"
        # Used, as drawn: a static cache's used bytes split by the tokens each layer holds.
        used: Sequence[tuple[float, float]] = (self.drawn_layer_bytes() if static
                                               else record.cache_layer_bytes)
        series = [
            Series(self.tr("K bytes used (B)"), layers, tuple(float(kb) for kb, _ in used)),
            Series(self.tr("V bytes used (B)"), layers, tuple(float(vb) for _, vb in used)),
        ]
        if static:
            series += [
                Series(self.tr("K bytes allocated (B)"), layers,
                       tuple(kb for kb, _ in record.cache_layer_bytes)),
                Series(self.tr("V bytes allocated (B)"), layers,
                       tuple(vb for _, vb in record.cache_layer_bytes)),
            ]
        if self._cap.isVisible():
            series.append(Series(self.tr("window cap, K or V (B)"), layers,
                                 tuple(float(self._cap.value()) for _ in layers)))
        return [DataTable(self.tr("KV cache per layer"), self.tr("layer"), tuple(series))]

    @staticmethod
    def _planned_top(info: RunInfo, record: StepRecord, steps_spanned: int | None = None) -> float:
        """The largest per-layer K (or V) bar within the steps the plots span: fix y to it."""
        steps = info.max_new_tokens if steps_spanned is None else steps_spanned
        positions = info.prompt_len + steps
        tokens = max(info.cache_plan().allocated_tokens(positions), default=0)
        planned = formulas.cache_bytes(1, tokens, info.num_kv_heads, info.head_dim,
                                       info.dtype_bytes) / 2
        measured = max((max(k, v) for k, v in record.cache_layer_bytes), default=0)
        return float(max(planned, measured, 1))

    def layer_bar_rects(self) -> list[QRectF]:
        """Every drawn K and V bar as a rectangle in scene coordinates (for layout tests)."""
        rects: list[QRectF] = []
        for bars in (self._k_used, self._v_used):
            xs, heights = bars.opts.get("x"), bars.opts.get("height")
            width = float(bars.opts.get("width") or 0.0)
            if xs is None or heights is None:
                continue
            for x, height in zip(xs, heights, strict=True):
                rect = QRectF(float(x) - width / 2, 0.0, width, float(height)).normalized()
                rects.append(bars.mapRectToScene(rect))
        return rects

    def drawn_layer_bytes(self) -> list[tuple[float, float]]:
        """(K, V) heights drawn per layer (what tests compare with the record)."""
        k = self._k_used.opts.get("height")
        v = self._v_used.opts.get("height")
        if k is None or v is None:
            return []
        return [(float(a), float(b)) for a, b in zip(k, v, strict=True)]
