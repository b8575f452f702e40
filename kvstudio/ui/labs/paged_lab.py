"""Lab: the paged KV cache — blocks, block tables, shared prompt blocks.

Owns `PagedCachePanel`: the boxes (samples, N, block size: ``kvstudio.labs.registry``'s
PAGED, labelled there, built by `LabPanel`) and the slider that picks the step
whose block tables are drawn, beside `PagedCacheView`
(``kvstudio.charts.labs.paged``), which draws the bytes a preallocated, a
dynamic and a paged cache hold per step next to those block tables; the run is
``kvstudio.labs.cache.paged.run`` (30 samples of one question, same seed).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QSlider

from kvstudio.charts.labs.paged import PagedCacheView
from kvstudio.ui.labs.shared.base import LabPanel


class PagedCachePanel(LabPanel):
    view_type = PagedCacheView  # its course model and its boxes: the registry's PAGED

    def add_widgets(self) -> None:
        assert isinstance(self.lab_view, PagedCacheView)
        self.blocks_view: PagedCacheView = self.lab_view
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setRange(0, 0)
        self.step_slider.valueChanged.connect(self.blocks_view.show_step)
        self.result_ready.connect(self._follow_result)  # first: before anyone else hears it
        self.add_field("step", self.step_slider)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "30 answers to one question, sampled with one seed, stored three ways: "
                "preallocated to P + N tokens per row, a dynamic cache that grows every row "
                "each step, and a paged cache of fixed-size blocks. Rows share the prompt's "
                "blocks (a shared block is stored once; a row that appends to a shared, "
                "half-full block copies it first), finished rows stop growing, and the only "
                "waste is each row's last block."
            )
        )
        self.set_field_names({"step": self.tr("Block table at step")})

    def clear_views(self) -> None:
        super().clear_views()
        self.step_slider.setRange(0, 0)

    def _follow_result(self) -> None:
        """A new result: the slider spans its steps and stands on the last, as the view does."""
        last = max(self.blocks_view.step_count() - 1, 0)
        with QSignalBlocker(self.step_slider):
            self.step_slider.setRange(0, last)
            self.step_slider.setValue(last)
