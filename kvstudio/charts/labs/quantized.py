"""The quantized-cache lab's view: what fewer bytes per number cost in logits.

Owns `QuantizedCacheView`: max |Δlogit| per step for the fp16, int8 and int4
caches next to the bytes each cache stores (scales included), with a table of
bytes, formula, the first divergent step and whether the answer changed.
Exports get a headline (bytes and × smaller per kind, max |Δlogit|, first
divergent step) and data tables written from the result record: the drift as
measured (not its log10) per step, the bytes per kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject

from kvstudio.charts.chart_data import DataTable, Series, table_at
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    marked_line,
    name_plot,
    plots_in_a_row,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.names import format_bytes
from kvstudio.charts.plots.results_table import ByteCount

if TYPE_CHECKING:
    from kvstudio.labs.cache import quantized as lab
else:
    lab = LazyModule("kvstudio.labs.cache.quantized")  # torch loads when the lab first runs

KINDS = ("fp16", "int8", "int4")
BAR_HEADROOM = 1.3  # the bytes axis runs this far past the tallest bar: room for its number


class QuantizedCacheView(LabView):
    key = "quantized"
    draw_while_running = False

    def result_type(self) -> type:
        return lab.QuantLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget, (self.drift_plot, self.bytes_plot) = plots_in_a_row(2)
        grid_and_legend(self.drift_plot)
        self.drift_plot.setLogMode(y=True)
        self.bytes_plot.showGrid(x=False, y=True, alpha=0.2)
        self._drift = {kind: marked_line(self.drift_plot, series_colour(i + 1), "o", 4, width=2.5)
                       for i, kind in enumerate(KINDS)}
        self._bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush=series_colour(0))
        self.bytes_plot.addItem(self._bars)
        self._bar_labels: list[pg.TextItem] = []
        self.add_chart("quantized-cache", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.drift_plot, self.tr("max |Δlogit| per step (log)"), self.tr("step"),
                  self.tr("max |Δlogit|"))
        self.bytes_plot.setTitle(self.tr("Cache bytes at the end"), color="#222")
        self.bytes_plot.setLabel("left", self.tr("KiB"))
        fill_legend(self.drift_plot, [(self._drift[kind], kind) for kind in KINDS])
        self.show_result(self.result)

    def clear(self) -> None:
        for line in self._drift.values():
            line.setData([], [])
        self._bars.setOpts(x=[], height=[])
        for label in self._bar_labels:
            self.bytes_plot.removeItem(label)
        self._bar_labels = []
        self.table.set_rows([], [])

    def draw_result(self, result: lab.QuantLabResult) -> None:
        self.clear()
        for run in result.runs:
            diffs = np.maximum(np.asarray(run.max_abs_logit_diff, dtype=float), 1e-7)
            self._drift[run.kind].setData(np.arange(len(diffs), dtype=float), diffs)
        ref = result.reference
        names = [f"fp{ref.bits}", *(run.kind for run in result.runs)]
        sizes = [ref.cache_bytes / 1024, *(run.cache_bytes / 1024 for run in result.runs)]
        self._bars.setOpts(x=np.arange(len(sizes), dtype=float), height=sizes)
        self.bytes_plot.getAxis("bottom").setTicks([list(enumerate(names))])
        # Room above the tallest bar for its number (auto-range put the bar's top at the
        # plot's, and cut "5.0" above it on a slide and in the presenter view).
        self.bytes_plot.setYRange(0, max(sizes) * BAR_HEADROOM, padding=0)
        for i, size in enumerate(sizes):
            label = pg.TextItem(f"{size:,.1f}", color="#222", anchor=(0.5, 1.0))
            label.setPos(i, size)
            self.bytes_plot.addItem(label)
            self._bar_labels.append(label)
        rows: list[tuple[Any, ...]] = [
            (f"fp{ref.bits}", ByteCount(ref.cache_bytes), ref.formula_bytes, 1.0, 0.0, "—", False)
        ]
        for run in result.runs:
            step = "—" if run.first_divergent_step is None else run.first_divergent_step
            rows.append((run.kind, ByteCount(run.cache_bytes), run.formula_bytes,
                         ref.cache_bytes / max(run.cache_bytes, 1), run.max_logit_diff, step,
                         run.answer_changed))
        self.table.set_rows(
            [self.tr("cache"), self.tr("bytes (measured)"), self.tr("bytes (formula)"),
             self.tr("× smaller"), self.tr("max |Δlogit|"), self.tr("first divergent step"),
             self.tr("answer changed")],
            rows,
        )

    def headline_of(self, result: lab.QuantLabResult) -> str:
        ref = result.reference
        sizes = [f"fp{ref.bits} {format_bytes(ref.cache_bytes)}"]
        smaller, drifts, steps = [], [], []
        for run in result.runs:
            sizes.append(f"{run.kind} {format_bytes(run.cache_bytes)}")
            smaller.append(f"{run.kind} {ref.cache_bytes / max(run.cache_bytes, 1):.1f}×")
            drifts.append(f"{run.kind} {run.max_logit_diff:.3g}")
            steps.append(f"{run.kind} " + (self.tr("none") if run.first_divergent_step is None
                                           else str(run.first_divergent_step)))
        return "\n".join((
            self.tr("KV cache after {0} + {1} tokens, greedy: ").format(
                result.prompt_tokens, result.new_tokens) + " · ".join(sizes),
            self.tr("smaller than fp{0}: ").format(ref.bits) + " · ".join(smaller),
            self.tr("max |Δlogit|: ") + " · ".join(drifts) + "; "
            + self.tr("first divergent step: ") + " · ".join(steps),
        ))

    def tables_of(self, result: lab.QuantLabResult) -> list[DataTable]:
        drift = tuple(
            Series(self.tr("{0}: max |Δlogit|").format(run.kind),
                   tuple(range(len(run.max_abs_logit_diff))), tuple(run.max_abs_logit_diff))
            for run in result.runs
        )
        ref = result.reference
        every = (ref, *result.runs)
        return [
            DataTable(self.tr("max |Δlogit| per step"), self.tr("step"), drift),
            table_at(self.tr("Cache bytes at the end"), self.tr("cache"),
                     [f"fp{ref.bits}" if run is ref else run.kind for run in every], [
                (self.tr("bytes (measured, B)"), [run.cache_bytes for run in every]),
                (self.tr("bytes (formula, B)"), [run.formula_bytes for run in every]),
                (self.tr("bits per number"), [run.bits for run in every]),
                (self.tr("× smaller"), [ref.cache_bytes / max(run.cache_bytes, 1)
                                        for run in every]),
            ]),
        ]

    def numbers_of(self, result: lab.QuantLabResult) -> dict[str, Any]:
        return {
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "reference_bytes": result.reference.cache_bytes,
            "runs": {
                run.kind: {
                    "bytes": run.cache_bytes,
                    "formula_bytes": run.formula_bytes,
                    "max_abs_logit_diff": list(run.max_abs_logit_diff),
                    "first_divergent_step": run.first_divergent_step,
                    "answer_changed": run.answer_changed,
                }
                for run in result.runs
            },
        }
