"""What a lab's result shows, drawn the same way in the window and in a notebook.

Owns `LabView`: one lab's charts (pyqtgraph), its results table, the headline
printed above its exports, its block of numbers.json and the series its CSV
holds. A view draws what a lab's `run` yields (`show_progress`) and its result
(`show_result`); it never computes and never asks for input. The window's lab
panel (``kvstudio.ui.labs``) puts a view beside its parameter boxes; the
notebook (``kvstudio.notebook.labs``) makes one and shows its charts in a cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pyqtgraph as pg
from PySide6.QtCore import QObject

from kvstudio.charts.chart_data import (
    ChartContent,
    ChartLike,
    DataTable,
    OwnerContent,
    plot_items,
    set_content,
)
from kvstudio.charts.plots.empty import EmptyChart
from kvstudio.charts.plots.legend import add_legend_row
from kvstudio.charts.plots.results_table import ResultsTable
from kvstudio.charts.plots.scrolling import fixed_view
from kvstudio.charts.plots.sizing import (
    fit_bottom_title,
    fit_side_titles,
    follow_title,
    keep_readable,
)
from kvstudio.engine.records import Mode, SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.course import COURSE
from kvstudio.labs.params import LabSpec
from kvstudio.labs.registry import spec

# Colour-blind-safe (Okabe–Ito), dark enough for white slides.
SERIES_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
# Cached and recompute, the same in every chart (the window's live plots too).
MODE_COLOURS: dict[Mode, str] = {"cached": "#1f77b4", "recompute": "#e6550d"}


def series_colour(index: int) -> str:
    return SERIES_COLOURS[index % len(SERIES_COLOURS)]


def marked_line(plot: pg.PlotItem, colour: str, symbol: str, symbol_size: float,
                width: float = 2) -> pg.PlotDataItem:
    """An empty line with a marker at each point, in `colour`, for a view to `setData`."""
    return plot.plot([], [], pen=pg.mkPen(colour, width=width), symbol=symbol,
                     symbolSize=symbol_size, symbolBrush=colour, symbolPen=None)


def plots_in_a_row(count: int) -> tuple[pg.GraphicsLayoutWidget, tuple[pg.PlotItem, ...]]:
    """A chart on white with `count` plots side by side (row 0, columns 0, 1, …)."""
    chart = pg.GraphicsLayoutWidget()
    chart.setBackground("w")
    return chart, tuple(chart.addPlot(row=0, col=col) for col in range(count))


def grid_and_legend(*plots: pg.PlotItem, x_grid: bool = True) -> None:
    """Light grid lines (across y, and x unless `x_grid` is False) and a legend row above each
    of `plots`."""
    for plot in plots:
        plot.showGrid(x=x_grid, y=True, alpha=0.2)
        add_legend_row(plot)


def name_plot(plot: pg.PlotItem, title: str, bottom: str, left: str | None = None) -> None:
    """Set a plot's title (dark grey, as on every lab's chart) and its axes' titles."""
    plot.setTitle(title, color="#222")
    plot.setLabel("bottom", bottom)
    if left is not None:
        plot.setLabel("left", left)


def fill_legend(plot: pg.PlotItem, entries: Sequence[tuple[Any, str]]) -> None:
    """List (item, name) in the plot's legend in this order, in place of what it listed."""
    plot.legend.clear()
    for item, name in entries:
        plot.legend.addItem(item, name)


PackContent = tuple[dict[str, ChartLike], dict[str, Any], dict[str, Sequence[Mapping[str, Any]]]]


def slide_pack_of(labs: Sequence[Any]) -> PackContent:
    """Charts, numbers and tables of each of `labs` (views, or the window's panels) that has
    a result or table rows, keyed as the slide pack names them."""
    charts: dict[str, ChartLike] = {}
    numbers: dict[str, Any] = {}
    tables: dict[str, Sequence[Mapping[str, Any]]] = {}
    for lab in labs:
        if lab.result is None and not lab.table_rows():
            continue
        for key, chart in lab.charts().items():
            charts[f"lab {key}"] = chart
        numbers[lab.pack_name] = lab.numbers()
        tables[f"lab {lab.pack_name} table"] = lab.table_values()
    return charts, numbers, tables


