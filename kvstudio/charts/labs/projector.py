"""The scale projector's view: what the KV cache of a real model needs.

Owns `ProjectorView`: cache bytes against context length for the chosen batch,
with lines for common accelerator memory sizes and the model's weights, and a
table of what GQA, a 16- or 8-bit cache and a window change; for the loaded
model also the projection next to the bytes the real cache held. Exports get
a headline (bytes per token and the cache for the chosen context and batch
against GPU memory) and data tables written from the result record: context
length in tokens as x, bytes as y (the axis is log in x; the CSV holds the
token counts, not their log10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.chart_data import DataTable, table_at
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    marked_line,
    name_plot,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.end_values import EndValues
from kvstudio.charts.plots.plain_text import html_text
from kvstudio.labs import scale

if TYPE_CHECKING:
    from kvstudio.labs import projector as lab
else:
    lab = LazyModule("kvstudio.labs.projector")  # torch loads when the lab first runs


class ProjectorView(LabView):
    key = "projector"

    def result_type(self) -> type:
        return lab.ProjectorResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        grid_and_legend(self.plot)
        self.plot.setLogMode(x=True, y=False)
        self._cache = marked_line(self.plot, series_colour(0), "o", 6, width=3)
        self._cache8 = self.plot.plot([], [], pen=pg.mkPen(series_colour(0), width=2,
                                                            style=Qt.PenStyle.DashLine))
        self._weights = self.plot.plot([], [], pen=pg.mkPen(series_colour(1), width=2.5))
        self._gpu_lines: list[pg.PlotDataItem] = [
            self.plot.plot([], [], pen=pg.mkPen("#777", width=1.5, style=Qt.PenStyle.DotLine))
            for _ in scale.GPU_MEMORY_GIB
        ]
        self._gpu_labels: list[pg.TextItem] = []
        self._ends = EndValues(self.plot)  # what the cache lines reach, under a GPU line
        self.add_chart("projector", self.plot_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.plot, self.tr("KV cache for one batch vs context length"),
                  self.tr("context length (tokens, log scale)"), self.tr("GiB"))
        fill_legend(self.plot, [
            (self._cache, self.tr("KV cache")), (self._cache8, self.tr("KV cache, 8-bit")),
            (self._weights, self.tr("model weights")),
            (self._gpu_lines[0], self.tr("GPU memory (16 / 24 / 40 / 80 GiB)"))])
        self.show_result(self.result)

    def clear(self) -> None:
        for item in (self._cache, self._cache8, self._weights, *self._gpu_lines):
            item.setData([], [])
        self._ends.clear()
        for label in self._gpu_labels:
            self.plot.removeItem(label)
        self._gpu_labels = []
        self.table.set_rows([], [])

    def draw_result(self, result: lab.ProjectorResult) -> None:
        self.clear()
        g = result.geometry
        x = np.asarray(result.contexts, dtype=float)
        gib = float(scale.GIB)
        self._cache.setData(x, np.asarray(result.cache_bytes, dtype=float) / gib)
        self._cache8.setData(x, np.asarray(result.cache_bytes_8bit, dtype=float) / gib)
        ticks = [(float(np.log10(c)), _short_count(c)) for c in result.contexts]
        self.plot.getAxis("bottom").setTicks([ticks])
        ends = np.asarray([x[0], x[-1]])
        self._weights.setData(ends, np.full(2, g.weights_nbytes / gib))
        top = max(result.cache_bytes[-1] / gib, g.weights_nbytes / gib)
        highest = top
        # The GPU sizes the headline names must be on the chart: every size below the data,
        # and the smallest one that holds the chosen run with its weights (its first ✓).
        needed = (g.cache_bytes(result.context, result.batch, result.bits)
                  + g.weights_nbytes) / gib
        first_fit = min((s for s in scale.GPU_MEMORY_GIB if s >= needed), default=None)
        shown_up_to = max(top * 1.5, float(first_fit or 0), needed if first_fit is None else 0)
        for line, size in zip(self._gpu_lines, scale.GPU_MEMORY_GIB, strict=True):
            if size <= shown_up_to:
                highest = max(highest, float(size))
                line.setData(ends, np.full(2, float(size)))
                label = pg.TextItem(f"{size} GiB", color="#555", anchor=(0, 1))
                label.setPos(np.log10(x[0]), size)
                self.plot.addItem(label)
                self._gpu_labels.append(label)
        self.plot.setYRange(0, highest * 1.3, padding=0)  # the legend sits above every line
        self._ends.show([(self._cache, f"{result.cache_bytes[-1] / gib:.2f} GiB"),
                         (self._cache8, f"{result.cache_bytes_8bit[-1] / gib:.2f} GiB")])
        self.plot.setTitle(self.tr("{0}: KV cache for batch {1} vs context length").format(
            html_text(g.name), result.batch), color="#222")  # g.name: a config's folder, any text
        rows: list[tuple[Any, ...]] = [
            (self._variant_name(row.label), row.bytes_per_token, row.total_bytes / gib,
             (row.total_bytes + g.weights_nbytes) / gib)
            for row in result.rows
        ]
        rows.append((self.tr("weights ({0:,} parameters × {1} B)").format(
            g.parameters, g.weight_bytes), "", g.weights_nbytes / gib, ""))
        if result.check is not None:
            check = result.check
            rows.append((self.tr("real run: {0} rows × {1} tokens").format(check.batch,
                                                                          check.context),
                         check.equal, self.tr("measured {0:,} B").format(check.measured_bytes),
                         self.tr("projected {0:,} B").format(check.projected_bytes)))
        rows.append((self.tr("source"), "", g.source, ""))
        self.table.set_rows(
            [self.tr("what changes"), self.tr("bytes per token"),
             self.tr("cache ({0} × {1:,}), GiB").format(result.batch, result.context),
             self.tr("cache + weights, GiB")],
            rows,
        )

    def headline_of(self, result: lab.ProjectorResult) -> str:
        g = result.geometry
        per_token = g.bytes_per_token(result.bits)
        total = g.cache_bytes(result.context, result.batch, result.bits)
        first = self.tr("{0}: {1:,} B per token ({2}-bit) → {3} for batch {4} × {5:,} "
                        "tokens").format(g.name, per_token, result.bits,
                                         scale.human_bytes(total), result.batch, result.context)
        fits = " ".join(f"{gib} {'✓' if ok else '✗'}"
                        for gib, ok in scale.fits_in(total, g.weights_nbytes))
        second = self.tr("with the weights ({0}): {1}; fits in GPU memory (GiB): {2}").format(
            scale.human_bytes(g.weights_nbytes), scale.human_bytes(total + g.weights_nbytes),
            fits)
        lines = [first, second]
        if result.check is not None:
            check = result.check
            lines.append(self.tr("real run, {0} rows × {1} tokens: measured {2:,} B, "
                                 "projected {3:,} B").format(check.batch, check.context,
                                                             check.measured_bytes,
                                                             check.projected_bytes))
        return "\n".join(lines)

    def tables_of(self, result: lab.ProjectorResult) -> list[DataTable]:
        g, rows = result.geometry, result.rows
        return [
            table_at(self.tr("KV cache for batch {0} vs context length").format(result.batch),
                     self.tr("context length (tokens)"), result.contexts, [
                (self.tr("KV cache, {0}-bit (B)").format(result.bits), result.cache_bytes),
                (self.tr("KV cache, 8-bit (B)"), result.cache_bytes_8bit),
                (self.tr("model weights (B)"), [g.weights_nbytes for _ in result.contexts]),
            ]),
            table_at(self.tr("What changes at {0:,} tokens, batch {1}").format(
                result.context, result.batch), self.tr("what changes"),
                [self._variant_name(row.label) for row in rows], [
                (self.tr("bytes per token (B)"), [row.bytes_per_token for row in rows]),
                (self.tr("cache (B)"), [row.total_bytes for row in rows]),
                (self.tr("cache + weights (B)"), [row.total_bytes + g.weights_nbytes
                                                  for row in rows]),
            ]),
        ]

    def _variant_name(self, label: str) -> str:
        names = {
            "as configured": self.tr("as configured"),
            "without GQA (H_kv = H)": self.tr("without GQA (H_kv = H)"),
            "16-bit cache": self.tr("16-bit cache"),
            "8-bit cache (scales incl.)": self.tr("8-bit cache (scales included)"),
            "window W = 4096": self.tr("window W = 4096"),
            "without the window": self.tr("without the window"),
        }
        return names.get(label, label)

    def numbers_of(self, result: lab.ProjectorResult) -> dict[str, Any]:
        g = result.geometry
        out: dict[str, Any] = {
            "model": g.name,
            "source": g.source,
            "layers": g.layers,
            "kv_heads": g.kv_heads,
            "head_dim": g.head_dim,
            "bits": result.bits,
            "context": result.context,
            "batch": result.batch,
            "bytes_per_token": g.bytes_per_token(result.bits),
            "cache_bytes": g.cache_bytes(result.context, result.batch, result.bits),
            "weights_bytes": g.weights_nbytes,
            "variants": {r.label: r.total_bytes for r in result.rows},
        }
        if result.check is not None:
            out["check"] = {
                "measured_bytes": result.check.measured_bytes,
                "projected_bytes": result.check.projected_bytes,
            }
        return out


def _short_count(n: int) -> str:
    """512 → "512", 32768 → "32K", 1048576 → "1M" (tick labels)."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10}K"
    return str(n)
