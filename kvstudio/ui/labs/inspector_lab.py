"""The Cache inspector tab: the K and V rows the cache holds, and what the newest query read.

Owns `CacheInspectorPanel`. It steps the core `CacheInspector` on the lab
thread (Start, Step, Run to end) and draws the latest `CacheFrame` for the
chosen layer and K/V head as three heat maps sharing one position axis
(labelled with each position's token): K rows and V rows (position × head_dim)
and the newest query's attention weights (position × the query heads that
read this K/V head). The newest row is outlined; a static cache's empty slots
stay empty; a sliding window's evicted rows are gone. The table has one row
per step with the checks that make caching exact: max |Δ| of the rows already
held (0), rows appended per layer (1), and in recompute mode max |Δ| between
recomputed and cached K/V. Switching layer or head redraws without rerunning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QLineEdit,
    QWidget,
)

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.colour_scale import ColourBar
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.fixed_columns import FixedColumns, WrappingTitle, use_wrapping_title
from kvstudio.charts.plots.results_table import CHECK, CROSS
from kvstudio.charts.plots.token_axis import TokenAxis, token_tick
from kvstudio.engine.cache.spec import CacheKind, CacheSpec
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.spin_boxes import int_box
from kvstudio.ui.labs.shared.step_navigation import SteppedLabPanel
from kvstudio.ui.run.lab_worker import JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.engine.backends import minimind as engine_backend
    from kvstudio.labs import common as lab_common
    from kvstudio.labs import inspector
else:  # torch loads when the inspector first runs
    engine_backend = LazyModule("kvstudio.engine.backends.minimind")
    inspector = LazyModule("kvstudio.labs.inspector")
    lab_common = LazyModule("kvstudio.labs.common")

DEFAULT_QUESTION = COURSE.question  # the course preset's question
MAX_LABELS = 48  # more rows than this: label every n-th position only
DIVERGING = pg.colormap.get("CET-D1")  # K and V values: blue < 0 < red
SEQUENTIAL = pg.colormap.get("viridis")  # attention weights 0 … max
COLUMN_SHARES = (0.43, 0.33, 0.24)  # K (with the token labels), V, attention


class CacheInspectorPanel(SteppedLabPanel):  # Start shows the prefill
    course_role = "cache"  # the course's model for this lab (lab_models.py)
    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt = QLineEdit(DEFAULT_QUESTION)
        self.mode = QComboBox()
        self.kind = QComboBox()
        self.cache_size = int_box(2, 4096, 64)
        self.new_tokens = int_box(1, 256, 16)
        self.layer = int_box(0, 3, 0)
        self.kv_head = int_box(0, 1, 0)
        for key, widget in (
            ("prompt", self.prompt),
            ("mode", self.mode),
            ("kind", self.kind),
            ("size", self.cache_size),
            ("new", self.new_tokens),
            ("layer", self.layer),
            ("head", self.kv_head),
        ):
            self.add_field(key, widget)
        self.layer.valueChanged.connect(self._on_view_changed)
        self.kv_head.valueChanged.connect(self._on_view_changed)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.k_plot = self.view.addPlot(row=0, col=0, axisItems={"left": TokenAxis("left")})
        self.v_plot = self.view.addPlot(row=0, col=1)
        self.attn_plot = self.view.addPlot(row=0, col=2)
        # Fixed shares of the width at every size (window and slide canvases): K carries the
        # token labels; titles wrap instead of pushing a plot under its neighbour.
        self._columns = FixedColumns(
            self.view.ci, (self.k_plot, self.v_plot, self.attn_plot), COLUMN_SHARES
        )
        titles: list[WrappingTitle] = []
        for plot in (self.k_plot, self.v_plot, self.attn_plot):
            use_wrapping_title(plot, titles)
        for plot in (self.v_plot, self.attn_plot):
            plot.getAxis("left").setStyle(showValues=False)  # rows are labelled on K's axis
        self.k_image = pg.ImageItem(axisOrder="row-major")
        self.v_image = pg.ImageItem(axisOrder="row-major")
        self.attn_image = pg.ImageItem(axisOrder="row-major")
        self._newest: list[QGraphicsRectItem] = []
        for plot, image in (
            (self.k_plot, self.k_image),
            (self.v_plot, self.v_image),
            (self.attn_plot, self.attn_image),
        ):
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
            ColourBar(self.view.ci, 1, column, cmap, image)
            for column, (cmap, image) in enumerate(
                ((DIVERGING, self.k_image), (DIVERGING, self.v_image),
                 (SEQUENTIAL, self.attn_image)))
        ]
        self.v_plot.setYLink(self.k_plot)
        self.attn_plot.setYLink(self.k_plot)
        self.frame: inspector.CacheFrame | None = None
        self.frames_seen = 0
        self.step_rows: list[tuple[Any, ...]] = []
        self.add_chart("cache-inspector", self.view)
        self.split.setSizes([900, 320])  # the heat maps need the width more than the table
        self.retranslate()

    def title(self) -> str:
        return self.tr("Cache inspector")

    def retranslate(self) -> None:
        super().retranslate()
        for box, items in (
            (self.mode, ((self.tr("cached"), "cached"), (self.tr("recompute"), "recompute"))),
            (
                self.kind,
                (
                    (self.tr("dynamic"), "dynamic"),
                    (self.tr("static (length)"), "static"),
                    (self.tr("sliding window (W)"), "sliding"),
                ),
            ),
        ):
            current = box.currentData()
            box.clear()
            for text, data in items:
                box.addItem(text, data)
            if current is not None:
                box.setCurrentIndex(max(0, box.findData(current)))
        self.explanation.setText(
            self.tr(
                "What the KV cache holds, step by step, for one layer and one K/V head: the K "
                "and V rows (one per position, head_dim numbers each) and how much the newest "
                "query looked at each position, for every query head that reads this K/V head. "
                "Rows already in the cache never change (max |Δ| = 0) and each step appends "
                "exactly one row per layer; in recompute mode the recomputed rows equal the "
                "cached ones. That is why caching gives the same tokens."
            )
        )
        self.set_field_names(
            {
                "prompt": self.tr("Prompt"),
                "mode": self.tr("Mode"),
                "kind": self.tr("Cache"),
                "size": self.tr("Static length / window W"),
                "new": self.tr("New tokens"),
                "layer": self.tr("Layer"),
                "head": self.tr("K/V head"),
            }
        )
        self.k_plot.setLabel("bottom", self.tr("head_dim"))
        self.v_plot.setLabel("bottom", self.tr("head_dim"))
        self.attn_plot.setLabel("bottom", self.tr("query head"))
        self.k_plot.setLabel("left", self.tr("position: token"))
        self._draw()
        self._fill_table()

    # ---- running --------------------------------------------------------------------------------
    def set_model(self, model: LoadedModel | None) -> None:
        super().set_model(model)
        backend = model.backend if model is not None else None
        if backend is not None:
            self.layer.setMaximum(backend.num_layers - 1)
            self.kv_head.setMaximum(backend.num_kv_heads - 1)

    def make_job(self, model: LoadedModel) -> JobFactory:
        backend = model.backend
        if not isinstance(backend, engine_backend.MiniMindBackend):
            raise ValueError(
                "The cache inspector reads our own model's attention; open a KV Studio model "
                "folder or a MiniMind .pth."
            )
        ids = lab_common.prompt_ids(model, self.prompt.text())
        size = self.cache_size.value()
        kind: CacheKind = self.kind.currentData() or "dynamic"
        spec = CacheSpec(kind, max_length=size, window=size)
        stepper = inspector.CacheInspector(
            backend,
            model.tokenizer,
            ids,
            mode=self.mode.currentData() or "cached",
            cache=spec,
            max_new_tokens=self.new_tokens.value(),
        )
        return lambda: iter(stepper)

    def clear_views(self) -> None:
        self.frame = None
        self.frames_seen = 0
        self.step_rows = []
        self._draw()
        self._fill_table()

    def show_progress(self, item: object) -> None:
        if isinstance(item, inspector.CacheFrame):
            self._add_frame(item)

    def show_result(self, result: object) -> None:
        if isinstance(result, inspector.CacheFrame):
            self._add_frame(result)
            self.progress.setRange(0, 1)
            self.progress.setValue(1)
            self.set_status(lambda: self._summary(result) + " " + self.tr("Finished."))

    def _add_frame(self, frame: inspector.CacheFrame) -> None:
        self.frame = frame
        self.frames_seen += 1
        self.progress.setRange(0, self.new_tokens.value())
        self.progress.setValue(frame.step + 1)
        self.step_rows.append(self._row(frame))
        self._draw()
        self._fill_table()
        self.set_status(lambda: self._summary(frame))

    def _summary(self, frame: inspector.CacheFrame) -> str:
        text = self.tr("Step {0}: chose {1!r}. {2} rows held;").format(
            frame.step, frame.token_text, frame.held_rows()
        )
        if frame.step == 0:
            text += " " + self.tr("the prefill appended {0} rows per layer.").format(
                frame.rows_appended[0]
            )
        else:
            mark = CHECK if frame.old_rows_unchanged else CROSS
            text += " " + self.tr(
                "old rows max |Δ| = {0:g} {1}; rows appended per layer: {2}."
            ).format(max(frame.old_rows_max_delta), mark, ", ".join(map(str, frame.rows_appended)))
        if frame.recompute_max_delta_k is not None and frame.recompute_max_delta_v is not None:
            text += " " + self.tr(
                "Recomputed vs cached K/V: max |Δ| = {0:.2g} / {1:.2g} ({2})."
            ).format(
                max(frame.recompute_max_delta_k),
                max(frame.recompute_max_delta_v),
                self.tr("same dtype") if frame.recompute_dtype_match else self.tr("dtypes differ"),
            )
        return text

    def _row(self, frame: inspector.CacheFrame) -> tuple[Any, ...]:
        recompute_k = max(frame.recompute_max_delta_k) if frame.recompute_max_delta_k else "—"
        recompute_v = max(frame.recompute_max_delta_v) if frame.recompute_max_delta_v else "—"
        old = max(frame.old_rows_max_delta) if frame.step > 0 else "—"
        return (
            frame.step,
            token_tick(frame.token_text, 12),
            frame.held_rows(),
            ", ".join(map(str, frame.rows_appended)),
            old,
            recompute_k,
            recompute_v,
        )

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
        newest = (
            frame.positions.index(frame.query_position)
            if frame.query_position in frame.positions
            else -1
        )
        for outline, width in zip(
            self._newest, (keys.shape[1], keys.shape[1], len(heads)), strict=True
        ):
            outline.setVisible(newest >= 0)
            outline.setRect(QRectF(0, newest, width, 1))
        labels = [
            (r + 0.5, f"{p}: {token_tick(text, 8)}" if p >= 0 else "")
            for r, (p, text) in enumerate(zip(frame.positions, frame.row_texts, strict=True))
        ]
        every = max(1, -(-rows // MAX_LABELS))
        self.k_plot.getAxis("left").setTicks([labels[::every]])
        self.attn_plot.getAxis("bottom").setTicks(
            [[(i + 0.5, f"q{h}") for i, h in enumerate(heads)]]
        )
        for plot in (self.k_plot, self.v_plot, self.attn_plot):
            width = len(heads) if plot is self.attn_plot else keys.shape[1]
            plot.setXRange(0, width, padding=0)
        self.k_plot.setYRange(0, rows, padding=0)
        self.k_plot.setTitle(
            self.tr("K rows: layer {0}, K/V head {1} ({2} rows held)").format(
                layer, head, frame.held_rows()
            ),
            color="#222",
        )
        self.v_plot.setTitle(self.tr("V rows"), color="#222")
        evicted = float(frame.evicted_attention[layer, list(heads)].max())
        title = self.tr("Attention, position {0}").format(frame.query_position)
        if evicted > 0:
            title += " " + self.tr("({0:.0%} on evicted rows)").format(evicted)
        self.attn_plot.setTitle(title, color="#222")

    def _fill_table(self) -> None:
        self.table.set_rows(
            [
                self.tr("step"),
                self.tr("token"),
                self.tr("rows held"),
                self.tr("appended per layer"),
                self.tr("old rows max |Δ|"),
                self.tr("recompute max |Δ| K"),
                self.tr("recompute max |Δ| V"),
            ],
            self.step_rows,
        )
        self.table.scrollToBottom()

    def headline(self) -> str:
        """What the view shows and the exactness checks over every step so far."""
        frame = self.frame
        if frame is None:
            return ""
        layer, head = self._view()
        first = self.tr("Layer {0}, K/V head {1}, step {2}: {3} rows held (cache: {4})").format(
            layer, head, frame.step, frame.held_rows(), self._kind_name(frame.cache_kind)
        )
        decode = [row for row in self.step_rows if row[0] > 0]
        old = max((float(row[4]) for row in decode), default=0.0)
        one_row = all(row[3] == ", ".join(["1"] * frame.num_layers) for row in decode)
        second = self.tr(
            "old rows max |Δ| over {0} steps: {1:g}; one row appended per layer: {2}"
        ).format(len(decode), old, CHECK if one_row else CROSS)
        if frame.recompute_max_delta_k is not None and frame.recompute_max_delta_v is not None:
            second += " · " + self.tr("recomputed vs cached K/V max |Δ| {0:.2g} / {1:.2g}").format(
                max(frame.recompute_max_delta_k), max(frame.recompute_max_delta_v)
            )
        return first + "\n" + second

    def data_tables(self) -> list[DataTable]:
        """The heat maps' numbers (one row per cache row) and the per-step checks."""
        frame = self.frame
        if frame is None:
            return []
        layer, head = self._view()
        rows = tuple(range(len(frame.positions)))
        position = self.tr("position")
        token = self.tr("token")
        labels = (
            Series(position, rows, tuple(p if p >= 0 else None for p in frame.positions)),
            Series(token, rows, frame.row_texts),
        )

        def matrix(data: np.ndarray, prefix: str) -> tuple[Series, ...]:  # (R, columns)
            return tuple(
                Series(
                    f"{prefix}{c}",
                    rows,
                    tuple(None if np.isnan(v) else float(v) for v in data[:, c]),
                )
                for c in range(data.shape[1])
            )

        heads = frame.query_heads(head)
        attention = frame.attention[layer, list(heads), :].T  # (R, n_rep)
        slot = self.tr("cache row")
        steps = tuple(row[0] for row in self.step_rows)
        checks = tuple(
            Series(
                header,
                steps,
                tuple(row[index] if row[index] != "—" else None for row in self.step_rows),
            )
            for index, header in (
                (2, self.tr("rows held")),
                (3, self.tr("appended per layer")),
                (4, self.tr("old rows max |Δ|")),
                (5, self.tr("recompute max |Δ| K")),
                (6, self.tr("recompute max |Δ| V")),
            )
        )
        return [
            DataTable(
                self.tr("K rows"), slot, labels + matrix(frame.keys[layer, :, head, :], "K d")
            ),
            DataTable(
                self.tr("V rows"), slot, labels + matrix(frame.values[layer, :, head, :], "V d")
            ),
            DataTable(
                self.tr("Attention of the newest query"),
                slot,
                labels
                + tuple(
                    Series(
                        f"q{h}",
                        rows,
                        tuple(None if np.isnan(v) else float(v) for v in attention[:, i]),
                    )
                    for i, h in enumerate(heads)
                ),
            ),
            DataTable(self.tr("Checks per step"), self.tr("step"), checks),
        ]

    def _kind_name(self, kind: str) -> str:
        index = self.kind.findData(kind)
        return self.kind.itemText(index) if index >= 0 else kind

    def _view(self) -> tuple[int, int]:
        """The layer and K/V head drawn (clamped to the frame)."""
        frame = self.frame
        assert frame is not None
        return (
            min(self.layer.value(), frame.num_layers - 1),
            min(self.kv_head.value(), frame.num_kv_heads - 1),
        )

    def numbers(self) -> dict[str, Any]:
        frame = self.frame
        if frame is None:
            return {}
        layer, head = self.layer.value(), self.kv_head.value()
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
            "steps": [
                {
                    "step": row[0],
                    "token": row[1],
                    "rows_held": row[2],
                    "appended_per_layer": row[3],
                    "old_rows_max_delta": row[4],
                    "recompute_max_delta_k": row[5],
                    "recompute_max_delta_v": row[6],
                }
                for row in self.step_rows
            ],
        }

    # ---- slots ----------------------------------------------------------------------------------
    def _on_view_changed(self) -> None:
        self._draw()


def _nested(array: np.ndarray) -> Any:
    """A numpy array as nested lists, empty slots (NaN) as None, for numbers.json."""
    if array.ndim == 1:
        return [None if np.isnan(v) else float(v) for v in array]
    return [_nested(row) for row in array]
