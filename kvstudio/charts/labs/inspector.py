"""The Cache inspector's view: the K and V rows the cache holds, and what the newest query read.

Owns `CacheInspectorView`. It draws the latest `CacheFrame` (``kvstudio.labs.inspector``)
for the chosen layer and K/V head (`select`) as three heat maps sharing one position axis
(labelled with each position's token): K rows and V rows (position × head_dim) and the
newest query's attention weights (position × the query heads that read this K/V head).
The newest row is outlined; a static cache's empty slots stay empty; a sliding window's
evicted rows are gone. The table has one row per step with the checks that make caching
exact: max |Δ| of the rows already held (0), rows appended per layer (1), and in recompute
mode max |Δ| between recomputed and cached K/V. Switching layer or head redraws without
rerunning.

The inspector is not one of the registry's labs (no notebook function, no command):
`INSPECTOR` declares only its course model; the window's panel
(``kvstudio.ui.labs.inspector_lab``) builds its run from its own boxes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from kvstudio.charts.chart_data import DataTable, Series, table_at
from kvstudio.charts.colour_scale import ColourBar
from kvstudio.charts.labs.base import LabView
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.fixed_columns import FixedColumns, WrappingTitle, use_wrapping_title
from kvstudio.charts.plots.results_table import CHECK, CROSS
from kvstudio.charts.plots.token_axis import TokenAxis, token_tick
from kvstudio.engine.cache.spec import CacheKind
from kvstudio.labs.params import LabSpec

if TYPE_CHECKING:
    from kvstudio.labs import inspector
else:  # torch loads when the inspector first runs
    inspector = LazyModule("kvstudio.labs.inspector")

# Not in the registry's LABS: its parameters are the window panel's boxes.
INSPECTOR = LabSpec("inspector", "Cache inspector", title_ko="캐시 들여다보기", params=(),
                    course_role="cache")
KINDS: tuple[CacheKind, ...] = ("dynamic", "static", "sliding")  # the caches it can inspect
MAX_LABELS = 48  # more rows than this: label every n-th position only
DIVERGING = pg.colormap.get("CET-D1")  # K and V values: blue < 0 < red
SEQUENTIAL = pg.colormap.get("viridis")  # attention weights 0 … max
COLUMN_SHARES = (0.43, 0.33, 0.24)  # K (with the token labels), V, attention
# A step row's names in numbers.json, in the row's order (`_row`, `_step_headers`).
STEP_KEYS = ("step", "token", "rows_held", "appended_per_layer", "old_rows_max_delta",
             "recompute_max_delta_k", "recompute_max_delta_v")


class CacheInspectorView(LabView):
    key = "inspector"
    stepped = True

    @classmethod
    def spec_of(cls) -> LabSpec:
        return INSPECTOR

    def result_type(self) -> type:
        return inspector.CacheFrame

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setBackground("w")
        self.k_plot = self.layout_widget.addPlot(row=0, col=0,
                                                 axisItems={"left": TokenAxis("left")})
        self.v_plot = self.layout_widget.addPlot(row=0, col=1)
        self.attn_plot = self.layout_widget.addPlot(row=0, col=2)
        # Fixed shares of the width at every size (window and slide canvases): K carries the
        # token labels; titles wrap instead of pushing a plot under its neighbour.
        self._columns = FixedColumns(self.layout_widget.ci, (self.k_plot, self.v_plot,
                                                             self.attn_plot), COLUMN_SHARES)
        titles: list[WrappingTitle] = []
        for plot in (self.k_plot, self.v_plot, self.attn_plot):
            use_wrapping_title(plot, titles)
        for plot in (self.v_plot, self.attn_plot):
            plot.getAxis("left").setStyle(showValues=False)  # rows are labelled on K's axis
        self.k_image = pg.ImageItem(axisOrder="row-major")
        self.v_image = pg.ImageItem(axisOrder="row-major")
        self.attn_image = pg.ImageItem(axisOrder="row-major")
        self._newest: list[QGraphicsRectItem] = []
        for plot, image in ((self.k_plot, self.k_image), (self.v_plot, self.v_image),
                            (self.attn_plot, self.attn_image)):
            plot.addItem(image)
            plot.invertY(True)
            plot.setMenuEnabled(True)
            plot.getViewBox().setBackgroundColor("#F2F2F2")  # empty slots show this grey
            outline = QGraphicsRectItem()
            outline.setPen(QPen(QColor("#000000"), 0))
            outline.setVisible(False)
            plot.addItem(outline)
            self._newest.append(outline)
        # A colour bar under each map, in its column: colour read as value.
        self._scales = [
            ColourBar(self.layout_widget.ci, 1, column, cmap, image)
            for column, (cmap, image) in enumerate(
                ((DIVERGING, self.k_image), (DIVERGING, self.v_image),
                 (SEQUENTIAL, self.attn_image)))
        ]
        self.v_plot.setYLink(self.k_plot)
        self.attn_plot.setYLink(self.k_plot)
        self.frame: inspector.CacheFrame | None = None
        self.frames_seen = 0
        self.step_rows: list[tuple[Any, ...]] = []
        self.layer = 0  # the layer and K/V head asked for (`select`)
        self.kv_head = 0
        self.add_chart("cache-inspector", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        self.k_plot.setLabel("bottom", self.tr("head_dim"))
        self.v_plot.setLabel("bottom", self.tr("head_dim"))
        self.attn_plot.setLabel("bottom", self.tr("query head"))
        self.k_plot.setLabel("left", self.tr("position: token"))
        self._draw()
        self._fill_table()

    def kind_name(self, kind: str) -> str:
        """A cache kind as the Cache box and the headline name it."""
        names = {"dynamic": self.tr("dynamic"), "static": self.tr("static (length)"),
                 "sliding": self.tr("sliding window (W)")}
        return names.get(kind, kind)

    def select(self, layer: int, kv_head: int) -> None:
        """Draw this layer and K/V head of the same frames (no rerun)."""
        self.layer, self.kv_head = layer, kv_head
        self._draw()

    # ---- the run --------------------------------------------------------------------------------
    def clear(self) -> None:
        self.frame = None
        self.frames_seen = 0
        self.step_rows = []
        self._draw()
        self._fill_table()

    def show_progress(self, item: object) -> None:
        self.show_result(item)  # each step's frame, drawn as it comes

    def draw_result(self, frame: inspector.CacheFrame) -> None:
        self.frame = frame
        self.frames_seen += 1
        self.step_rows.append(self._row(frame))
        self._draw()
        self._fill_table()

    def step_line(self) -> str:
        """What the newest step did and its checks ("" before the first)."""
        return self._summary(self.frame) if self.frame is not None else ""

    def status_of(self, result: inspector.CacheFrame) -> str:
        return self._summary(result) + " " + self.tr("Finished.")

    def _summary(self, frame: inspector.CacheFrame) -> str:
        text = self.tr("Step {0}: chose {1!r}. {2} rows held;").format(
            frame.step, frame.token_text, frame.held_rows())
        if frame.step == 0:
            text += " " + self.tr("the prefill appended {0} rows per layer.").format(
                frame.rows_appended[0])
        else:
            mark = CHECK if frame.old_rows_unchanged else CROSS
            text += " " + self.tr(
                "old rows max |Δ| = {0:g} {1}; rows appended per layer: {2}."
            ).format(max(frame.old_rows_max_delta), mark, ", ".join(map(str, frame.rows_appended)))
        if frame.recompute_max_delta_k is not None and frame.recompute_max_delta_v is not None:
            text += " " + self.tr(
                "Recomputed vs cached K/V: max |Δ| = {0:.2g} / {1:.2g} ({2})."
            ).format(max(frame.recompute_max_delta_k), max(frame.recompute_max_delta_v),
                     self.tr("same dtype") if frame.recompute_dtype_match
                     else self.tr("dtypes differ"))
        return text

    def _row(self, frame: inspector.CacheFrame) -> tuple[Any, ...]:
        recompute_k = max(frame.recompute_max_delta_k) if frame.recompute_max_delta_k else "—"
        recompute_v = max(frame.recompute_max_delta_v) if frame.recompute_max_delta_v else "—"
        old = max(frame.old_rows_max_delta) if frame.step > 0 else "—"
        return (frame.step, token_tick(frame.token_text, 12), frame.held_rows(),
                ", ".join(map(str, frame.rows_appended)), old, recompute_k, recompute_v)

    # ---- drawing --------------------------------------------------------------------------------
    def _draw(self) -> None:
        frame = self.frame
        if frame is None:
            for image in (self.k_image, self.v_image, self.attn_image):
                image.clear()
            for outline in self._newest:
                outline.setVisible(False)
            for plot in (self.k_plot, self.v_plot, self.attn_plot):
                plot.setTitle("")
            self.k_plot.getAxis("left").setTicks(None)
            for scale in self._scales:
                scale.hide()
            return
        layer, head = self._view()
        keys = frame.keys[layer, :, head, :]  # (R, d)
        values = frame.values[layer, :, head, :]  # (R, d)
        heads = frame.query_heads(head)
        attention = frame.attention[layer, list(heads), :].T  # (R, n_rep)
        for image, data, scale in ((self.k_image, keys, self._scales[0]),
                                   (self.v_image, values, self._scales[1])):
            limit = float(np.nanmax(np.abs(data))) if np.isfinite(data).any() else 1.0
            image.setImage(data, levels=(-limit, limit), autoLevels=False)
            image.setColorMap(DIVERGING)
            scale.show(-limit, limit)
        top = float(np.nanmax(attention)) if np.isfinite(attention).any() else 1.0
        self.attn_image.setImage(attention, levels=(0.0, max(top, 1e-6)), autoLevels=False)
        self.attn_image.setColorMap(SEQUENTIAL)
        self._scales[2].show(0.0, max(top, 1e-6))
        rows = len(frame.positions)
        newest = (frame.positions.index(frame.query_position)
                  if frame.query_position in frame.positions else -1)
        for outline, width in zip(self._newest, (keys.shape[1], keys.shape[1], len(heads)),
                                  strict=True):
            outline.setVisible(newest >= 0)
            outline.setRect(QRectF(0, newest, width, 1))
        labels = [
            (r + 0.5, f"{p}: {token_tick(text, 8)}" if p >= 0 else "")
            for r, (p, text) in enumerate(zip(frame.positions, frame.row_texts, strict=True))
        ]
        every = max(1, -(-rows // MAX_LABELS))
        self.k_plot.getAxis("left").setTicks([labels[::every]])
        query_ticks = [(i + 0.5, f"q{h}") for i, h in enumerate(heads)]
        self.attn_plot.getAxis("bottom").setTicks([query_ticks])
        for plot in (self.k_plot, self.v_plot, self.attn_plot):
            width = len(heads) if plot is self.attn_plot else keys.shape[1]
            plot.setXRange(0, width, padding=0)
        self.k_plot.setYRange(0, rows, padding=0)
        self.k_plot.setTitle(self.tr("K rows: layer {0}, K/V head {1} ({2} rows held)").format(
            layer, head, frame.held_rows()), color="#222")
        self.v_plot.setTitle(self.tr("V rows"), color="#222")
        evicted = float(frame.evicted_attention[layer, list(heads)].max())
        title = self.tr("Attention, position {0}").format(frame.query_position)
        if evicted > 0:
            title += " " + self.tr("({0:.0%} on evicted rows)").format(evicted)
        self.attn_plot.setTitle(title, color="#222")

    def _step_headers(self) -> list[str]:
        """The columns of `step_rows`: the table's headers and the checks' CSV's."""
        return [self.tr("step"), self.tr("token"), self.tr("rows held"),
                self.tr("appended per layer"), self.tr("old rows max |Δ|"),
                self.tr("recompute max |Δ| K"), self.tr("recompute max |Δ| V")]

    def _fill_table(self) -> None:
        self.table.set_rows(self._step_headers(), self.step_rows)
        self.table.scrollToBottom()

    # ---- exports ---------------------------------------------------------------------------------
    def headline(self) -> str:
        """What the view shows and the exactness checks over every step so far."""
        frame = self.frame
        if frame is None:
            return ""
        layer, head = self._view()
        first = self.tr("Layer {0}, K/V head {1}, step {2}: {3} rows held (cache: {4})").format(
            layer, head, frame.step, frame.held_rows(), self.kind_name(frame.cache_kind))
        decode = [row for row in self.step_rows if row[0] > 0]
        old = max((float(row[4]) for row in decode), default=0.0)
        one_row = all(row[3] == ", ".join(["1"] * frame.num_layers) for row in decode)
        second = self.tr(
            "old rows max |Δ| over {0} steps: {1:g}; one row appended per layer: {2}"
        ).format(len(decode), old, CHECK if one_row else CROSS)
        if frame.recompute_max_delta_k is not None and frame.recompute_max_delta_v is not None:
            second += " · " + self.tr("recomputed vs cached K/V max |Δ| {0:.2g} / {1:.2g}").format(
                max(frame.recompute_max_delta_k), max(frame.recompute_max_delta_v))
        return first + "\n" + second

    def data_tables(self) -> list[DataTable]:
        """The heat maps' numbers (one row per cache row) and the per-step checks."""
        frame = self.frame
        if frame is None:
            return []
        layer, head = self._view()
        rows = tuple(range(len(frame.positions)))
        labels = (Series(self.tr("position"), rows,
                         tuple(p if p >= 0 else None for p in frame.positions)),
                  Series(self.tr("token"), rows, frame.row_texts))

        def matrix(data: np.ndarray, prefix: str) -> tuple[Series, ...]:  # (R, columns)
            return tuple(Series(f"{prefix}{c}", rows, _floats(data[:, c]))
                         for c in range(data.shape[1]))

        heads = frame.query_heads(head)
        attention = frame.attention[layer, list(heads), :].T  # (R, n_rep)
        slot = self.tr("cache row")
        headers = self._step_headers()  # (step and token, then the checks: columns 2 to 6)
        checks = [(headers[index], [row[index] if row[index] != "—" else None
                                    for row in self.step_rows]) for index in range(2, 7)]
        return [
            DataTable(self.tr("K rows"), slot,
                      labels + matrix(frame.keys[layer, :, head, :], "K d")),
            DataTable(self.tr("V rows"), slot,
                      labels + matrix(frame.values[layer, :, head, :], "V d")),
            DataTable(self.tr("Attention of the newest query"), slot,
                      labels + tuple(Series(f"q{h}", rows, _floats(attention[:, i]))
                                     for i, h in enumerate(heads))),
            table_at(self.tr("Checks per step"), self.tr("step"),
                     [row[0] for row in self.step_rows], checks),
        ]

    def _view(self) -> tuple[int, int]:
        """The layer and K/V head drawn (clamped to the frame)."""
        frame = self.frame
        assert frame is not None
        return min(self.layer, frame.num_layers - 1), min(self.kv_head, frame.num_kv_heads - 1)

    def numbers(self) -> dict[str, Any]:
        frame = self.frame
        if frame is None:
            return {}
        layer, head = self.layer, self.kv_head
        return {
            "mode": frame.mode,
            "cache": frame.cache_kind,
            "layer": layer,
            "kv_head": head,
            "positions": list(frame.positions),
            "tokens": list(frame.row_texts),
            "keys": _nested(frame.keys[layer, :, head, :]),
            "values": _nested(frame.values[layer, :, head, :]),
            "attention": {
                f"q{h}": _nested(frame.attention[layer, h, :]) for h in frame.query_heads(head)
            },
            "steps": [dict(zip(STEP_KEYS, row, strict=True)) for row in self.step_rows],
        }


def _floats(column: np.ndarray) -> tuple[float | None, ...]:
    """A column of a heat map for its CSV, empty slots (NaN) as None."""
    return tuple(None if np.isnan(v) else float(v) for v in column)


def _nested(array: np.ndarray) -> Any:
    """A numpy array as nested lists, empty slots (NaN) as None, for numbers.json."""
    if array.ndim == 1:
        return list(_floats(array))
    return [_nested(row) for row in array]