class LabView(QObject):
    """One lab's charts, table, headline and numbers, drawn from what its run yields.

    A subclass makes its charts in `__init__` (`add_chart`), sets their texts in
    `retranslate`, and draws: `clear` before a run, `show_progress` for each
    item the run yields, `show_result` for its result. `params` holds the run's
    parameters (the registry's names), set by `start`.
    """

    key: ClassVar[str] = ""  # the lab's key in kvstudio.labs.registry
    # Labs that time each step draw their charts only at the end: a redraw mid-run would
    # land inside some step's measured time (a 4 ms cached step measured 45 ms).
    draw_while_running: ClassVar[bool] = True
    # Only ever run a step at a time by the window's Start and Step (the Cache inspector):
    # its empty charts say to press Start.
    stepped: ClassVar[bool] = False

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.result: object | None = None
        self.params: dict[str, Any] = self.spec.defaults()
        self.tokenizer: TextTokenizer | None = None  # the run's model's: token texts
        self.table = ResultsTable()
        self._charts: dict[str, pg.GraphicsView] = {}
        self._empty: list[EmptyChart] = []

    @property
    def spec(self) -> LabSpec:
        return self.spec_of()

    @property
    def pack_name(self) -> str:
        """The lab's key in a slide pack's numbers.json and table names ("CacheKinds")."""
        return type(self).__name__.removesuffix("View")

    @classmethod
    def spec_of(cls) -> LabSpec:
        """The lab's declaration (kvstudio.labs.registry), without a view made (a view of a
        lab outside the registry, the Cache inspector, returns its own)."""
        return spec(cls.key)

    # ---- for subclasses -----------------------------------------------------------------
    def add_chart(self, key: str, widget: pg.GraphicsView,
                  content: ChartContent | None = None) -> pg.GraphicsView:
        """Register a chart under a stable name (its export's file name).

        `content` gives exports the chart's headline and data tables; by default the
        view's own `headline` and `data_tables`.
        """
        self._charts[key] = widget
        set_content(widget, content or OwnerContent(self))
        for plot in plot_items(widget):  # dark axes on white, like the window's live plots
            for side in ("left", "bottom", "right"):
                plot.getAxis(side).setPen(pg.mkPen("#444"))
                plot.getAxis(side).setTextPen(pg.mkPen("#222"))
            fit_bottom_title(plot)
            fit_side_titles(plot)
            follow_title(plot)  # (a plot with a legend row follows its width already)
        fixed_view(widget)  # no wheel zoom or drag pan: the exports show what was drawn
        keep_readable(widget)
        empty = EmptyChart(widget)
        empty.set_empty(self.result is None, self.empty_hint())
        self._empty.append(empty)
        return widget

    def clear(self) -> None:
        """Forget the previous result's drawing before a new run."""

    def show_progress(self, item: object) -> None:
        """Draw one item the run yielded (most labs: a `Progress` with its record)."""

    def show_result(self, result: object) -> None:
        """Draw `result` when it is the lab's finished result (`result_type`)."""
        if result is not None and isinstance(result, self.result_type()):
            self.draw_result(result)

    def draw_result(self, result: Any) -> None:
        """Draw the lab's finished result: the charts and the table."""

    def retranslate(self) -> None:
        """Set the charts' texts in the current language (and redraw a result's texts)."""
        for chart in self._empty:
            chart.set_empty(chart.empty, self.empty_hint())

    def result_type(self) -> type:
        """The class of the lab's finished result (its lab module loads torch: read late)."""
        raise NotImplementedError

    def finished(self) -> Any:
        """The run's result when it is the lab's finished result (`result_type`), else None."""
        if self.result is None:  # (before a result torch need not load)
            return None
        return self.result if isinstance(self.result, self.result_type()) else None

    def status_line(self) -> str:
        """The line the window shows under the Run button once the result is in ("": Done)."""
        result = self.finished()
        return "" if result is None else self.status_of(result)

    def headline(self) -> str:
        """The lesson of the lab's chart with its measured numbers (above exports)."""
        result = self.finished()
        return "" if result is None else self.headline_of(result)

    def numbers(self) -> dict[str, Any]:
        """The result's numbers for numbers.json in the slide pack."""
        result = self.finished()
        return {} if result is None else self.numbers_of(result)

    def data_tables(self) -> list[DataTable]:
        """The numbers the lab's chart draws, from the result (what its CSV holds)."""
        result = self.finished()
        return [] if result is None else self.tables_of(result)

    # A subclass writes these for its finished result (`finished`); before one, the four
    # above return nothing.
    def status_of(self, result: Any) -> str:
        return ""

    def headline_of(self, result: Any) -> str:
        return ""

    def numbers_of(self, result: Any) -> dict[str, Any]:
        return {}

    def tables_of(self, result: Any) -> list[DataTable]:
        return []

    def empty_hint(self) -> str:
        """The line an empty chart shows: how to fill it."""
        if self.stepped:
            return self.tr("Press Start to fill this chart.")
        return self.tr("Run the lab to fill this chart.")

    # ---- the run ------------------------------------------------------------------------
    def start(self, params: Mapping[str, Any], tokenizer: TextTokenizer | None = None) -> None:
        """A run with these parameters on a model with this tokenizer begins: forget the
        last one."""
        self.params = {**self.spec.defaults(), **params}
        self.tokenizer = tokenizer
        self.result = None
        self.clear()

    def draw_progress(self, items: Sequence[object]) -> None:
        """Draw a batch of items as they arrived (the window's timer's, or a notebook's)."""
        if not items or not self.draw_while_running:
            return
        self.set_charts_empty(False)
        for item in items:
            self.show_progress(item)
        self.check_legends()

    def take_result(self, result: object) -> None:
        """Show a finished run's result: the charts and the table."""
        self.result = result
        self.set_charts_empty(False)
        self.show_result(result)
        self.check_legends()

    def charts(self) -> Mapping[str, ChartLike]:
        """The charts to export, by a stable name."""
        return dict(self._charts)

    def set_charts_empty(self, empty: bool) -> None:
        """Show the charts' empty look (no tick values, how to fill them) or their data."""
        for chart in self._empty:
            chart.set_empty(empty, self.empty_hint())

    def check_legends(self) -> None:
        """Let every chart's legend list the series drawn now (bars say nothing themselves)."""
        for chart in self._charts.values():
            for plot in plot_items(chart):
                check = getattr(plot.legend, "check_drawn", None)
                if check is not None:
                    check()

    def table_rows(self) -> list[dict[str, str]]:
        """The results table as shown."""
        return self.table.rows()

    def table_values(self) -> list[dict[str, Any]]:
        """The results table as numbers (for the slide pack's CSV)."""
        return self.table.values()

    def sampling_settings_text(
        self,
        settings: SamplingSettings,
        *,
        temperatures: Sequence[float] | None = None,
        samples: int | None = None,
        answer_tokens: int | None = None,
    ) -> str:
        """Which settings made a sampling chart, and what differs from the course preset,
        in the current language (the labs' `settings_line` is the CLI's English)."""
        course = COURSE.sampling

        def temperature(s: SamplingSettings) -> str:
            return self.tr("greedy") if s.greedy else f"T {s.temperature:g}"

        def top_k(k: int) -> str:
            return self.tr("off") if k == 0 else f"{k:,}"

        def top_p(p: float) -> str:
            return self.tr("off") if p >= 1.0 else f"{p:g}"

        parts = [
            ("T " + ", ".join(f"{t:g}" for t in temperatures)) if temperatures
            else temperature(settings),
            self.tr("top-k {0}").format(top_k(settings.top_k)),
            self.tr("top-p {0}").format(top_p(settings.top_p)),
            self.tr("penalty {0:g}").format(settings.repetition_penalty),
            self.tr("seed {0}").format(settings.seed),
        ]
        if samples is not None:
            parts.append(self.tr("{0:,} samples").format(samples))
        if answer_tokens is not None:
            parts.append(self.tr("≤ {0:,} tokens").format(answer_tokens))
        changes = []
        if temperatures is None and settings.temperature != course.temperature:
            changes.append(self.tr("{0} (course T {1:g})").format(
                temperature(settings), course.temperature))
        if settings.top_k != course.top_k:
            changes.append(self.tr("top-k {0} (course {1})").format(
                top_k(settings.top_k), top_k(course.top_k)))
        if settings.top_p != course.top_p:
            changes.append(self.tr("top-p {0} (course {1})").format(
                top_p(settings.top_p), top_p(course.top_p)))
        if settings.repetition_penalty != course.repetition_penalty:
            changes.append(self.tr("penalty {0:g} (course {1:g})").format(
                settings.repetition_penalty, course.repetition_penalty))
        if settings.seed != course.seed:
            changes.append(self.tr("seed {0} (course {1})").format(settings.seed, course.seed))
        text = self.tr("Settings: {0}").format(" · ".join(parts))
        if changes:
            return text + "\n" + self.tr("Changed from the course preset: {0}").format(
                "; ".join(changes))
        return text + "\n" + self.tr("The course preset (the sampling dock's defaults).")
