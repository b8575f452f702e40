"""The cache-kinds lab's view: bytes per step and keys each new token attends to.

Owns `CacheKindsView`: per step, the bytes each cache holds (static: allocated
and used) and the attention mask's width (keys the newest query sees), then a
table with the final sizes and whether each kind chose the same tokens as the
dynamic cache (it must when the window covers the whole context).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    name_plot,
    plots_in_a_row,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.names import cache_kind_name
from kvstudio.charts.plots.results_table import ByteCount
from kvstudio.engine.cache.spec import CACHE_KINDS, CacheKind

if TYPE_CHECKING:
    from kvstudio.labs import common as lab_common
    from kvstudio.labs.cache import kinds as lab
else:
    lab_common = LazyModule("kvstudio.labs.common")  # torch loads when a lab first runs
    lab = LazyModule("kvstudio.labs.cache.kinds")  # torch loads when a lab first runs

KIND_COLOURS: dict[CacheKind, str] = {kind: series_colour(i) for i, kind in enumerate(CACHE_KINDS)}
HUNDRED = 100  # the course's figure: 100 cached tokens of the course model are 204,800 B


class CacheKindsView(LabView):
    key = "cache_kinds"

    def result_type(self) -> type:
        return lab.CacheKindsResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget, (self.bytes_plot, self.mask_plot) = plots_in_a_row(2)
        grid_and_legend(self.bytes_plot, self.mask_plot)
        self._bytes: dict[str, pg.PlotDataItem] = {}
        self._masks: dict[str, pg.PlotDataItem] = {}
        # Dynamic and static-used hold the same bytes, as do dynamic and static masks: the
        # dynamic line is drawn wide and underneath, the others narrower and dashed on top,
        # so both stay visible where they coincide.
        widths = {"dynamic": 9.0, "static": 2.5, "sliding": 2.5}
        for kind in CACHE_KINDS:
            colour = KIND_COLOURS[kind]
            style = Qt.PenStyle.SolidLine if kind == "dynamic" else Qt.PenStyle.DashLine
            pen = pg.mkPen(colour, width=widths[kind], style=style)
            self._bytes[kind] = self.bytes_plot.plot([], [], pen=pen)
            self._masks[kind] = self.mask_plot.plot([], [], pen=pen)
            z = -1 if kind == "dynamic" else 1
            self._bytes[kind].setZValue(z)
            self._masks[kind].setZValue(z)
        self._bytes["static-used"] = self.bytes_plot.plot([], [], pen=pg.mkPen(
            KIND_COLOURS["static"], width=2, style=Qt.PenStyle.DotLine))
        self._bytes["static-used"].setZValue(2)
        for plot in (self.bytes_plot, self.mask_plot):  # amounts: the axis starts at 0
            plot.getViewBox().setLimits(yMin=0)
        self._series: dict[str, list[tuple[float, float]]] = {}
        self.add_chart("cache-kinds", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.bytes_plot, self.tr("Cache memory per step"), self.tr("step"),
                  self.tr("KiB"))
        name_plot(self.mask_plot, self.tr("Keys each new token attends to"), self.tr("step"),
                  self.tr("keys (newest token)"))
        static = cache_kind_name("static")
        fill_legend(self.bytes_plot, [
            *((self._bytes[kind], self.tr("{0} (allocated)").format(static) if kind == "static"
               else cache_kind_name(kind)) for kind in CACHE_KINDS),
            (self._bytes["static-used"], self.tr("{0} (used)").format(static))])
        fill_legend(self.mask_plot, [(self._masks[kind], cache_kind_name(kind))
                                     for kind in CACHE_KINDS])

    def clear(self) -> None:
        self._series = {}
        for item in (*self._bytes.values(), *self._masks.values()):
            item.setData([], [])
        self.table.set_rows([], [])

    def show_progress(self, item: object) -> None:
        if not isinstance(item, lab_common.Progress) or item.record is None:
            return
        kind, record = item.stage, item.record
        if kind not in CACHE_KINDS:
            return
        self._append(f"bytes-{kind}", record.step, record.cache_allocated_bytes / 1024)
        width = record.attention_mask_shape[1]  # the newest query's keys (≤ W when sliding)
        self._append(f"mask-{kind}", record.step,
                     min(width, self.params["window"]) if kind == "sliding" else width)
        self._bytes[kind].setData(*self._xy(f"bytes-{kind}"))
        self._masks[kind].setData(*self._xy(f"mask-{kind}"))
        if kind == "static":
            self._append("bytes-static-used", record.step, record.cache_used_bytes / 1024)
            self._bytes["static-used"].setData(*self._xy("bytes-static-used"))

    def _append(self, key: str, x: float, y: float) -> None:
        self._series.setdefault(key, []).append((float(x), float(y)))

    def _xy(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        points = np.asarray(self._series.get(key, []), dtype=float).reshape(-1, 2)
        return points[:, 0], points[:, 1]

    def draw_result(self, result: lab.CacheKindsResult) -> None:
        for run in result.runs:
            steps = np.arange(len(run.allocated_bytes), dtype=float)
            self._bytes[run.kind].setData(steps, np.asarray(run.allocated_bytes) / 1024)
            self._masks[run.kind].setData(steps, np.asarray(run.newest_keys, dtype=float))
            if run.kind == "static":
                self._bytes["static-used"].setData(steps, np.asarray(run.used_bytes) / 1024)
        for plot in (self.bytes_plot, self.mask_plot):
            plot.enableAutoRange(y=True)
            top = plot.getViewBox().childrenBounds()[1]
            if top is not None:
                plot.setYRange(0, top[1] * 1.1, padding=0)
        rows: list[tuple[Any, ...]] = []
        for run in result.runs:
            divergent = result.first_divergent_step(run.kind)
            same: Any = True if divergent is None else self.tr("✗ from step {0}").format(divergent)
            rows.append((cache_kind_name(run.kind), ByteCount(run.allocated_bytes[-1]),
                         ByteCount(run.used_bytes[-1]), run.cache_length[-1],
                         run.mask_shapes[-1][1], same))
        covers = self.tr("W = {0} vs P + N − 1 = {1}").format(
            result.window, result.prompt_tokens + result.new_tokens - 1)
        rows.append((covers, "", "", "", "", result.window_covers_context))
        # Short headers: the table sits beside the chart and must fit without scrolling.
        self.table.set_rows(
            [self.tr("cache"), self.tr("allocated (bytes)"), self.tr("used (bytes)"),
             self.tr("tokens"), self.tr("keys seen"), self.tr("same as dynamic")],
            rows,
        )

    def status_of(self, result: lab.CacheKindsResult) -> str:
        return self.tr("The window W = {0} {1} the context P + N − 1 = {2}.").format(
            result.window,
            self.tr("covers") if result.window_covers_context else self.tr("is shorter than"),
            result.prompt_tokens + result.new_tokens - 1,
        )

    def headline_of(self, result: lab.CacheKindsResult) -> str:
        """The bytes a cached token costs, measured, then each kind's memory at the end."""
        parts = [self.tr("{0} {1:,} B").format(cache_kind_name(run.kind), run.allocated_bytes[-1])
                 for run in result.runs]
        kinds = self.tr("Cache memory after {0} steps: ").format(result.new_tokens) + " · ".join(
            parts)
        return "\n".join((self._per_token_text(result.run("dynamic")), kinds,
                          self.status_of(result) + " " + self.tr("P = {0}, N = {1}").format(
                              result.prompt_tokens, result.new_tokens)))

    def _per_token_text(self, dynamic: Any) -> str:
        """The dynamic cache's bytes at 100 tokens: measured when the run passed 100 tokens,
        else its measured bytes per token (what it held ÷ the tokens it held) × 100."""
        if HUNDRED in dynamic.cache_length:
            held = dynamic.used_bytes[dynamic.cache_length.index(HUNDRED)]
            return self.tr("Dynamic cache: {0} tokens hold {1:,} B, measured = {2:,} B a "
                           "token").format(HUNDRED, held, held // HUNDRED)
        tokens, held = dynamic.cache_length[-1], dynamic.used_bytes[-1]
        per_token = held // max(tokens, 1)
        return self.tr("Dynamic cache: {0} tokens hold {1:,} B, measured = {2:,} B a token; "
                       "{3} tokens: {4:,} B").format(tokens, held, per_token, HUNDRED,
                                                     HUNDRED * per_token)

    def tables_of(self, result: lab.CacheKindsResult) -> list[DataTable]:
        memory: list[Series] = []
        masks: list[Series] = []
        for run in result.runs:
            name = cache_kind_name(run.kind)
            steps = tuple(range(len(run.allocated_bytes)))
            memory.append(Series(self.tr("{0}: allocated (B)").format(name), steps,
                                 tuple(run.allocated_bytes)))
            if run.kind == "static":
                memory.append(Series(self.tr("{0}: used (B)").format(name), steps,
                                     tuple(run.used_bytes)))
            masks.append(Series(self.tr("{0}: keys each new token attends to").format(name),
                                steps, run.newest_keys))
        step = self.tr("step")
        return [DataTable(self.tr("Cache memory per step"), step, tuple(memory)),
                DataTable(self.tr("Keys each new token attends to"), step, tuple(masks))]

    def numbers_of(self, result: lab.CacheKindsResult) -> dict[str, Any]:
        return {
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "window": result.window,
            "window_covers_context": result.window_covers_context,
            "runs": {
                run.kind: {
                    "allocated_bytes": list(run.allocated_bytes),
                    "used_bytes": list(run.used_bytes),
                    "cache_length": list(run.cache_length),
                    "mask_shapes": [list(s) for s in run.mask_shapes],
                    "identical_to_dynamic": result.identical_to_dynamic(run.kind),
                }
                for run in result.runs
            },
        }
