"""The numbers a chart shows, read back from its plot items, as tables and CSV.

Owns `plotted_data` (every plotted series as `SeriesData`, named from its
legend), `chart_tables` (the chart's own records when it has them,
``chart_data.py``), `chart_headline`, `chart_is_empty`, `render_csv` and
`rows_to_csv`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg

from kvstudio.charts import weights_notice
from kvstudio.charts.canvas import companion_views
from kvstudio.charts.chart_data import (
    ChartLike,
    DataTable,
    ExportError,
    Series,
    chart_item,
    content_of,
    csv_rows,
    plot_items,
    tables_to_csv,
)
from kvstudio.charts.korean import attach_particles


@dataclass(frozen=True)
class SeriesData:
    """One plotted series, as numbers."""

    plot: str  # the plot's title (or "plot N")
    series: str  # legend name (or "series N")
    x: tuple[float, ...]
    y: tuple[float, ...]


# ---- data ----------------------------------------------------------------------------------
def plotted_data(chart: ChartLike) -> list[SeriesData]:
    """The numbers each plot in the chart draws (a fallback for charts with no content).

    Log axes are undone (pyqtgraph keeps the original data in xData/yData).
    """
    out: list[SeriesData] = []
    root = chart_item(chart)
    extra_items = [i for view in companion_views(root) for i in view.addedItems]
    for p_index, plot in enumerate(plot_items(chart)):
        plot_name = plain_text(plot.titleLabel.text) or f"plot {p_index + 1}"
        legend_names = _legend_names(plot)
        counter = 0
        items = list(plot.items) + (extra_items if p_index == 0 else [])
        for item in items:
            counter += 1
            name = legend_names.get(id(item)) or _series_name(item) or f"series {counter}"
            xy = _item_xy(item)
            if xy is None:
                counter -= 1
                continue
            x, y = xy
            out.append(SeriesData(plot_name, name, tuple(map(float, x)), tuple(map(float, y))))
    return out


def _legend_names(plot: pg.PlotItem) -> dict[int, str]:
    """Series names as the legend shows them (plots often name series only there)."""
    legend = plot.legend
    if legend is None:
        return {}
    return {id(sample.item): plain_text(label.text) for sample, label in legend.items}


def plain_text(markup: str | None) -> str:
    """Text of a title or label without its HTML tags (escaped text comes back as typed)."""
    text = re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", "\n", markup or ""))
    return html.unescape(text).strip()


def _series_name(item: Any) -> str:
    name = item.name() if hasattr(item, "name") and callable(item.name) else None
    if not name and hasattr(item, "opts") and isinstance(item.opts, dict):
        name = item.opts.get("name")
    return str(name) if name else ""


def _item_xy(item: Any) -> tuple[np.ndarray, np.ndarray] | None:
    if isinstance(item, pg.BarGraphItem):
        opts = item.opts
        height = opts.get("height")
        if height is None:
            return None
        x = opts.get("x")
        if x is None:
            x = opts.get("x0")
        if x is None:
            return None
        h = np.broadcast_to(np.asarray(height, dtype=float), np.shape(np.atleast_1d(x)))
        return np.atleast_1d(np.asarray(x, dtype=float)), np.asarray(h, dtype=float)
    if isinstance(item, pg.PlotDataItem):
        x, y = item.xData, item.yData  # the data as set, before log10 of a log axis
    elif isinstance(item, pg.PlotCurveItem | pg.ScatterPlotItem):
        x, y = item.getData()
    else:
        return None
    if x is None or y is None:
        return np.array([]), np.array([])
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def chart_tables(chart: ChartLike) -> list[DataTable]:
    """The chart's data tables: from its content (the records) or, failing that, its items."""
    content = content_of(chart)
    if content is not None:
        found = content.data_tables()
        if found:
            return found
    tables: dict[str, list[Series]] = {}  # a chart whose owner gives no data: its items
    for s in plotted_data(chart):
        tables.setdefault(s.plot, []).append(Series(s.series, s.x, s.y))
    return [DataTable(plot, "x", tuple(series)) for plot, series in tables.items()]


def chart_headline(chart: ChartLike) -> str:
    """The chart's headline as a slide prints it: Korean particles fitted to the numbers,
    after the random-weights notice when random weights drew it (`weights_notice`)."""
    content = content_of(chart)
    text = attach_particles(content.headline()) if content is not None else ""
    warning = weights_notice.notice()
    return f"{warning}\n{text}" if warning else text


def chart_is_empty(chart: ChartLike) -> bool:
    tables = chart_tables(chart)
    return not tables or all(t.empty for t in tables)


def render_csv(chart: ChartLike) -> bytes:
    """CSV of the chart's data: one table per plot, x first, one named column per series."""
    tables = [t for t in chart_tables(chart) if not t.empty]
    if not tables:
        raise ExportError(EMPTY_CHART_MESSAGE)
    return tables_to_csv(tables)


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """A results table (list of dicts with the same keys) as CSV, numbers as numbers."""
    if not rows:
        return b""
    fields = list(rows[0].keys())
    for row in rows[1:]:
        fields += [k for k in row if k not in fields]
    body = [[_csv_value(row.get(k)) for k in fields] for row in rows]
    return csv_rows([[fields, *body]])


def _csv_value(value: Any) -> Any:
    """Lists as JSON text; everything else as it is (`csv_cell` tells numbers from text)."""
    if isinstance(value, list | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value


EMPTY_CHART_MESSAGE = (
    "This chart has no data yet, so there is nothing to export: run the model (or the lab) "
    "first, then export again."
)
