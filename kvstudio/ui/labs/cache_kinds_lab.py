"""Lab: dynamic vs static vs sliding-window cache on one prompt.

Owns `CacheKindsPanel`: the boxes P, N and W beside `CacheKindsView`
(``kvstudio.charts.labs.cache_kinds``), which draws the bytes each cache holds
and the keys each new token attends to; the run is
``kvstudio.labs.cache.kinds.run``.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from kvstudio.charts.labs.cache_kinds import CacheKindsView
from kvstudio.labs.registry import CACHE_KINDS as LAB
from kvstudio.ui.app.spin_boxes import param_int_box
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter


class CacheKindsPanel(LabPanel):
    view_type = CacheKindsView  # its course model: the registry's course_role

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt_tokens = param_int_box(LAB.param("prompt_tokens"))
        self.new_tokens = param_int_box(LAB.param("new_tokens"))
        self.window_size = param_int_box(LAB.param("window"))
        for key, widget in (
            ("prompt", self.prompt_tokens),
            ("new", self.new_tokens),
            ("window", self.window_size),
        ):
            self.add_field(key, widget)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Cache kinds")

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "The same greedy run with three caches. Dynamic grows by one token per step; "
                "static reserves P + N tokens up front; with a sliding window W each token sees "
                "the last W tokens, itself included (transformers' sliding_window), so the "
                "cache keeps W − 1 and its memory stops growing there. When W covers the whole "
                "context the output must match the dynamic cache."
            )
        )
        self.set_field_names(
            {
                "prompt": self.tr("Prompt tokens P"),
                "new": self.tr("New tokens N"),
                "window": self.tr("Sliding window W"),
            }
        )
