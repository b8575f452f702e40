"""Running a window lab in a notebook: the same panel, the same generator, no thread.

Owns `set_fields` (a lab's parameters written into the panel's own boxes, with
the boxes' limits checked instead of silently clamped), `drive` (pull the
panel's job, `LabPanel.make_job`, to its end in the calling thread: progress as
it goes, the panel's `draw_progress` in batches as the window's timer does,
then `take_result`) and `LabRun` (what a lab function returns: the result
record, the table as records and as a DataFrame, the chart data, the charts,
`export`).

The window runs the same job on `GeneratorRunner`'s thread and calls the same
two panel methods from its slots, so a chart in a notebook and in the window
are drawn by one piece of code.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QLineEdit, QSpinBox

from kvstudio.labs.bounds import MAX_VALUES  # the command line's bound on a list of values
from kvstudio.notebook.chart_view import HEIGHT, WIDTH, LiveCharts, chart_png
from kvstudio.notebook.progress import progress_view

if TYPE_CHECKING:
    from kvstudio.charts.chart_data import ChartLike
    from kvstudio.files.loaded import LoadedModel
    from kvstudio.ui.labs.shared.base import LabPanel

DRAW_INTERVAL_S = 0.25  # as the window's LabPanel.redraw_interval_ms
PROGRESS_INTERVAL_S = 0.1


def set_fields(panel: LabPanel, values: Mapping[str, Any]) -> None:
    """Write each value into the panel's box of that name (None: keep the course preset's).

    A number outside the box's range is refused (the window's box would clamp it
    without a word); a list for a text box is written comma-separated, and text longer
    than the box holds is refused (the box would cut it without a word). Every refusal is
    a ValueError that names the argument, before any model is loaded or run.
    """
    for name, value in values.items():
        if value is None:
            continue
        box = getattr(panel, name, None)
        if isinstance(box, QLineEdit):
            text = _line_text(name, value)
            if len(text) > box.maxLength():
                raise ValueError(f"{name} is {len(text):,} characters long; the lab takes at "
                                 f"most {box.maxLength():,}: shorten it.")
            box.setText(text)
            continue
        if isinstance(box, QAbstractSpinBox) and hasattr(box, "setValue"):
            low, high = box.minimum(), box.maximum()  # type: ignore[attr-defined]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {shown(value)}.")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}.")
            if isinstance(box, QSpinBox) and int(value) != value:
                raise ValueError(f"{name} must be a whole number, got {value!r}.")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value:g}.")
            box.setValue(int(value) if isinstance(box, QSpinBox) else float(value))  # type: ignore[attr-defined]
        elif isinstance(box, QCheckBox):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False, got {shown(value)}.")
            box.setChecked(value)
        elif isinstance(box, QComboBox):
            index = box.findData(value)
            if index < 0:
                choices = ", ".join(repr(box.itemData(i)) for i in range(box.count()))
                raise ValueError(f"{name} must be one of {choices}, got {shown(value)}.")
            box.setCurrentIndex(index)
        else:
            raise ValueError(f"{type(panel).__name__} has no setting {name!r}.")


def shown(value: object) -> str:
    """`value` for a message: its repr, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text):,} characters)"


def _line_text(name: str, value: object) -> str:
    """A text box's value: text as given, or a list of numbers written comma-separated."""
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = list(value) if not isinstance(value, Sized) or len(value) <= MAX_VALUES else None
        if items is None or len(items) > MAX_VALUES:
            raise ValueError(f"{name} takes at most {MAX_VALUES:,} values.")
        for item in items:
            if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(
                    item):
                raise ValueError(f"{name} must hold finite numbers, got {shown(item)}.")
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in items)
    raise ValueError(f"{name} must be text or a list of numbers, got {shown(value)}.")


def drive(panel: LabPanel, model: LoadedModel, title: str, *, show: bool = True,
          charts: LiveCharts | None = None) -> tuple[object, list[object]]:
    """Run the panel's job for `model` to its end here; the panel draws it.

    Returns the result and every item yielded before it (the lab's progress
    records: `Progress` with its `StepRecord`, or the top-p lab's steps).

    Progress: a bar (Jupyter) or a text line. Charts: live in Jupyter (pass
    `charts` to keep drawing into widgets already shown, as the chat's turns do).
    """
    job = panel.make_job(model)  # the window's job: a ValueError says what to change
    panel.model = panel.ran_on = model
    panel.result = None
    progress = progress_view(title) if show else None
    live = charts if charts is not None else LiveCharts(panel.charts(), show=show)
    pending: list[object] = []
    items: list[object] = []
    previous: object = _NOTHING
    drawn = time.monotonic()
    shown = -PROGRESS_INTERVAL_S  # the first item is always shown
    try:
        for item in job():
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
                panel.draw_progress(pending)
                pending = []
                live.refresh()
                drawn = time.monotonic()
    except KeyboardInterrupt:
        if progress is not None:
            progress.close("cancelled (nothing kept)")
        raise
    if previous is _NOTHING:
        raise ValueError(f"The {title} lab produced nothing; check its settings.")
    panel.draw_progress(pending)
    panel.take_result(previous)
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
    - `charts`: the window's chart widgets, by name; `export` writes them as the window does.
    """

    name: str
    panel: LabPanel
    result: object
    model: str
    seconds: float
    steps: list[object] = field(default_factory=list)  # what the lab yielded before its result
    turns: list[object] = field(default_factory=list)  # the chat: each turn's result

    @property
    def charts(self) -> dict[str, ChartLike]:
        return dict(self.panel.charts())

    @property
    def chart(self) -> ChartLike:
        """The lab's first (main) chart."""
        return next(iter(self.panel.charts().values()))

    @property
    def headline(self) -> str:
        """The chart's lesson with its measured numbers, as the slide prints it."""
        from kvstudio.charts.plotted_data import chart_headline

        return chart_headline(self.chart) or self.panel.headline()

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.panel.table_values()

    @property
    def df(self) -> Any:
        return _data_frame(self.records)

    @property
    def series(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for table in self.panel.data_tables():
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
        return self.panel.numbers()

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
