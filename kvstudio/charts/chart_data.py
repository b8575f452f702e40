"""What a chart is, and what it teaches as data: for the window, the export and the notebook.

Owns `ChartLike` (any chart the window shows: a PlotItem, a GraphicsLayout or the
widget showing one), `ExportError` (an export or a presenter page that cannot be
made; its message says what to do), `chart_item` (the graphics item to draw) and
`plot_items` (every PlotItem inside, top-left first); and the chart's content:
`DataTable` (one table per plot: an x column and one named column per series, units
in the headers), `ChartContent` (the protocol a chart's owner implements so exports
can ask for both), `content_of` (finds it for a chart or the widget that shows it),
`tables_to_csv` and `csv_rows`, the one CSV writer every export uses. The numbers
come from the records the chart was drawn from, never from the drawn items: no log10
of a log axis, no bar offsets. It sits with the plots, below ``kvstudio.ui.slides``,
so a plot describes itself without importing the export.

CSV cells are decided by the value's type, not its text: numbers are written as
measured (``-3.5`` stays a number), and a text cell (an answer, a prompt, a
token piece, a header) that begins like a spreadsheet formula (``= + - @``, a
tab or a carriage return) gets a leading ``'``, as OWASP recommends, so
``=HYPERLINK(…)`` in an answer is shown as text instead of run.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

ChartLike = Any  # PlotItem | GraphicsLayout | PlotWidget | GraphicsLayoutWidget



class ExportError(RuntimeError):
    """An export could not be written; the message says why and what to do."""


# ---- finding the chart ---------------------------------------------------------------------
def chart_item(chart: ChartLike) -> QGraphicsItem:
    """The graphics item to export for a chart or the widget that shows it."""
    if isinstance(chart, QGraphicsItem):
        return chart
    if isinstance(chart, pg.PlotWidget):
        return chart.getPlotItem()
    if isinstance(chart, pg.GraphicsLayoutWidget):
        return chart.ci
    if isinstance(chart, pg.GraphicsView) and chart.centralWidget is not None:
        return chart.centralWidget
    plot_item = getattr(chart, "plot_item", None)  # our Plot classes expose their PlotItem
    if isinstance(plot_item, QGraphicsItem):
        return plot_item
    raise ExportError(
        f"Cannot export a {type(chart).__name__}: pass a pyqtgraph PlotItem, GraphicsLayout "
        "or the widget that shows one."
    )


def plot_items(chart: ChartLike) -> list[pg.PlotItem]:
    """Every PlotItem inside a chart, in layout order (top-left first)."""
    root = chart_item(chart)
    found: list[pg.PlotItem] = []
    stack = [root]
    while stack:
        item = stack.pop(0)
        if isinstance(item, pg.PlotItem):
            found.append(item)
            continue
        stack.extend(item.childItems())
    found.sort(key=lambda p: (round(p.sceneBoundingRect().top()), p.sceneBoundingRect().left()))
    return found

Cell = float | int | str | None

CONTENT_ATTRIBUTE = "kvstudio_chart_content"  # set on a chart widget by `set_content`


@dataclass(frozen=True)
class Series:
    """One column of a table: its header (name and unit) and its values at x."""

    header: str
    x: tuple[Cell, ...]
    y: tuple[Cell, ...]

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"Series {self.header!r}: {len(self.x)} x but {len(self.y)} y.")


@dataclass(frozen=True)
class DataTable:
    """One plot's numbers: rows are the x values of all series (sorted), one column each."""

    title: str  # the plot it belongs to (for a reader; not written as a row)
    x_header: str  # e.g. "step (0 = prefill)", "layer", "temperature"
    series: tuple[Series, ...]

    @property
    def empty(self) -> bool:
        return not any(s.x for s in self.series)

    def header(self) -> list[str]:
        return [self.x_header, *(s.header for s in self.series)]

    def rows(self) -> list[list[Cell]]:
        """One row per distinct x (in first-seen order when x are not all numbers)."""
        order: list[Cell] = []
        seen: set[Any] = set()
        for s in self.series:
            for x in s.x:
                key = _key(x)
                if key not in seen:
                    seen.add(key)
                    order.append(x)
        if all(isinstance(x, int | float) for x in order):
            order.sort(key=lambda v: float(v))  # type: ignore[arg-type]
        lookup = [{_key(x): y for x, y in zip(s.x, s.y, strict=True)} for s in self.series]
        return [[x, *(values.get(_key(x)) for values in lookup)] for x in order]

    def column(self, header: str) -> list[Cell]:
        """The values under `header` in row order (blank cells as None); for tests and CSV."""
        index = self.header().index(header)
        return [row[index] for row in self.rows()]


