"""All labs in one page: a tab per lab, one model for all, one slide pack for all.

Owns `PANEL_TYPES` (the window panel of each lab in ``kvstudio.labs.registry``, by
its key: the window's one list of labs) and `LabsPanel`: it creates a panel for
every lab of the registry that has no tab of its own (chat has), in the
registry's order, hands them the loaded model,
collects their charts, numbers and tables for the slide pack, says when a lab
that measures time is running (`timing_changed`: the live run waits meanwhile,
so the lab's timings are not shared with it: the registry's ``times_model``), and
stops their threads on shutdown. It runs nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from kvstudio.charts.chart_data import ChartLike
from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.labs.base import slide_pack_of
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.registry import LABS
from kvstudio.ui.labs.beam_lab import BeamSearchPanel
from kvstudio.ui.labs.cache_kinds_lab import CacheKindsPanel
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.compare_lab import CacheVsRecomputePanel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.labs.paged_lab import PagedCachePanel
from kvstudio.ui.labs.projector_lab import ProjectorPanel
from kvstudio.ui.labs.quantized_lab import QuantizedCachePanel
from kvstudio.ui.labs.serving import ServingPanel
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.labs.speculative_lab import SpeculativePanel
from kvstudio.ui.labs.sweep_lab import LengthSweepPanel
from kvstudio.ui.labs.temperature_lab import TemperaturePanel
from kvstudio.ui.labs.twin_lab import EngineTwinPanel
from kvstudio.ui.slides.export_menu import ChartExporter

# The window panel of each lab of the registry (tests/ui/test_lab_registry.py: every lab has one).
PANEL_TYPES: dict[str, type[LabPanel]] = {
    "compare": CacheVsRecomputePanel,
    "sample": TemperaturePanel,
    "cutoff": TopPTopKPanel,
    "cache_kinds": CacheKindsPanel,
    "sweep": LengthSweepPanel,
    "paged": PagedCachePanel,
    "quantized": QuantizedCachePanel,
    "projector": ProjectorPanel,
    "serving": ServingPanel,
    "speculative": SpeculativePanel,
    "beam": BeamSearchPanel,
    "chat": ChatPanel,
    "twin": EngineTwinPanel,
}

class LabsPanel(RetranslateOnLanguageChange, QWidget):
    failed = Signal(str)  # a lab's message, for the window's status bar
    timing_changed = Signal(bool)  # a lab that times the model started (True) or ended

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panels: dict[str, LabPanel] = {
            lab.key: PANEL_TYPES[lab.key](exporter) for lab in LABS if not lab.own_tab
        }
        self.tabs = QTabWidget()
        self.tabs.setObjectName("labTabs")
        for lab in self.labs():
            self.tabs.addTab(lab, lab.title())
            lab.failed.connect(self.failed)
        self._timing = False
        for lab in self.timing_labs():
            lab.runner.running_changed.connect(self._on_lab_running_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    def labs(self) -> list[LabPanel]:
        """The panels, in the registry's (and the tabs') order."""
        return list(self.panels.values())

    def timing_labs(self) -> list[LabPanel]:
        """The labs whose results are times: the live model must not step meanwhile."""
        return [self.panels[lab.key] for lab in LABS if lab.times_model and lab.key in self.panels]

    @property
    def timing(self) -> bool:
        return self._timing

    def _on_lab_running_changed(self, _running: bool) -> None:
        timing = any(lab.runner.busy for lab in self.timing_labs())
        if timing != self._timing:
            self._timing = timing
            self.timing_changed.emit(timing)

    def set_model(self, model: LoadedModel | None) -> None:
        for lab in self.labs():
            lab.set_model(model)

    def models_loading(self) -> list[Future[LoadedModel]]:
        """The labs' models still loading off the GUI thread (`LabModels.prefetch`)."""
        shared = {id(lab.lab_models): lab.lab_models for lab in self.labs()}
        return [future for models in shared.values() for future in models.loading()]

    def slide_pack(
        self,
    ) -> tuple[dict[str, ChartLike], dict[str, Any], dict[str, Sequence[Mapping[str, Any]]]]:
        """Charts, numbers and tables of every lab that has a result."""
        return slide_pack_of(self.labs())

    def shutdown(self) -> bool:
        return all([lab.shutdown() for lab in self.labs()])

    def retranslate(self) -> None:
        for index, lab in enumerate(self.labs()):
            self.tabs.setTabText(index, lab.title())

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)
