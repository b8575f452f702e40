"""The serving lab's view: what the requests did step by step, and why batching pays.

Owns `ServingView` (its words and tables for slides are `ServingExports`,
``exports.py``; the timeline's axis and colours, ``timeline.py``; where the plots sit,
in rows on a tall page and in columns on a wide one, ``grid.py``). It draws from
the records of ``kvstudio.labs.serving.lab.run`` (the requests under one
scheduler, then the batch sweep):

- a timeline, requests × steps, each cell coloured by what the request did
  (waiting, prefill chunk, decode, idle row, preempted, finished);
- tokens fed per step, prefill, decode and padding stacked;
- the pool's blocks per step: held by requests, held only by the prefix cache, free;
- the batch sweep: decode step time against batch size beside the machine's memory
  and compute floors, and the throughput.

Its two tables: the requests (prompt tokens, prefix hits, TTFT, inter-token latency
p50/p95, answer tokens, the same tokens as its solo run and the largest |Δlogit|
against it: float32 rounding, since a batch's products round a row differently)
and the sweep's (`sweep_table`, which the window puts below the first and hides, as
the first, when its part did not run).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.labs.base import fill_legend, grid_and_legend, name_plot, series_colour
from kvstudio.charts.labs.serving.exports import ServingExports
from kvstudio.charts.labs.serving.grid import ServingChart
from kvstudio.charts.labs.serving.timeline import (
    BAR_WIDTH,
    CACHED_BLOCKS_COLOUR,
    DECODE_COLOUR,
    FREE_BLOCKS_COLOUR,
    PADDING_COLOUR,
    PHASE_COLOURS,
    PREFILL_COLOUR,
    REQUEST_BLOCKS_COLOUR,
    RequestAxis,
    stack_layer,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.empty import EmptyChart
from kvstudio.charts.plots.results_table import ResultsTable

if TYPE_CHECKING:
    from kvstudio.labs.serving import batching
else:  # torch loads when the lab first runs
    batching = LazyModule("kvstudio.labs.serving.batching")


SWEEP_X_MARGIN = 0.5  # of a doubling, either side of the batch sizes on the sweep's plots


def _medians_with_range(plot: pg.PlotItem) -> tuple[pg.PlotDataItem, pg.ErrorBarItem]:
    """On `plot` (the batch sweep's two): an empty line of medians with a dot at each, and
    error bars for the range from the fastest to the slowest round."""
    measured = series_colour(0)
    line = plot.plot([], [], pen=pg.mkPen(measured, width=2.5), symbol="o", symbolSize=7,
                     symbolBrush=measured, symbolPen="w")
    spread = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), pen=pg.mkPen(measured, width=1.5),
                             beam=0.12)
    plot.addItem(spread)
    return line, spread


class ServingView(ServingExports):
    key = "serving"
    draw_while_running = False  # every step is timed; the charts are drawn from the result

    def result_type(self) -> type:
        return batching.ServingLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Rows under one another on a tall page, columns on a wide one (``grid.py``).
        self.layout_widget = ServingChart()
        self.layout_widget.setBackground("w")
        self.grid = self.layout_widget.ci
        self._request_axis = RequestAxis("left")
        self.timeline_plot = pg.PlotItem(axisItems={"left": self._request_axis})
        self.tokens_plot = pg.PlotItem()
        self.blocks_plot = pg.PlotItem()
        self.time_plot = pg.PlotItem()
        self.throughput_plot = pg.PlotItem()
        self.grid.place(self.plots())
        grid_and_legend(*self.plots())
        self.timeline_plot.invertY(True)
        self._phase_bars = {
            phase: pg.BarGraphItem(x0=[], y0=[], width=[], height=[], brush=colour,
                                   pen=pg.mkPen(None))
            for phase, colour in PHASE_COLOURS.items()
        }
        for bars in self._phase_bars.values():
            self.timeline_plot.addItem(bars)
        self._fed_bars = {
            key: pg.BarGraphItem(x=[], y0=[], height=[], width=BAR_WIDTH, brush=colour,
                                 pen=pg.mkPen(None))
            for key, colour in (("prefill", PREFILL_COLOUR), ("decode", DECODE_COLOUR),
                                ("padding", PADDING_COLOUR))
        }
        for bars in self._fed_bars.values():
            self.tokens_plot.addItem(bars)
        self._block_bars = {
            key: pg.BarGraphItem(x=[], y0=[], height=[], width=BAR_WIDTH, brush=colour,
                                 pen=pg.mkPen(None))
            for key, colour in (("requests", REQUEST_BLOCKS_COLOUR),
                                ("cached", CACHED_BLOCKS_COLOUR), ("free", FREE_BLOCKS_COLOUR))
        }
        for bars in self._block_bars.values():
            self.blocks_plot.addItem(bars)
        self._step_line, self._step_range = _medians_with_range(self.time_plot)
        self._memory_floor = self.time_plot.plot(
            [], [], pen=pg.mkPen(series_colour(1), width=2, style=Qt.PenStyle.DashLine))
        self._compute_floor = self.time_plot.plot(
            [], [], pen=pg.mkPen(series_colour(2), width=2, style=Qt.PenStyle.DotLine))
        self._throughput_line, self._throughput_range = _medians_with_range(self.throughput_plot)
        self.add_chart("serving", self.layout_widget)
        # After a run that left one part out (no batch sizes, say), that part's plots say so.
        self._part_empty = {plot: EmptyChart(plot) for plot in self.plots()}
        self.sweep_table = ResultsTable()
        self.retranslate()

    def plots(self) -> tuple[pg.PlotItem, ...]:
        return (self.timeline_plot, self.tokens_plot, self.blocks_plot, self.time_plot,
                self.throughput_plot)

    def empty_hint(self) -> str:
        return self.tr("Press Run to serve the requests and sweep the batch sizes.")

    # ---- text ---------------------------------------------------------------------------
    def retranslate(self) -> None:
        super().retranslate()
        step, batch = self.tr("scheduler step"), self.tr("batch size (rows)")
        name_plot(self.timeline_plot, self.tr("What each request did, step by step"), step,
                  self.tr("request"))
        # Short axis titles: a slide's plots are low.
        name_plot(self.tokens_plot, self.tr("Tokens fed per step"), step, self.tr("tokens"))
        name_plot(self.blocks_plot, self.tr("Cache blocks per step"), step, self.tr("blocks"))
        name_plot(self.time_plot, self.tr("Decode step time against batch size"), batch,
                  self.tr("ms per step"))
        name_plot(self.throughput_plot, self.tr("Throughput against batch size"), batch,
                  self.tr("tokens/s"))
        self._fill_legends()
        self.show_result(self.result)

    def _fill_legends(self) -> None:
        fill_legend(self.timeline_plot, [(self._phase_bars[phase], name)
                                         for phase, name in self._phase_names().items()])
        fill_legend(self.tokens_plot, [
            (self._fed_bars["prefill"], self.tr("prefill")),
            (self._fed_bars["decode"], self.tr("decode")),
            (self._fed_bars["padding"], self.tr("padding and idle rows"))])
        fill_legend(self.blocks_plot, [
            (self._block_bars["requests"], self.tr("held by requests")),
            (self._block_bars["cached"], self.tr("prefix cache only")),
            (self._block_bars["free"], self.tr("free"))])
        fill_legend(self.time_plot, [
            (self._step_line, self.tr("measured (median, min–max)")),
            (self._memory_floor, self.tr("memory floor: bytes ÷ copy speed")),
            (self._compute_floor, self.tr("compute floor: FLOPs ÷ matmul speed"))])
        fill_legend(self.throughput_plot, [
            (self._throughput_line, self.tr("new tokens per second"))])

    # ---- drawing ------------------------------------------------------------------------
    def clear(self) -> None:
        for bars in self._phase_bars.values():
            bars.setOpts(x0=[], y0=[], width=[], height=[])
        for group in (self._fed_bars, self._block_bars):
            for bars in group.values():
                bars.setOpts(x=[], y0=[], height=[])
        for line in (self._step_line, self._memory_floor, self._compute_floor,
                     self._throughput_line):
            line.setData([], [])
        for bars in (self._step_range, self._throughput_range):
            bars.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        self.table.set_rows([], [])
        self.sweep_table.set_rows([], [])
        for part in self._part_empty.values():
            part.set_empty(False)

    def draw_result(self, result: batching.ServingLabResult) -> None:
        self.clear()
        run = self.shown_run()
        if run is not None and result.serving is not None:
            self._draw_run(run)
            self.table.set_rows(*self.request_rows(run, result.serving.repeats))
        sweep = result.sweep
        if sweep is not None:
            self._draw_sweep(sweep)
            self.sweep_table.set_rows(*self.sweep_rows(sweep))
        for plot in self.plots()[:3]:
            self._part_empty[plot].set_empty(
                run is None, self.tr("The requests run on KV Studio's own models; this model "
                                     "ran the batch sweep only."))
        for plot in self.plots()[3:]:
            self._part_empty[plot].set_empty(
                sweep is None, self.tr("No batch sizes given: type some, e.g. 1, 2, 4, 8."))

    def _draw_run(self, run: Any) -> None:
        cells: dict[str, list[tuple[int, int]]] = {phase: [] for phase in PHASE_COLOURS}
        for step in run.steps:
            for request in step.requests:
                if request.phase in cells:
                    cells[request.phase].append((step.step, request.request))
        height = BAR_WIDTH
        for phase, bars in self._phase_bars.items():
            data = np.asarray(cells[phase], dtype=float).reshape(-1, 2)
            bars.setOpts(x0=data[:, 0], y0=data[:, 1] - height / 2,
                         width=np.ones(len(data)), height=np.full(len(data), height))
        requests = len(run.outcomes)
        self._request_axis.set_rows(requests)
        self.timeline_plot.setYRange(-0.8, requests - 0.2, padding=0)
        steps = np.asarray([s.step for s in run.steps], dtype=float)
        prefill = np.asarray([s.prefill_tokens for s in run.steps], dtype=float)
        decode = np.asarray([s.decode_tokens for s in run.steps], dtype=float)
        padding = np.asarray([s.padding_slots for s in run.steps], dtype=float)
        stacked = ((self._fed_bars["prefill"], np.zeros_like(prefill), prefill),
                   (self._fed_bars["decode"], prefill, decode),
                   (self._fed_bars["padding"], prefill + decode, padding))
        for bars, bottom, size in stacked:
            stack_layer(bars, steps, bottom, size)
        cached = np.asarray([s.blocks_cached for s in run.steps], dtype=float)
        used = np.asarray([s.blocks_used for s in run.steps], dtype=float) - cached
        free = np.asarray([s.blocks_free for s in run.steps], dtype=float)
        for bars, bottom, size in ((self._block_bars["requests"], np.zeros_like(used), used),
                                   (self._block_bars["cached"], used, cached),
                                   (self._block_bars["free"], used + cached, free)):
            stack_layer(bars, steps, bottom, size)

    def _draw_sweep(self, sweep: batching.BatchSweepResult) -> None:
        points = sweep.points
        x = np.log2(np.asarray([p.batch for p in points], dtype=float))
        ticks = [[(math.log2(p.batch), f"{p.batch}") for p in points]]
        for plot in (self.time_plot, self.throughput_plot):
            plot.getAxis("bottom").setTicks(ticks)
            if len(x):  # room for the end ticks' labels: pyqtgraph drops one ("32") that
                # crosses the axis's end, as on the presenter's narrower plots beside a legend
                plot.setXRange(float(x.min()) - SWEEP_X_MARGIN, float(x.max()) + SWEEP_X_MARGIN,
                               padding=0)
        ms = np.asarray([p.ms_per_step for p in points])
        low = np.asarray([1000.0 * p.step_seconds.low for p in points])
        high = np.asarray([1000.0 * p.step_seconds.high for p in points])
        self._step_line.setData(x, ms)
        self._step_range.setData(x=x, y=ms, top=high - ms, bottom=ms - low)
        if sweep.peaks is not None:
            self._memory_floor.setData(
                x, np.asarray([1000.0 * (p.memory_seconds or 0.0) for p in points]))
            self._compute_floor.setData(
                x, np.asarray([1000.0 * (p.compute_seconds or 0.0) for p in points]))
        tps = np.asarray([p.tokens_per_second for p in points])
        fastest = np.asarray([p.batch / p.step_seconds.low for p in points])
        slowest = np.asarray([p.batch / p.step_seconds.high for p in points])
        self._throughput_line.setData(x, tps)
        self._throughput_range.setData(x=x, y=tps, top=fastest - tps, bottom=tps - slowest)

    def numbers_of(self, result: batching.ServingLabResult) -> dict[str, Any]:
        return batching.lab_numbers(result, self.shown_run())

    def table_values(self) -> list[dict[str, Any]]:
        """Both tables for the slide pack's CSV: the requests, then the sweep."""
        return self.table.values() + self.sweep_table.values()