def table_at(title: str, x_header: str, x: Iterable[Cell],
             columns: Iterable[tuple[str, Iterable[Cell]]]) -> DataTable:
    """A table whose columns share the x values `x`: a `Series` per (header, values)."""
    shared = tuple(x)
    return DataTable(title, x_header, tuple(Series(header, shared, tuple(values))
                                            for header, values in columns))


def _key(x: Cell) -> Any:
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


@runtime_checkable
class ChartContent(Protocol):
    """What an exported chart says: a headline with its measured numbers, and its data."""

    def headline(self) -> str: ...

    def data_tables(self) -> list[DataTable]: ...


class OwnerContent:
    """The content of a chart that its owner (a lab panel) provides, held by a weak reference.

    The chart widget is the owner's child; a strong reference back to the owner
    would make a cycle (owner → chart → content → owner) that only Python's
    garbage collector frees, in no set order. PySide6 6.10 can crash freeing a
    widget tree that way (a child widget's destructor walks to a parent already
    gone). Weakly held, the owner is freed by reference count, parent first.
    Once the owner is gone, the chart has no headline and no data.
    """

    def __init__(self, owner: ChartContent) -> None:
        self._owner = weakref.ref(owner)

    def headline(self) -> str:
        owner = self._owner()
        return owner.headline() if owner is not None else ""

    def data_tables(self) -> list[DataTable]:
        owner = self._owner()
        return owner.data_tables() if owner is not None else []


def set_content(widget: object, content: ChartContent) -> None:
    """Tell exports where a chart widget's headline and data come from."""
    setattr(widget, CONTENT_ATTRIBUTE, content)


def content_of(chart: object) -> ChartContent | None:
    """The chart's content: the chart itself when it implements it, or what was set on it."""
    found = getattr(chart, CONTENT_ATTRIBUTE, None)
    if isinstance(found, ChartContent):
        return found
    if isinstance(chart, ChartContent):
        return chart
    return None


def format_cell(value: Cell) -> str:
    """Numbers as they were measured: integers without ".0", floats round-trip exactly."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    return str(value)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula


def csv_text(text: str) -> str:
    """A text cell a spreadsheet shows as text: one that starts like a formula gets a "'"."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_cell(value: object) -> str:
    """One CSV cell: a number as measured (`format_cell`), text neutralised (`csv_text`).

    Numbers are told by type (numpy's included), so a negative number stays a number.
    """
    if value is None or isinstance(value, bool | int | float):
        return format_cell(value)
    if isinstance(value, numbers.Integral):
        return format_cell(int(value))
    if isinstance(value, numbers.Real):
        return format_cell(float(value))
    return csv_text(str(value))


def csv_rows(tables: Iterable[Iterable[Iterable[object]]]) -> bytes:
    """UTF-8 CSV of `tables` (each a header row, then its rows), a blank line between tables.

    Every cell goes through `csv_cell`, so no export writes a formula a spreadsheet runs.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    # csv quotes a cell holding the line terminator ("\n") but not a lone "\r", which then
    # splits the row for any reader: a row with one is written fully quoted.
    quoting_all = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for index, rows in enumerate(tables):
        if index:
            buf.write("\n")
        for row in rows:
            cells = [csv_cell(v) for v in row]
            (quoting_all if any("\r" in c for c in cells) else writer).writerow(cells)
    return buf.getvalue().encode("utf-8")


def tables_to_csv(tables: Sequence[DataTable]) -> bytes:
    """Each table as a header row and its rows; several tables are separated by a blank line."""
    return csv_rows([table.header(), *table.rows()] for table in tables)


def read_csv_tables(data: bytes | str) -> list[list[list[str]]]:
    """The tables of a CSV written by `tables_to_csv` (header row first in each)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    tables: list[list[list[str]]] = [[]]
    for row in csv.reader(io.StringIO(text)):  # a blank line (an empty row) ends a table
        if row:
            tables[-1].append(row)
        elif tables[-1]:
            tables.append([])
    return [t for t in tables if t]
