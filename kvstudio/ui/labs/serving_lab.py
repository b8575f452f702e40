"""Lab: many users, one cache — requests served by a scheduler, and why batching pays.

Owns `ServingPanel`: it runs ``labs.serving`` (the requests of a file, the shipped
example or one the user picks, with a shared system prompt, under one scheduler:
policy, chunk, block size, prefix cache, max batch) and then
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
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QWidget,
)

from kvstudio.labs.registry import SERVING
from kvstudio.ui.app.lazy import LazyModule
from kvstudio.ui.app.names import format_bytes
from kvstudio.ui.app.plain_text import plain_label
from kvstudio.ui.app.spin_boxes import param_int_box, param_line
from kvstudio.ui.labs.shared.base import LabPanel, series_colour
from kvstudio.ui.labs.shared.results_table import ResultsTable, gap_text
from kvstudio.ui.plots.chart_data import Cell, DataTable, Series
from kvstudio.ui.plots.empty import EmptyChart
from kvstudio.ui.plots.legend import add_legend_row
from kvstudio.ui.plots.sizing import MIN_PLOT_HEIGHT
from kvstudio.ui.run.engine_adapter import ModelHandle, split_number_list
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.engine.serving import records as serving_records
    from kvstudio.labs.common import Spread
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
ROW_LABEL_FILL = 0.9  # the most of the timeline's y axis its row labels may fill

# The timeline's colours (Okabe–Ito where it can); "future" cells are not drawn.
PHASE_COLOURS: dict[str, str] = {
    "waiting": "#B8B8B8",
    "prefill": "#E69F00",
    "decode": "#0072B2",
    "idle": "#CC79A7",
    "preempted": "#D55E00",
    "finished": "#CFE8DA",
}
PREFILL_COLOUR, DECODE_COLOUR, PADDING_COLOUR = "#E69F00", "#0072B2", "#CC79A7"
REQUEST_BLOCKS_COLOUR, CACHED_BLOCKS_COLOUR, FREE_BLOCKS_COLOUR = "#0072B2", "#009E73", "#DDDDDD"
BAR_WIDTH = 0.8


class RequestAxis(pg.AxisItem):
    """The timeline's y axis: a label "#r" on every request row, its view box kept tall
    enough for them in its tick font (a slide's is twice the window's).

    Even rows are always labelled, odd rows where there is room: pyqtgraph drops a second
    level once all its labels would fill `ROW_LABEL_FILL` of the axis (its own limit, 0.4
    with three labels drawn, dropped the odd rows on the slide), so many requests on a
    short axis still keep the even ones.
    """

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.rows = 0
        self.setStyle(textFillLimits=[(0, ROW_LABEL_FILL)])

    def set_rows(self, rows: int) -> None:
        self.rows = rows
        labels = [(r, f"#{r}") for r in range(rows)]
        self.setTicks([labels[::2], labels[1::2]])
        self.fit_rows()

    def setTickFont(self, font: QFont | None) -> None:  # (pyqtgraph's name)
        super().setTickFont(font)
        self.fit_rows()

    def fit_rows(self) -> None:
        """The view box's minimum height: every row's label (pyqtgraph counts 0.8 of a
        line each) within `ROW_LABEL_FILL` of the axis, and never under the usual minimum."""
        view = self.linkedView()
        if view is None:
            return
        font = self.style["tickFont"]
        line = QFontMetricsF(font if font is not None else QFont()).height()
        needed = math.ceil(self.rows * 0.8 * line / ROW_LABEL_FILL) + 2
        view.setMinimumHeight(max(MIN_PLOT_HEIGHT, needed))


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """ "1, 2 4" → (1, 2, 4); empty → () (no sweep); a ValueError says how to write them."""
    parts = split_number_list(text)
    try:
        values = tuple(int(p) for p in parts)
    except ValueError as exc:
        raise ValueError(
            f"Could not read the batch sizes {text!r}: write whole numbers separated by "
            "commas, e.g. 1, 2, 4, 8, 16, 32."
        ) from exc
    if values and min(values) < 1:
        raise ValueError("Batch sizes are at least 1, e.g. 1, 2, 4, 8, 16, 32.")
    return tuple(sorted(set(values)))


def _stack(bars: pg.BarGraphItem, x: np.ndarray, bottom: np.ndarray, size: np.ndarray) -> None:
    """One layer of stacked bars, only where it has height (a legend lists what is drawn)."""
    keep = size > 0
    bars.setOpts(x=x[keep], y0=bottom[keep], height=size[keep])


def _gap(gap: float | None) -> float | str:
    """A max |Δlogit| for the table and CSV ("—": not measured)."""
    return "—" if gap is None else gap


def _ms(spread: Spread | None) -> float | None:
    return None if spread is None else 1000.0 * spread.median


class ServingPanel(LabPanel):
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

    def _phase_names(self) -> dict[str, str]:
        return {
            "waiting": self.tr("waiting"), "prefill": self.tr("prefill chunk"),
            "decode": self.tr("decode"), "idle": self.tr("idle row (fed, no token)"),
            "preempted": self.tr("preempted"), "finished": self.tr("finished"),
        }

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

    def make_job(self, model: ModelHandle) -> JobFactory:
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

    def _requests_job(self, model: ModelHandle, path: Path | None, system: str | None,
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
    def shown_run(self) -> Any:
        """The scheduler run on screen (the last one asked for), or None."""
        result = self.result
        serving = getattr(result, "serving", None)
        return serving.runs[-1] if serving is not None and serving.runs else None

    def shown_sweep(self) -> Any:
        return getattr(self.result, "sweep", None)

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
            _stack(bars, steps, bottom, size)
        cached = np.asarray([s.blocks_cached for s in run.steps], dtype=float)
        used = np.asarray([s.blocks_used for s in run.steps], dtype=float) - cached
        free = np.asarray([s.blocks_free for s in run.steps], dtype=float)
        for bars, bottom, size in ((self._block_bars["requests"], np.zeros_like(used), used),
                                   (self._block_bars["cached"], used, cached),
                                   (self._block_bars["free"], used + cached, free)):
            _stack(bars, steps, bottom, size)

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

    def scheduler_text(self, config: Any) -> str:
        """The scheduler's settings in the window's language (`SchedulerConfig.label` is the
        CLI's English)."""
        parts = [self.tr("continuous batching") if config.policy == "continuous"
                 else self.tr("static batching")]
        if config.chunk is not None:
            parts.append(self.tr("chunk {0}").format(config.chunk))
        parts.append(self.tr("block b {0}").format(config.block_size))
        prefix = {"none": self.tr("off"), "blocks": self.tr("blocks (vLLM)"),
                  "radix": self.tr("radix tree (SGLang)")}[config.prefix_cache]
        parts.append(self.tr("prefix cache {0}").format(prefix))
        parts.append(self.tr("max batch {0}").format(config.max_batch))
        if config.block_budget is not None:
            parts.append(self.tr("budget {0} blocks").format(config.block_budget))
        return " · ".join(parts)

    def _times_note(self, count: int) -> str:
        return (self.tr("single measurement") if count == 1
                else self.tr("median of {0}").format(count))

    def _fill_request_table(self, run: Any, serving: Any) -> None:
        note = self._times_note(serving.repeats)
        headers = [
            self.tr("request"), self.tr("prompt tokens"), self.tr("prefix hits"),
            self.tr("TTFT (ms, {0})").format(note), self.tr("ITL p50 (ms)"),
            self.tr("ITL p95 (ms)"), self.tr("answer tokens"), self.tr("same tokens as solo"),
            self.tr("max |Δlogit| vs solo"),
        ]
        rows = []
        for outcome in run.outcomes:
            rows.append((
                f"#{outcome.request.index}", outcome.prompt_tokens, outcome.prefix_hit,
                _ms(outcome.ttft_s), _ms(outcome.itl_p50_s), _ms(outcome.itl_p95_s),
                outcome.answer_tokens, outcome.identical_to_solo,
                _gap(outcome.max_abs_logit_diff),
            ))
        self.table.set_rows(headers, rows)

    def _fill_sweep_table(self, sweep: batching.BatchSweepResult) -> None:
        note = self._times_note(sweep.rounds)
        headers = [
            self.tr("batch"), self.tr("ms per step ({0})").format(note), self.tr("tokens/s"),
            self.tr("read (MiB)"), self.tr("GFLOP"), self.tr("FLOP per byte"),
            self.tr("bound by"),
        ]
        rows = []
        for p in sweep.points:
            rows.append((p.batch, p.ms_per_step, p.tokens_per_second, p.bytes_read / 1024**2,
                         p.flops / 1e9, p.intensity, self._bound_name(p.bound)))
        self.sweep_table.set_rows(headers, rows)

    def _bound_name(self, bound: str | None) -> str:
        return {"memory": self.tr("memory"), "compute": self.tr("compute"),
                "overhead": self.tr("overhead")}.get(bound or "", "—")

    # ---- export -------------------------------------------------------------------------
    def headline(self) -> str:
        lines = []
        run = self.shown_run()
        serving = getattr(self.result, "serving", None)
        if run is not None and serving is not None:
            totals = run.totals
            same = sum(o.identical_to_solo for o in run.outcomes)
            lines.append(self.tr(
                "{0} requests in {1} steps: {2:,.0f} tokens/s ({3}) · wasted slots {4} "
                "(formula {5}) · peak {6} blocks, {7}").format(
                len(run.outcomes), totals.steps, totals.throughput_tps.median,
                self._times_note(totals.throughput_tps.count), totals.padding_slots,
                totals.padding_formula, totals.peak_blocks,
                format_bytes(totals.peak_cache_bytes)))
            lines.append(self.tr(
                "prefix hits {0} tokens · same tokens as solo runs: {1} of {2}, max |Δlogit| "
                "{3} · {4}").format(
                totals.prefix_hit_tokens, same, len(run.outcomes),
                gap_text(run.max_abs_logit_diff), self.scheduler_text(run.config)))
        sweep = self.shown_sweep()
        if sweep is not None and sweep.points:
            first, last = sweep.points[0], sweep.points[-1]
            # What bounds each step is the sweep table's last column: on the slide's third
            # line it ran past a 1920-pixel page in English and was cut off.
            lines.append(self.tr(
                "Decode step, batch {0} → {1}: {2:.2f} → {3:.2f} ms ({4}); throughput "
                "×{5:.1f}; weights read once: {6}").format(
                first.batch, last.batch, first.ms_per_step, last.ms_per_step,
                self._times_note(sweep.rounds), sweep.speedup,
                format_bytes(sweep.work.weight_bytes)))
        return "\n".join(lines)

    def data_tables(self) -> list[DataTable]:
        tables: list[DataTable] = []
        run = self.shown_run()
        if run is not None:
            steps: tuple[Cell, ...] = tuple(s.step for s in run.steps)
            # The CSV names a phase as the timeline's legend does (in the window's language).
            names = {"future": self.tr("not arrived yet"), **self._phase_names()}
            phases = tuple(
                Series(self.tr("request #{0}").format(outcome.request.index), steps,
                       tuple(names[s.requests[i].phase] for s in run.steps))
                for i, outcome in enumerate(run.outcomes))
            tables.append(DataTable(self.tr("What each request did, step by step"),
                                    self.tr("scheduler step"), phases))
            tables.append(DataTable(self.tr("Tokens fed per step"), self.tr("scheduler step"), (
                Series(self.tr("prefill tokens"), steps,
                       tuple(s.prefill_tokens for s in run.steps)),
                Series(self.tr("decode tokens"), steps,
                       tuple(s.decode_tokens for s in run.steps)),
                Series(self.tr("padding slots"), steps,
                       tuple(s.padding_slots for s in run.steps)),
                Series(self.tr("idle rows"), steps, tuple(s.idle_rows for s in run.steps)),
                Series(self.tr("rows in the batch"), steps,
                       tuple(s.batch_rows for s in run.steps)),
            )))
            tables.append(DataTable(self.tr("Cache blocks per step"), self.tr("scheduler step"), (
                Series(self.tr("blocks in use"), steps, tuple(s.blocks_used for s in run.steps)),
                Series(self.tr("prefix cache only"), steps,
                       tuple(s.blocks_cached for s in run.steps)),
                Series(self.tr("free blocks"), steps, tuple(s.blocks_free for s in run.steps)),
                Series(self.tr("cache bytes (B)"), steps,
                       tuple(s.cache_bytes for s in run.steps)),
            )))
            index: tuple[Cell, ...] = tuple(o.request.index for o in run.outcomes)
            tables.append(DataTable(self.tr("Requests"), self.tr("request"), (
                Series(self.tr("prompt tokens"), index,
                       tuple(o.prompt_tokens for o in run.outcomes)),
                Series(self.tr("prefix hits"), index, tuple(o.prefix_hit for o in run.outcomes)),
                Series(self.tr("TTFT (ms)"), index, tuple(_ms(o.ttft_s) for o in run.outcomes)),
                Series(self.tr("ITL p50 (ms)"), index,
                       tuple(_ms(o.itl_p50_s) for o in run.outcomes)),
                Series(self.tr("ITL p95 (ms)"), index,
                       tuple(_ms(o.itl_p95_s) for o in run.outcomes)),
                Series(self.tr("answer tokens"), index,
                       tuple(o.answer_tokens for o in run.outcomes)),
                Series(self.tr("same tokens as solo"), index,
                       tuple(int(o.identical_to_solo) for o in run.outcomes)),
                Series(self.tr("max |Δlogit| vs solo"), index,
                       tuple(_gap(o.max_abs_logit_diff) for o in run.outcomes)),
            )))
        sweep = self.shown_sweep()
        if sweep is not None:
            batch: tuple[Cell, ...] = tuple(p.batch for p in sweep.points)
            series = [
                Series(self.tr("ms per step, median"), batch,
                       tuple(p.ms_per_step for p in sweep.points)),
                Series(self.tr("ms per step, fastest round"), batch,
                       tuple(1000.0 * p.step_seconds.low for p in sweep.points)),
                Series(self.tr("ms per step, slowest round"), batch,
                       tuple(1000.0 * p.step_seconds.high for p in sweep.points)),
                Series(self.tr("tokens/s"), batch,
                       tuple(p.tokens_per_second for p in sweep.points)),
                Series(self.tr("weight bytes read (B)"), batch,
                       tuple(p.weight_bytes for p in sweep.points)),
                Series(self.tr("KV bytes read (B)"), batch,
                       tuple(p.kv_bytes for p in sweep.points)),
                Series(self.tr("FLOPs"), batch, tuple(p.flops for p in sweep.points)),
                Series(self.tr("FLOP per byte"), batch,
                       tuple(p.intensity for p in sweep.points)),
            ]
            if sweep.peaks is not None:
                series += [
                    Series(self.tr("memory floor (ms)"), batch,
                           tuple(1000.0 * (p.memory_seconds or 0.0) for p in sweep.points)),
                    Series(self.tr("compute floor (ms)"), batch,
                           tuple(1000.0 * (p.compute_seconds or 0.0) for p in sweep.points)),
                ]
            tables.append(DataTable(self.tr("Decode step time against batch size"),
                                    self.tr("batch size (rows)"), tuple(series)))
        return tables

    def numbers(self) -> dict[str, Any]:
        result = self.result
        if not isinstance(result, batching.ServingLabResult):
            return {}
        out: dict[str, Any] = {}
        run = self.shown_run()
        if run is not None and result.serving is not None:
            totals = run.totals
            out["serving"] = {
                "model": result.serving.model,
                "scheduler": run.config.label,
                "repeats": result.serving.repeats,
                "steps": totals.steps,
                "answer_tokens": totals.answer_tokens,
                "throughput_tokens_per_s": totals.throughput_tps.median,
                "throughput_min": totals.throughput_tps.low,
                "throughput_max": totals.throughput_tps.high,
                "padding_slots": totals.padding_slots,
                "padding_formula": totals.padding_formula,
                "prefix_hit_tokens": totals.prefix_hit_tokens,
                "preemptions": totals.preemptions,
                "peak_blocks": totals.peak_blocks,
                "peak_cache_bytes": totals.peak_cache_bytes,
                "all_identical_to_solo": run.all_identical,  # the same tokens
                "max_abs_logit_diff_vs_solo": run.max_abs_logit_diff,
                "requests": [
                    {"index": o.request.index, "prompt_tokens": o.prompt_tokens,
                     "prefix_hit": o.prefix_hit, "ttft_ms": _ms(o.ttft_s),
                     "itl_p50_ms": _ms(o.itl_p50_s), "itl_p95_ms": _ms(o.itl_p95_s),
                     "answer_tokens": o.answer_tokens,
                     "identical_to_solo": o.identical_to_solo,
                     "max_abs_logit_diff_vs_solo": o.max_abs_logit_diff}
                    for o in run.outcomes
                ],
            }
        sweep = result.sweep
        if sweep is not None:
            peaks = sweep.peaks
            out["batch_sweep"] = {
                "model": sweep.model_label,
                "device": sweep.device,
                "rounds": sweep.rounds,
                "context": sweep.context,
                "weight_bytes": sweep.work.weight_bytes,
                "best_copy_bytes_per_s": None if peaks is None else peaks.bandwidth.high,
                "best_matmul_flops_per_s": None if peaks is None else peaks.flops.high,
                "points": [
                    {"batch": p.batch, "keys": p.keys, "ms_per_step": p.ms_per_step,
                     "ms_min": 1000.0 * p.step_seconds.low,
                     "ms_max": 1000.0 * p.step_seconds.high,
                     "tokens_per_s": p.tokens_per_second, "kv_bytes": p.kv_bytes,
                     "bytes_read": p.bytes_read, "flops": p.flops, "intensity": p.intensity,
                     "bound": p.bound}
                    for p in sweep.points
                ],
            }
        return out

    def table_values(self) -> list[dict[str, Any]]:
        """Both tables for the slide pack's CSV: the requests, then the sweep."""
        return self.table.values() + self.sweep_table.values()
