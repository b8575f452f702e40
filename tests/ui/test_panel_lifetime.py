"""A lab panel is freed by reference count the moment its last reference goes.

A panel that is part of a reference cycle is left to Python's garbage
collector, which frees the objects of a cycle in no set order; PySide6 6.10
then crashed in a child widget's destructor (the cache lab's panel, through
its chart's export content holding the panel's bound methods). With no cycle
the parent goes first and takes its children with it. On the old code this
test ended the whole test process with a segmentation fault.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import weakref

import pytest
from PySide6.QtWidgets import QApplication

import kvstudio.ui.labs
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter


def _lab_panel_classes() -> list[type[LabPanel]]:
    for module in pkgutil.iter_modules(kvstudio.ui.labs.__path__):
        importlib.import_module(f"kvstudio.ui.labs.{module.name}")
    found: list[type[LabPanel]] = []
    todo = list(LabPanel.__subclasses__())
    while todo:
        cls = todo.pop()
        if hasattr(cls, "view_type"):  # a lab's panel, not a shared base (SteppedLabPanel)
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__name__)


PANELS = _lab_panel_classes()


def test_every_lab_is_covered() -> None:
    names = {cls.__name__ for cls in PANELS}
    assert {"CacheVsRecomputePanel", "TemperaturePanel", "CacheInspectorPanel"} <= names
    assert len(names) >= 10


@pytest.mark.parametrize("cls", PANELS, ids=lambda cls: cls.__name__)
def test_lab_panel_is_freed_without_the_garbage_collector(qapp: QApplication, cls) -> None:  # type: ignore[no-untyped-def]
    gc.collect()
    automatic = gc.isenabled()  # off in this session: the GUI-thread collector's policy
    gc.disable()  # only reference counting may free it
    try:
        panel = cls(ChartExporter())
        panel.resize(900, 600)
        panel.show()
        qapp.processEvents()
        alive = weakref.ref(panel)
        del panel
        qapp.processEvents()
        assert alive() is None, f"{cls.__name__} is kept alive by a reference cycle"
    finally:
        if automatic:  # as it was; switching it on here left the rest of the session to
            gc.enable()  # automatic collections on lab threads (a hang in test_scale_labs)
