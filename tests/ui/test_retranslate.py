"""A language switch reaches every widget that has texts: `RetranslateOnLanguageChange`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QStatusBar, QWidget

import kvstudio.ui
from kvstudio.charts.i18n import RetranslateOnLanguageChange

pytestmark = pytest.mark.usefixtures("qapp")


def _widget_classes_with_texts() -> list[type[QWidget]]:
    found = []
    for info in pkgutil.walk_packages(kvstudio.ui.__path__, "kvstudio.ui."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ == module.__name__ and issubclass(cls, QWidget)
                    and hasattr(cls, "retranslate")):
                found.append(cls)
    return found


def test_every_widget_with_a_retranslate_gets_language_changes() -> None:
    classes = _widget_classes_with_texts()
    names = {cls.__name__ for cls in classes}
    assert {"MainWindow", "LabPanel", "LabsPanel", "LivePlot", "SamplingPanel",
            "ExportMenu", "PresenterView"} <= names
    missing = [cls.__name__ for cls in classes if not issubclass(cls, RetranslateOnLanguageChange)]
    assert not missing, missing


def test_language_change_calls_retranslate(qtbot) -> None:  # type: ignore[no-untyped-def]
    class Bar(RetranslateOnLanguageChange, QStatusBar):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def retranslate(self) -> None:
            self.calls += 1

    bar = Bar()
    qtbot.addWidget(bar)
    QCoreApplication.sendEvent(bar, QEvent(QEvent.Type.LanguageChange))
    assert bar.calls == 1
    QCoreApplication.sendEvent(bar, QEvent(QEvent.Type.FontChange))  # not a language switch
    assert bar.calls == 1
