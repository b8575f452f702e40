"""Lab: many users, one cache — requests served by a scheduler, and why batching pays.

Owns `ServingPanel` (its words and tables for slides are `ServingExports`,
``exports.py``; the timeline's axis and colours, ``timeline.py``): it runs
``labs.serving`` (the requests of a file, the shipped example or one the user
picks, with a shared system prompt, under one scheduler: policy, chunk, block
size, prefix cache, max batch) and then
``labs.serving.batching.batch_sweep`` (one decode step timed at several batch
sizes beside the bytes it reads and the FLOPs it computes), on the lab thread,
and draws from their records:

- a timeline, requests × steps, each cell coloured by what the request did
  (waiting, prefill chunk, decode, idle row, preempted, finished);
- tokens fed per step, prefill, decode and padding stacked;
- the pool's blocks per step: held by requests, held only by the prefix cache, free;
- the batch sweep: decode step time against batch size beside the machine's memory
  and compute floors, and the throughput.

The per-request table (prompt tokens, prefix hits, TTFT, inter-token latency p50/p95,
answer tokens, the same tokens as its solo run and the largest |Δlogit| against it:
float32 rounding, since a batch's products round a row differently) and the sweep's
table sit beside them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QWidget,
)

from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.empty import EmptyChart
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.charts.plots.results_table import ResultsTable
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.registry import SERVING
from kvstudio.ui.app.spin_boxes import param_int_box, param_line
from kvstudio.ui.labs.serving.exports import ServingExports
from kvstudio.ui.labs.serving.timeline import (
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
from kvstudio.ui.labs.shared.base import series_colour
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.engine.serving import records as serving_records
    from kvstudio.labs.serving import batching, lab
    from kvstudio.labs.serving import size as serving_size
else:  # torch loads when the lab first runs
    serving_records = LazyModule("kvstudio.engine.serving.records")
    lab = LazyModule("kvstudio.labs.serving.lab")
    batching = LazyModule("kvstudio.labs.serving.batching")
    serving_size = LazyModule("kvstudio.labs.serving.size")

POLICIES = ("continuous", "static")
PREFIX_MODES = ("none", "blocks", "radix")
DEFAULT_SWEEP = "1, 2, 4, 8, 16, 32"
def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """ "1, 2 4" → (1, 2, 4); empty → () (no sweep): read and bounded as every front reads
    them (the registry's ``batch_sizes``); a ValueError says how to write them."""
    try:
        return tuple(sorted(set(SERVING.param("batch_sizes").parse(text))))
    except ValueError as exc:  # the box's words, not the keyword's
        raise ValueError(str(exc).replace("batch_sizes", "batch sizes", 1)) from None


class ServingPanel(ServingExports):
    course_role = "paged"  # the chat model: the requests are questions (lab_models.py)
    draw_while_running = False  # every step is timed; the charts are drawn from the result

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.requests_file: Path | None = None  # None: the shipped example
        self.requests_box = QComboBox()
        self.requests_box.addItem("", None)
        self.choose_button = QPushButton()
        self.choose_button.clicked.connect(self._on_choose_clicked)
        requests_row = self._row(self.requests_box, self.choose_button)
        self.requests_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.system = param_line(SERVING.param("system"))
        self.policy = QComboBox()
        for policy in POLICIES:
            self.policy.addItem("", policy)
        self.chunk = param_int_box(SERVING.param("chunk"))  # 0 = no chunking
        self.block_size = param_int_box(SERVING.param("block_size"))
        self.prefix = QComboBox()
        for mode in PREFIX_MODES:
            self.prefix.addItem("", mode)
        self.max_batch = param_int_box(SERVING.param("max_batch"))
        self.answer_tokens = param_int_box(SERVING.param("answer_tokens"))
        self._labels = {key: plain_label() for key in
                        ("chunk", "block", "prefix", "batch", "answer", "rounds")}
        scheduler_row = self._row(
            self.policy, self._labels["chunk"], self.chunk, self._labels["block"],
            self.block_size, self._labels["prefix"], self.prefix, self._labels["batch"],
            self.max_batch)
        self.batch_sizes = param_line(SERVING.param("batch_sizes"))
        self.repeats = param_int_box(SERVING.param("repeats"))
        run_row = self._row(self._labels["answer"], self.answer_tokens, self._labels["rounds"],
                            self.repeats)
        self.policy.currentIndexChanged.connect(self._on_policy_changed)
        for key, widget in (("requests", requests_row), ("system", self.system),
                            ("scheduler", scheduler_row), ("run", run_row),
                            ("sweep", self.batch_sizes)):
            self.add_field(key, widget)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self._request_axis = RequestAxis("left")
        self.timeline_plot = self.view.addPlot(row=0, col=0, colspan=2,
                                               axisItems={"left": self._request_axis})
        self.tokens_plot = self.view.addPlot(row=1, col=0)
        self.blocks_plot = self.view.addPlot(row=1, col=1)
        self.time_plot = self.view.addPlot(row=2, col=0)
        self.throughput_plot = self.view.addPlot(row=2, col=1)
        self.view.ci.layout.setRowStretchFactor(0, 3)  # the timeline has a row per request
        for row in (1, 2):
            self.view.ci.layout.setRowStretchFactor(row, 2)
        for plot in self.plots():
            plot.showGrid(x=True, y=True, alpha=0.2)
            add_legend_row(plot)
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
        measured = series_colour(0)
        self._step_line = self.time_plot.plot(
            [], [], pen=pg.mkPen(measured, width=2.5), symbol="o", symbolSize=7,
            symbolBrush=measured, symbolPen="w")
        self._step_range = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0),
                                           pen=pg.mkPen(measured, width=1.5), beam=0.12)
        self.time_plot.addItem(self._step_range)
        self._memory_floor = self.time_plot.plot(
            [], [], pen=pg.mkPen(series_colour(1), width=2, style=Qt.PenStyle.DashLine))
        self._compute_floor = self.time_plot.plot(
            [], [], pen=pg.mkPen(series_colour(2), width=2, style=Qt.PenStyle.DotLine))
        self._throughput_line = self.throughput_plot.plot(
            [], [], pen=pg.mkPen(measured, width=2.5), symbol="o", symbolSize=7,
            symbolBrush=measured, symbolPen="w")
        self._throughput_range = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0),
                                                 pen=pg.mkPen(measured, width=1.5), beam=0.12)
        self.throughput_plot.addItem(self._throughput_range)
        self.add_chart("serving", self.view)
        # After a run that left one part out (no batch sizes, say), that part's plots say so.
        self._part_empty = {plot: EmptyChart(plot) for plot in self.plots()}

        self.sweep_table = ResultsTable()
        self.sweep_table.rows_changed.connect(self._fit_table_later.start)
        self.side_layout.addWidget(self.sweep_table, 1)
        self.retranslate()

    @staticmethod
    def _row(*widgets: QWidget) -> QWidget:
        host = QWidget()
        layout = QHBoxLayout(host)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget)
        layout.addStretch(1)
        return host

    def plots(self) -> tuple[pg.PlotItem, ...]:
        return (self.timeline_plot, self.tokens_plot, self.blocks_plot, self.time_plot,
                self.throughput_plot)

    def title(self) -> str:
        return self.tr("Serving")

    def empty_hint(self) -> str:
        return self.tr("Press Run to serve the requests and sweep the batch sizes.")

    # ---- text ---------------------------------------------------------------------------
    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(self.tr(
            "Several requests share one model and one pool of cache blocks. The scheduler "
            "decides each step which requests run: static batching pads a batch to its "
            "longest prompt and feeds finished rows until the last one ends; continuous "
            "batching lets requests join and leave every step (chunked prefill shares a "
            "token budget per step); a prefix cache serves a shared system prompt once. "
            "Every answer is checked against the same request run alone. Then one decode "
            "step is timed at each batch size: the weights are read once whatever the "
            "batch, so more rows cost little until the step is bound by compute."
        ))
        self.requests_box.setItemText(0, self.tr("the shipped example"))
        self.choose_button.setText(self.tr("Choose file…"))
        self.system.setPlaceholderText(self.tr("the example's system prompt"))
        self.policy.setItemText(0, self.tr("continuous batching"))
        self.policy.setItemText(1, self.tr("static batching"))
        self.chunk.setSpecialValueText(self.tr("off"))
        for index, mode in enumerate(PREFIX_MODES):
            self.prefix.setItemText(index, {
                "none": self.tr("off"), "blocks": self.tr("blocks (vLLM)"),
                "radix": self.tr("radix tree (SGLang)")}[mode])
        texts = {"chunk": self.tr("chunk"), "block": self.tr("block b"),
                 "prefix": self.tr("prefix cache"), "batch": self.tr("max batch"),
                 "answer": self.tr("answer tokens ≤"), "rounds": self.tr("rounds (median of)")}
        for key, label in self._labels.items():
            label.setText(texts[key])
        self.set_field_names({
            "requests": self.tr("Requests"),
            "system": self.tr("System prompt"),
            "scheduler": self.tr("Scheduler"),
            "run": self.tr("Answers and timing"),
            "sweep": self.tr("Batch sweep (sizes)"),
        })
        self.timeline_plot.setTitle(self.tr("What each request did, step by step"),
                                    color="#222")
        self.timeline_plot.setLabel("bottom", self.tr("scheduler step"))
        self.timeline_plot.setLabel("left", self.tr("request"))
        self.tokens_plot.setTitle(self.tr("Tokens fed per step"), color="#222")
        self.tokens_plot.setLabel("bottom", self.tr("scheduler step"))
        self.tokens_plot.setLabel("left", self.tr("tokens"))  # short: a slide's axis is low
        self.blocks_plot.setTitle(self.tr("Cache blocks per step"), color="#222")
        self.blocks_plot.setLabel("bottom", self.tr("scheduler step"))
        self.blocks_plot.setLabel("left", self.tr("blocks"))
        self.time_plot.setTitle(self.tr("Decode step time against batch size"), color="#222")
        self.time_plot.setLabel("bottom", self.tr("batch size (rows)"))
        self.time_plot.setLabel("left", self.tr("ms per step"))
        self.throughput_plot.setTitle(self.tr("Throughput against batch size"), color="#222")
        self.throughput_plot.setLabel("bottom", self.tr("batch size (rows)"))
        self.throughput_plot.setLabel("left", self.tr("tokens/s"))
        self._fill_legends()
        if self.result is not None:
            self.show_result(self.result)

    def _fill_legends(self) -> None:
        legend = self.timeline_plot.legend
        legend.clear()
        for phase, name in self._phase_names().items():
            legend.addItem(self._phase_bars[phase], name)
        fed = self.tokens_plot.legend
        fed.clear()
        fed.addItem(self._fed_bars["prefill"], self.tr("prefill"))
        fed.addItem(self._fed_bars["decode"], self.tr("decode"))
        fed.addItem(self._fed_bars["padding"], self.tr("padding and idle rows"))
        blocks = self.blocks_plot.legend
        blocks.clear()
        blocks.addItem(self._block_bars["requests"], self.tr("held by requests"))
        blocks.addItem(self._block_bars["cached"], self.tr("prefix cache only"))
        blocks.addItem(self._block_bars["free"], self.tr("free"))
        times = self.time_plot.legend
        times.clear()
        times.addItem(self._step_line, self.tr("measured (median, min–max)"))
        times.addItem(self._memory_floor, self.tr("memory floor: bytes ÷ copy speed"))
        times.addItem(self._compute_floor, self.tr("compute floor: FLOPs ÷ matmul speed"))
        throughput = self.throughput_plot.legend
        throughput.clear()
        throughput.addItem(self._throughput_line, self.tr("new tokens per second"))

    # ---- run ----------------------------------------------------------------------------
    def _on_choose_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Open a requests file"), "",
            self.tr("Text files (*.txt);;All files (*)"))
        if path:
            self.choose_requests(Path(path))

    def choose_requests(self, path: Path | None) -> None:
        """Use the requests in `path` (None: the shipped example)."""
        self.requests_file = path
        if path is None:
            self.requests_box.setCurrentIndex(0)
            return
        index = self.requests_box.findData(str(path))
        if index < 0:
            self.requests_box.addItem(path.name, str(path))
            index = self.requests_box.count() - 1
        self.requests_box.setCurrentIndex(index)

    def _chosen_file(self) -> Path | None:
        data = self.requests_box.currentData()
        return None if data is None else Path(data)

    def _on_policy_changed(self) -> None:
        static = self.policy.currentData() == "static"
        self.chunk.setEnabled(not static)  # chunked prefill is a continuous policy

    def scheduler_config(self) -> serving_records.SchedulerConfig:
        static = self.policy.currentData() == "static"
        chunk = self.chunk.value()
        return serving_records.SchedulerConfig(
            policy=self.policy.currentData(),
            max_batch=self.max_batch.value(),
            chunk=None if static or chunk == 0 else chunk,
            block_size=self.block_size.value(),
            prefix_cache=self.prefix.currentData(),
        )

    def make_job(self, model: LoadedModel) -> JobFactory:
        sizes = parse_batch_sizes(self.batch_sizes.text())
        if sizes:
            batching.check_batch_sizes(sizes)
        config = self.scheduler_config()
        path = self._chosen_file()
        system = self.system.text().strip() or None
        answer_tokens, repeats = self.answer_tokens.value(), self.repeats.value()
        backend, tokenizer = model.backend, model.tokenizer
        run: JobFactory | None = None
        if batching.runs_requests(backend):
            run = self._requests_job(model, path, system, config, answer_tokens, repeats)
        elif not sizes:
            raise ValueError(
                "The requests run on KV Studio's own models (ko-base, ko-chat, a model folder "
                "or a MiniMind .pth); give batch sizes to sweep this model.")

        def job() -> Any:
            sweep = (batching.batch_sweep(backend, tokenizer, batch_sizes=sizes, rounds=repeats)
                     if sizes else None)
            return batching.serving_lab(run() if run is not None else None, sweep)

        return job

    def _requests_job(self, model: LoadedModel, path: Path | None, system: str | None,
                      config: Any, answer_tokens: int, repeats: int) -> JobFactory:
        """The requests' run on `model`: read and checked here, so a bad file is one message
        before anything runs."""
        run = lab.serving
        backend, tokenizer = model.backend, model.tokenizer
        shared = lab.EXAMPLE_SYSTEM if system is None else system
        requests = lab.load_requests(
            lab.EXAMPLE_REQUESTS if path is None else path, tokenizer, backend,
            system=shared, max_new_tokens=answer_tokens)
        serving_size.check_size(requests, (config,), repeats, device=backend.device)
        return lambda: run(backend, tokenizer, requests, (config,), system=shared,
                           repeats=repeats)

    def clear_views(self) -> None:
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
        self.table.setVisible(True)
        self.sweep_table.setVisible(True)

    # ---- drawing ------------------------------------------------------------------------
    def show_result(self, result: object) -> None:
        if not isinstance(result, batching.ServingLabResult):
            return
        self.clear_views()
        run = self.shown_run()
        if run is not None:
            self._draw_run(run)
            self._fill_request_table(run, result.serving)
        sweep = result.sweep
        if sweep is not None:
            self._draw_sweep(sweep)
            self._fill_sweep_table(sweep)
        self.table.setVisible(run is not None)  # a part that did not run has no table
        self.sweep_table.setVisible(sweep is not None)
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

    def _fill_request_table(self, run: Any, serving: Any) -> None:
        self.table.set_rows(*self.request_rows(run, serving.repeats))

    def _fill_sweep_table(self, sweep: batching.BatchSweepResult) -> None:
        self.sweep_table.set_rows(*self.sweep_rows(sweep))

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, batching.ServingLabResult):
            return {}
        return batching.lab_numbers(result, self.shown_run())

    def table_values(self) -> list[dict[str, Any]]:
        """Both tables for the slide pack's CSV: the requests, then the sweep."""
        return self.table.values() + self.sweep_table.values()
