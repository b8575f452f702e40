"""The Cache inspector tab: the K and V rows the cache holds, and what the newest query read.

Owns `CacheInspectorPanel`: the boxes (prompt, mode, cache kind and size, new tokens;
layer and K/V head pick what is drawn) beside `CacheInspectorView`
(``kvstudio.charts.labs.inspector``), which draws the latest `CacheFrame` as K, V and
attention heat maps and a row of exactness checks per step. It steps the core
`CacheInspector` (``kvstudio.labs.inspector``) on the lab thread (Start, Step, Run to
end). Switching layer or head redraws without rerunning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QLineEdit

from kvstudio.charts.labs.inspector import KINDS, CacheInspectorView
from kvstudio.charts.lazy import LazyModule
from kvstudio.engine.cache.spec import CacheKind, CacheSpec
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.spin_boxes import int_box
from kvstudio.ui.labs.shared.step_navigation import SteppedLabPanel
from kvstudio.ui.run.lab_worker import JobFactory

if TYPE_CHECKING:
    from kvstudio.engine.backends import minimind as engine_backend
    from kvstudio.labs import common as lab_common
    from kvstudio.labs import inspector
else:  # torch loads when the inspector first runs
    engine_backend = LazyModule("kvstudio.engine.backends.minimind")
    inspector = LazyModule("kvstudio.labs.inspector")
    lab_common = LazyModule("kvstudio.labs.common")

DEFAULT_QUESTION = COURSE.question  # the course preset's question


class CacheInspectorPanel(SteppedLabPanel):  # Start shows the prefill
    view_type = CacheInspectorView  # its course model: the view's declaration (cache)

    def add_widgets(self) -> None:
        super().add_widgets()
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
        assert isinstance(self.lab_view, CacheInspectorView)
        self.inspector_view: CacheInspectorView = self.lab_view
        self.layer.valueChanged.connect(self._on_view_changed)
        self.kv_head.valueChanged.connect(self._on_view_changed)
        self.split.setSizes([900, 320])  # the heat maps need the width more than the table

    def retranslate(self) -> None:
        super().retranslate()
        for box, items in (
            (self.mode, ((self.tr("cached"), "cached"), (self.tr("recompute"), "recompute"))),
            (self.kind, tuple((self.inspector_view.kind_name(kind), kind) for kind in KINDS)),
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

    def draw_progress(self, items: Sequence[object]) -> None:
        super().draw_progress(items)  # the view draws each new frame and shows the latest
        frame = self.inspector_view.frame
        if items and frame is not None:
            self.progress.setRange(0, self.new_tokens.value())
            self.progress.setValue(frame.step + 1)
            self.set_status(self.inspector_view.step_line)

    # ---- slots ----------------------------------------------------------------------------------
    def _on_view_changed(self) -> None:
        self.inspector_view.select(self.layer.value(), self.kv_head.value())
