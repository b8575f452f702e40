"""The paged-cache lab's view: the bytes each cache holds, and the paged block tables.

Owns `PagedCacheView`: the bytes a preallocated, a dynamic and a paged cache
hold per step next to the paged cache's block tables at one step (`show_step`;
the last by default): one row per sample, one box per block, filled as far as
the block holds tokens, shared blocks in their own colour. Exports get a
headline with the bytes each way holds at the end and data tables written from
the result record (real steps and rows as x, bytes in bytes). The memory plot's
KiB axis writes the 0 at its foot (`FootLabelAxis`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from kvstudio.charts.chart_data import DataTable, Series, table_at
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    name_plot,
    plots_in_a_row,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.names import format_bytes
from kvstudio.charts.plots.results_table import ByteCount

if TYPE_CHECKING:
    from kvstudio.labs.cache import paged as lab
else:
    lab = LazyModule("kvstudio.labs.cache.paged")  # torch loads when the lab first runs

SHARED_COLOUR, OWN_COLOUR, EMPTY_COLOUR = "#D55E00", "#0072B2", "#E6E6E6"


class FootLabelAxis(pg.AxisItem):
    """A y axis that writes the tick labels at the ends of its range: the 0 at its foot.

    pyqtgraph draws a tick label only inside the axis' bounding rect. Without a grid
    that rect reaches 15 px past the axis' ends; with one (the memory plot's light
    grid) it is the axis and the plot, and no further, so the 0 of a range that starts
    at 0, centred on the plot's bottom edge, reached half a line below it and was not
    drawn (in the window and on the slides). Here the rect reaches past both ends by
    half a tick label's line and a pixel, at least those 15 px.
    """

    def boundingRect(self) -> QRectF:
        rect = super().boundingRect()
        if self.grid is False:
            return rect
        font = self.style["tickFont"]
        reach = max(15.0, QFontMetricsF(font if font is not None else QFont()).height() / 2 + 1)
        return rect.adjusted(0.0, -reach, 0.0, reach)


class PagedCacheView(LabView):
    key = "paged"
    draw_while_running = False

    def result_type(self) -> type:
        return lab.PagedLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step = -1  # the step whose block tables are drawn (an index; -1: the last)
        self._table_ticks: dict[str, Any] = {}  # side: the fixed ticks set last (None: none)
        self.layout_widget, (self.bytes_plot, self.table_plot) = plots_in_a_row(2)
        self.bytes_plot.setAxisItems({"left": FootLabelAxis("left")})
        grid_and_legend(self.bytes_plot)
        self.table_plot.invertY(True)
        add_legend_row(self.table_plot)
        self._lines = {
            "static": self.bytes_plot.plot([], [], pen=pg.mkPen(series_colour(0), width=2.5)),
            "dynamic": self.bytes_plot.plot([], [], pen=pg.mkPen(series_colour(1), width=2.5)),
            "paged": self.bytes_plot.plot([], [], pen=pg.mkPen(series_colour(2), width=2.5)),
            "paged-used": self.bytes_plot.plot(
                [], [], pen=pg.mkPen(series_colour(2), width=2, style=Qt.PenStyle.DashLine)
            ),
        }
        self._capacity = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=EMPTY_COLOUR)
        self._own = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=OWN_COLOUR)
        self._shared = pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=SHARED_COLOUR)
        for item in (self._capacity, self._own, self._shared):
            self.table_plot.addItem(item)
        self.add_chart("paged-cache", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.bytes_plot, self.tr("Memory held per step"), self.tr("step"),
                  self.tr("KiB"))
        self.table_plot.setLabel("bottom", self.tr("block (in the row's table)"))
        self.table_plot.setLabel("left", self.tr("sample (row)"))
        fill_legend(self.bytes_plot, [
            (self._lines["static"], self.tr("preallocated (P + N per row)")),
            (self._lines["dynamic"], self.tr("dynamic")),
            (self._lines["paged"], self.tr("paged: blocks held")),
            (self._lines["paged-used"], self.tr("paged: slots with tokens"))])
        fill_legend(self.table_plot, [(self._shared, self.tr("shared block")),
                                      (self._own, self.tr("own block")),
                                      (self._capacity, self.tr("empty slots"))])
        if isinstance(self.result, lab.PagedLabResult):
            self._draw(self.result)

    def clear(self) -> None:
        for line in self._lines.values():
            line.setData([], [])
        for item in (self._capacity, self._own, self._shared):
            item.setOpts(x0=[], y0=[], width=[], height=[])
        self.step = -1
        self.table.set_rows([], [])
        self._set_table_ticks({"bottom": None, "left": None})

    def _set_table_ticks(self, ticks: dict[str, list[list[tuple[float, str]]] | None]) -> None:
        """Fix the block tables' ticks per axis side (None: pyqtgraph's own again).

        Only ticks this view set are replaced: an empty chart's blank ticks (no values
        before the first result) stay.
        """
        for side, levels in ticks.items():
            axis = self.table_plot.getAxis(side)
            if levels is None and axis._tickLevels is not self._table_ticks.get(side):
                continue
            axis.setTicks(levels)
            self._table_ticks[side] = levels

    def draw_result(self, result: lab.PagedLabResult) -> None:
        """A new result: its charts and table, the block tables at its last step."""
        self.step = len(result.paged_steps) - 1
        self._draw(result)

    def show_step(self, index: int) -> None:
        """Draw the block tables after step `index` (the window's slider)."""
        self.step = index
        self._draw_table()

    def step_count(self) -> int:
        """How many steps the result has block tables for (0: no result)."""
        result = self.finished()
        return 0 if result is None else len(result.paged_steps)

    def _draw(self, result: lab.PagedLabResult) -> None:
        series = {
            "static": result.static_bytes,
            "dynamic": result.dynamic_bytes,
            "paged": result.paged_bytes,
            "paged-used": tuple(s.used_bytes for s in result.paged_steps),
        }
        for key, values in series.items():
            steps = np.arange(len(values), dtype=float)
            self._lines[key].setData(steps, np.asarray(values, dtype=float) / 1024)
        top = max((max(values, default=0) for values in series.values()), default=0) / 1024
        self.bytes_plot.setYRange(0, max(top, 1.0) * 1.35, padding=0)  # room for the legend
        widest = max((len(row) for s in result.paged_steps for row in s.table), default=0)
        samples = max((len(s.table) for s in result.paged_steps), default=0)
        self._set_table_ticks({
            "bottom": [[(j + 0.5, str(j)) for j in range(widest)]],
            # One tick per row, at its centre: pyqtgraph's own labelled half rows (−0.5, 0.5)
            "left": [[(r, str(r)) for r in range(samples)]]})
        self._draw_table()
        p, b, per = result.prompt_tokens, result.block_size, result.bytes_per_token
        dynamic_tokens = result.dynamic_bytes[-1] // (result.samples * per)
        rows: list[tuple[Any, ...]] = [
            (self.tr("preallocated"), ByteCount(result.static_bytes[-1]),
             f"{result.samples} × {p + result.new_tokens} × {per:,} B"),
            (self.tr("dynamic"), ByteCount(result.dynamic_bytes[-1]),
             f"{result.samples} × {dynamic_tokens} × {per:,} B"),
            (self.tr("paged: blocks held"), ByteCount(result.paged_bytes[-1]),
             self.tr("{0} blocks × {1:,} B").format(
                 result.paged_bytes[-1] // result.block_bytes, result.block_bytes)),
            (self.tr("paged: slots with tokens"), ByteCount(result.paged_steps[-1].used_bytes),
             self.tr("the rest is empty slots in last blocks")),
            (self.tr("hand count"),
             result.hand_count_blocks * result.block_bytes == result.paged_bytes[-1],
             self.tr("P//b = {0} shared + Σ(⌈len/b⌉ − {0}) = {1} blocks").format(
                 p // b, result.hand_count_blocks)),
            (self.tr("copies on write"), result.copies_on_write, ""),
            (self.tr("same samples in all three"), result.same_samples, ""),
            (self.tr("greedy: paged = dynamic"), result.greedy_identical,
             self.tr("{0} tokens").format(result.greedy_tokens)),
        ]
        self.table.set_rows([self.tr("cache"), self.tr("held (bytes)"), self.tr("how")], rows)

    def _draw_table(self) -> None:
        result = self.finished()
        if result is None or not result.paged_steps:
            return
        snapshot = result.paged_steps[self._step_index(result)]
        b = result.block_size
        cap_x: list[int] = []
        cap_y: list[int] = []
        own: list[tuple[int, int, float]] = []
        shared: list[tuple[int, int, float]] = []
        for r, row in enumerate(snapshot.table):
            for j, ref in enumerate(row):
                cap_x.append(j)
                cap_y.append(r)
                (shared if ref.shared else own).append((j, r, ref.tokens / b))
        height = 0.8
        self._capacity.setOpts(x0=np.asarray(cap_x, float) + 0.05,
                               y0=np.asarray(cap_y, float) - height / 2, width=0.9, height=height)
        for item, boxes in ((self._own, own), (self._shared, shared)):
            data = np.asarray(boxes, dtype=float).reshape(-1, 3)
            item.setOpts(x0=data[:, 0] + 0.05, y0=data[:, 1] - height / 2,
                         width=data[:, 2] * 0.9, height=height)
        self.table_plot.setTitle(self.tr("Block tables after step {0}: {1} blocks, {2}").format(
            snapshot.step, snapshot.held_bytes // max(result.block_bytes, 1),
            format_bytes(snapshot.held_bytes)), color="#222")

    def _step_index(self, result: lab.PagedLabResult) -> int:
        """The step the block-table view shows (`step`; -1: the last)."""
        last = len(result.paged_steps) - 1
        return last if self.step < 0 else max(0, min(self.step, last))

    def headline_of(self, result: lab.PagedLabResult) -> str:
        if not result.paged_steps:
            return ""
        static, dynamic = result.static_bytes[-1], result.dynamic_bytes[-1]
        paged = result.paged_bytes[-1]
        blocks = paged // max(result.block_bytes, 1)
        first = self.tr("{0} answers held at the end: preallocated {1} · dynamic {2} · "
                        "paged {3}").format(result.samples, format_bytes(static),
                                            format_bytes(dynamic), format_bytes(paged))
        second = self.tr("paged: {0} blocks of {1} tokens, shared prompt blocks: {2}, "
                         "copies on write: {3}").format(
            blocks, result.block_size, result.shared_prompt_blocks, result.copies_on_write)
        third = self.tr("paged holds {0:.1f}× less than preallocated · P = {1}, N = {2}, "
                        "{3:,} B per token").format(static / max(paged, 1), result.prompt_tokens,
                                                    result.new_tokens, result.bytes_per_token)
        return "\n".join((first, second, third))

    def tables_of(self, result: lab.PagedLabResult) -> list[DataTable]:
        if not result.paged_steps:
            return []
        steps = tuple(s.step for s in result.paged_steps)  # step 0 = the prefill
        memory = (
            Series(self.tr("preallocated (B)"), tuple(range(len(result.static_bytes))),
                   tuple(result.static_bytes)),
            Series(self.tr("dynamic (B)"), tuple(range(len(result.dynamic_bytes))),
                   tuple(result.dynamic_bytes)),
            Series(self.tr("paged: blocks held (B)"), steps, tuple(result.paged_bytes)),
            Series(self.tr("paged: slots with tokens (B)"), steps,
                   tuple(s.used_bytes for s in result.paged_steps)),
        )
        snapshot = result.paged_steps[self._step_index(result)]
        table = snapshot.table
        return [
            DataTable(self.tr("Memory held per step"), self.tr("step"), memory),
            table_at(self.tr("Block tables after step {0}").format(snapshot.step),
                     self.tr("sample (row)"), range(len(table)), [
                (self.tr("blocks held"), [len(row) for row in table]),
                (self.tr("shared blocks"), [sum(1 for ref in row if ref.shared) for row in table]),
                (self.tr("tokens stored"), [sum(ref.tokens for ref in row) for row in table]),
            ]),
        ]

    def numbers_of(self, result: lab.PagedLabResult) -> dict[str, Any]:
        return {
            "prompt_tokens": result.prompt_tokens,
            "samples": result.samples,
            "block_size": result.block_size,
            "static_bytes": list(result.static_bytes),
            "dynamic_bytes": list(result.dynamic_bytes),
            "paged_held_bytes": list(result.paged_bytes),
            "paged_used_bytes": [s.used_bytes for s in result.paged_steps],
            "row_lengths": list(result.row_lengths),
            "hand_count_blocks": result.hand_count_blocks,
            "copies_on_write": result.copies_on_write,
            "same_samples": result.same_samples,
            "greedy_identical": result.greedy_identical,
        }
