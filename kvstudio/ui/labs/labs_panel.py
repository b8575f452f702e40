"""All labs in one page: a tab per lab, one model for all, one slide pack for all.

Owns `PANEL_TYPES` (the window panel of each lab in ``kvstudio.labs.registry``, by
its key: the window's one list of labs) and `LabsPanel`: it gives every lab of the
registry that has no tab of its own (chat has) a tab, in the registry's order, and
builds a lab's panel the first time its tab opens or its panel is asked for
(`panels`): twelve panels with their charts are seconds of Python on a laptop, and
a lecture opens a few. It hands the built panels the loaded model (and starts loading
the course models every lab runs on as soon as that model is known), collects their
charts, numbers and tables for the slide pack, says when a lab that measures time is
running (`timing_changed`: the live run waits meanwhile, so the lab's timings are not
shared with it: the registry's ``times_model``), and stops their threads on shutdown.
It runs nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from kvstudio.charts.chart_data import ChartLike
from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.labs.base import slide_pack_of
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.registry import LABS, spec
from kvstudio.ui.app.tabs import swap_page
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
from kvstudio.ui.labs.shared.lab_models import LAB_MODELS
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


class LazyPanels(Mapping[str, LabPanel]):
    """Every tabbed lab's panel by key; ``panels[key]`` builds it the first time."""

    def __init__(self, owner: LabsPanel) -> None:
        self._owner = owner
        self.keys_in_order = [lab.key for lab in LABS if not lab.own_tab]
        self.built: dict[str, LabPanel] = {}

    def __getitem__(self, key: str) -> LabPanel:
        if key not in self.keys_in_order:
            raise KeyError(key)
        if key not in self.built:
            self.built[key] = self._owner.build(key)
        return self.built[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_in_order)

    def __len__(self) -> int:
        return len(self.keys_in_order)


class LabsPanel(RetranslateOnLanguageChange, QWidget):
    failed = Signal(str)  # a lab's message, for the window's status bar
    timing_changed = Signal(bool)  # a lab that times the model started (True) or ended
    panel_built = Signal(object)  # a lab's panel, just built (its tab opened)

    def __init__(
        self, exporter: ChartExporter, parent: QWidget | None = None,
        build_guard: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        """`build_guard`: what each panel is built inside (the window passes its step gate's
        `holding`, so the live run's steps wait while a tab's panel is built)."""
        super().__init__(parent)
        self._exporter = exporter
        self._model: LoadedModel | None = None
        self._timing = False
        self.panels = LazyPanels(self)
        self._build_guard = build_guard
        self.tabs = QTabWidget()
        self.tabs.setObjectName("labTabs")
        self._empty_pages = {key: QWidget() for key in self.panels}  # until the tab opens
        for key, page in self._empty_pages.items():
            self.tabs.addTab(page, PANEL_TYPES[key].tab_title())
        # Connected first, so the tab's panel stands before anyone else hears of the change.
        self.tabs.currentChanged.connect(self._on_tab_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    def build(self, key: str) -> LabPanel:
        """Build `key`'s panel, wire it and put it in its tab (`panels` calls this once)."""
        with self._build_guard():
            lab = PANEL_TYPES[key](self._exporter)
            lab.failed.connect(self.failed)
            if spec(key).times_model:
                lab.runner.running_changed.connect(self._on_lab_running_changed)
            lab.set_model(self._model)
            placeholder = self._empty_pages.pop(key)
            swap_page(self.tabs, placeholder, lab)
            placeholder.deleteLater()
        self.panel_built.emit(lab)
        return lab

    def _on_tab_changed(self, index: int) -> None:
        if 0 <= index < len(self.panels):
            _ = self.panels[self.panels.keys_in_order[index]]

    def showEvent(self, event: QShowEvent) -> None:
        self._on_tab_changed(self.tabs.currentIndex())  # the first tab's panel, when seen
        super().showEvent(event)

    def labs(self) -> list[LabPanel]:
        """Every panel, in the registry's (and the tabs') order: each built if it was not."""
        return list(self.panels.values())

    def built_labs(self) -> list[LabPanel]:
        """The panels built so far (a lab never opened has no result, model or thread)."""
        return [self.panels.built[key] for key in self.panels if key in self.panels.built]

    def timing_labs(self) -> list[LabPanel]:
        """The built labs whose results are times: the live model must not step meanwhile."""
        return [lab for key, lab in self.panels.built.items() if spec(key).times_model]

    @property
    def timing(self) -> bool:
        return self._timing

    def _on_lab_running_changed(self, _running: bool) -> None:
        timing = any(lab.runner.busy for lab in self.timing_labs())
        if timing != self._timing:
            self._timing = timing
            self.timing_changed.emit(timing)

    def set_model(self, model: LoadedModel | None) -> None:
        """The window's model for every lab: built panels get it now, the others when
        built; the course models the labs run on start loading now either way."""
        self._model = model
        for key in self.panels:
            LAB_MODELS.prefetch(model, PANEL_TYPES[key].course_role)  # on a worker thread
        for lab in self.built_labs():
            lab.set_model(model)

    def models_loading(self) -> list[Future[LoadedModel]]:
        """The labs' models still loading off the GUI thread (`LabModels.prefetch`)."""
        shared = {id(LAB_MODELS): LAB_MODELS,
                  **{id(lab.lab_models): lab.lab_models for lab in self.built_labs()}}
        return [future for models in shared.values() for future in models.loading()]

    def slide_pack(
        self,
    ) -> tuple[dict[str, ChartLike], dict[str, Any], dict[str, Sequence[Mapping[str, Any]]]]:
        """Charts, numbers and tables of every lab that has a result."""
        return slide_pack_of(self.built_labs())

    def shutdown(self) -> bool:
        return all([lab.shutdown() for lab in self.built_labs()])

    def retranslate(self) -> None:
        for index, key in enumerate(self.panels):
            self.tabs.setTabText(index, PANEL_TYPES[key].tab_title())

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)
