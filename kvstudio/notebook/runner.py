"""Running a lab in a notebook: its own run and its view, no window and no thread.

Owns `drive` (pull a lab's run, `LabSpec.run`, to its end in the calling thread:
progress as it goes, the view's `draw_progress` in batches as the window's
timer does, then `take_result`) and `LabRun` (what a lab function returns: the
result record, the table as records and as a DataFrame, the chart data, the
charts, `export`).

The window runs the same run on `GeneratorRunner`'s thread and hands its items to
the same view (``kvstudio.charts.labs``), so a chart in a notebook and in the
window are drawn by one piece of code.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvstudio.notebook.chart_view import HEIGHT, WIDTH, LiveCharts, chart_png
from kvstudio.notebook.progress import progress_view

if TYPE_CHECKING:
    from kvstudio.charts.chart_data import ChartLike
    from kvstudio.charts.labs.base import LabView

DRAW_INTERVAL_S = 0.25  # as the window's LabPanel.redraw_interval_ms
PROGRESS_INTERVAL_S = 0.1


def drive(view: LabView, job: Iterator[object], title: str, *, show: bool = True,
          charts: LiveCharts | None = None) -> tuple[object, list[object]]:
    """Pull the lab's run `job` to its end here; `view` draws it.

    Returns the result and every item yielded before it (the lab's progress
    records: `Progress` with its `StepRecord`, or the top-p lab's steps).

    Progress: a bar (Jupyter) or a text line. Charts: live in Jupyter (pass
    `charts` to keep drawing into widgets already shown, as the chat's turns do).
    """
    progress = progress_view(title) if show else None
    live = charts if charts is not None else LiveCharts(view.charts(), show=show)
    pending: list[object] = []
    items: list[object] = []
    previous: object = _NOTHING
    drawn = time.monotonic()
    shown = -PROGRESS_INTERVAL_S  # the first item is always shown
    try:
        for item in job:
            if previous is not _NOTHING:
                pending.append(previous)  # every item but the last is progress
                items.append(previous)
            previous = item
            now = time.monotonic()
            done, total = getattr(item, "done", None), getattr(item, "total", None)
            if progress is not None and isinstance(done, int) and isinstance(total, int) \
                    and now - shown >= PROGRESS_INTERVAL_S:
                progress.update(done, total, str(getattr(item, "stage", "")))
                shown = now
            if now - drawn >= DRAW_INTERVAL_S and pending:
                view.draw_progress(pending)
                pending = []
                live.refresh()
                drawn = time.monotonic()
    except KeyboardInterrupt:
        if progress is not None:
            progress.close("cancelled (nothing kept)")
        raise
    if previous is _NOTHING:
        raise ValueError(f"The {title} lab produced nothing; check its settings.")
    view.draw_progress(pending)
    view.take_result(previous)
    live.finish()
    if progress is not None:
        progress.close("done")
    return previous, items


_NOTHING = object()


@dataclass
class LabRun:
    """A lab's run in a notebook: its result record, table, chart data and charts.

    - `result`: the lab's frozen result (the same object the ``kvstudio`` command prints).
    - `steps`: the records that arrived while it ran (`Progress`, or the top-p lab's steps).
    - `records`: the lab's table as a list of dicts (one per row, numbers as numbers).
    - `df`: the same as a pandas DataFrame, when pandas is installed (else None).
    - `series`: every point the charts draw, one dict each (chart, series, x_means, x, y).
    - `charts`: the lab's chart widgets (the window's chart code), by name; `export` writes
      them as the window does.
    """

    name: str
    view: LabView
    result: object
    model: str
    seconds: float
    steps: list[object] = field(default_factory=list)  # what the lab yielded before its result
    turns: list[object] = field(default_factory=list)  # the chat: each turn's result

    @property
    def charts(self) -> dict[str, ChartLike]:
        return dict(self.view.charts())

    @property
    def chart(self) -> ChartLike:
        """The lab's first (main) chart."""
        return next(iter(self.view.charts().values()))

    @property
    def headline(self) -> str:
        """The chart's lesson with its measured numbers, as the slide prints it."""
        from kvstudio.charts.plotted_data import chart_headline

        return chart_headline(self.chart) or self.view.headline()

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.view.table_values()

    @property
    def df(self) -> Any:
        return _data_frame(self.records)

    @property
    def series(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for table in self.view.data_tables():
            for series in table.series:
                rows += [{"chart": table.title, "series": series.header,
                          "x_means": table.x_header, "x": x, "y": y}
                         for x, y in zip(series.x, series.y, strict=True)]
        return rows

    @property
    def series_df(self) -> Any:
        return _data_frame(self.series)

    @property
    def numbers(self) -> dict[str, Any]:
        """The numbers the window's slide pack writes to numbers.json."""
        return self.view.numbers()

    def export(self, path: str | Path, chart: str | None = None, *, size: str = "16:9",
               headline: bool = True) -> Path:
        """One chart as PNG, SVG, PDF or CSV (the suffix says which), as the window exports it."""
        from kvstudio.notebook.export import export

        return export(self.charts[chart] if chart else self.chart, path, size=size,
                      headline=headline)

    def png(self, width: int = WIDTH, height: int = HEIGHT) -> bytes:
        return chart_png(self.chart, width, height)

    def table_text(self) -> str:
        return format_table(self.records)

    def __repr__(self) -> str:
        return f"{self.name} on {self.model} ({self.seconds:.1f} s)\n{self.headline}\n" + \
            self.table_text()

    def _repr_html_(self) -> str:
        import html

        head = "<br>".join(html.escape(line) for line in self.headline.splitlines())
        rows = self.records
        if not rows:
            return f"<p>{head}</p>"
        keys = list(rows[0])
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(row.get(k)))}</td>" for k in keys) + "</tr>"
            for row in rows)
        header = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
        return (f"<p><b>{html.escape(self.name)}</b> · {html.escape(self.model)}</p>"
                f"<p>{head}</p><table><tr>{header}</tr>{cells}</table>")


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return "" if value is None else str(value)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A list of records as an aligned text table (what `print(run)` shows)."""
    if not rows:
        return ""
    keys = list(rows[0])
    cells = [[_cell(row.get(k)) for k in keys] for row in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    lines = ["  ".join(k.ljust(w) for k, w in zip(keys, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def _data_frame(rows: list[dict[str, Any]]) -> Any:
    try:
        import pandas
    except ImportError:
        return None
    return pandas.DataFrame(rows)
