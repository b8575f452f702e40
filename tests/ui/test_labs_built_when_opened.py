"""A lab's panel is built the first time its tab opens (`LabsPanel.panels`, and the
Chat and Cache inspector tabs).

Every tab is there from the start, titled in the window's language; a panel built
later gets the model the window already has and its timing signal, and is the tab's
page from then on.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit

from kvstudio.charts.i18n import LanguageSwitcher
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.registry import LABS
from kvstudio.ui.labs import LabsPanel
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
from kvstudio.ui.labs.labs_panel import PANEL_TYPES
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter

pytestmark = pytest.mark.usefixtures("qapp")


def _tab_texts(labs: LabsPanel) -> list[str]:
    return [labs.tabs.tabText(index) for index in range(labs.tabs.count())]


def test_a_lab_is_built_when_its_tab_opens(qtbot: Any, exporter: ChartExporter,
                                           tiny_handle: LoadedModel) -> None:
    labs = LabsPanel(exporter)
    qtbot.addWidget(labs)
    labs.set_model(tiny_handle)
    keys = [lab.key for lab in LABS if not lab.own_tab]
    assert list(labs.panels) == keys and labs.tabs.count() == len(keys)
    assert labs.built_labs() == []  # nothing built before it is seen
    labs.resize(1100, 750)
    labs.show()
    first = labs.panels.built[keys[0]]  # the tab on show, built as it was shown
    assert [type(lab) for lab in labs.built_labs()] == [PANEL_TYPES[keys[0]]]
    assert labs.tabs.currentWidget() is first and first.model is tiny_handle

    timing: list[bool] = []
    labs.timing_changed.connect(timing.append)
    index = keys.index("sweep")  # a lab that times the model, not the first tab
    labs.tabs.setCurrentIndex(index)  # a tab opened: its panel replaces the empty page
    opened = labs.tabs.currentWidget()
    assert isinstance(opened, PANEL_TYPES[keys[index]])
    assert labs.panels[keys[index]] is opened and labs.tabs.currentIndex() == index
    assert opened.model is tiny_handle  # the model the window had before it was built
    assert len(labs.built_labs()) == 2
    assert _tab_texts(labs) == [PANEL_TYPES[key].tab_title() for key in keys]
    assert [lab.title() for lab in labs.built_labs()] == [
        _tab_texts(labs)[keys.index(key)] for key in labs.panels.built]

    opened.values.setText("4, 8")  # a lab that times the model says so while it runs
    opened.fixed.setValue(2)
    opened.repeats.setValue(1)
    with qtbot.waitSignal(opened.result_ready, timeout=120_000):
        assert opened.run()
    qtbot.waitUntil(lambda: timing[-1:] == [False], timeout=120_000)
    assert timing == [True, False]
    assert labs.shutdown()


def test_unbuilt_tabs_follow_the_language(qtbot: Any, exporter: ChartExporter) -> None:
    labs = LabsPanel(exporter)
    qtbot.addWidget(labs)
    english = _tab_texts(labs)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    switcher = LanguageSwitcher(app)
    try:
        switcher.apply("ko")
        QApplication.processEvents()
        korean = _tab_texts(labs)
        assert labs.built_labs() == []  # retitled, not built
        assert korean != english and all(text for text in korean)
        built = labs.panels["paged"]
        assert built.title() == korean[list(labs.panels).index("paged")]
    finally:
        switcher.apply("en")
        QApplication.processEvents()
    assert _tab_texts(labs) == english


def _claims(widget: Any, key: Qt.Key) -> bool:
    """Whether `widget` keeps `key` from the window's shortcuts (the typing guard)."""
    event = QKeyEvent(QEvent.Type.ShortcutOverride, key, Qt.KeyboardModifier.NoModifier)
    event.ignore()
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def test_a_lab_built_later_keeps_its_typing_keys(qtbot: Any, make_window: Any) -> None:
    """The window's typing guard watches a panel built when its tab opened: Page Down
    in its number box stays in the box (a QSpinBox does not claim it itself)."""
    window = make_window()
    labs = window.classroom.labs
    window.tabs.setCurrentWidget(labs)
    assert "paged" not in labs.panels.built
    labs.tabs.setCurrentIndex(list(labs.panels).index("paged"))
    box = labs.panels.built["paged"].block_size
    box.setFocus()
    assert _claims(box, Qt.Key.Key_PageDown)


def test_chat_and_inspector_are_built_when_their_tabs_open(qtbot: Any,
                                                           make_window: Any) -> None:
    """Their tabs stand titled from the start; opening one builds its panel in place, with
    the window's model, and its fields keep their typing keys."""
    window = make_window(language="ko")
    classroom = window.classroom
    assert classroom.tab_labs == []
    titles = [window.tabs.tabText(index) for index in range(window.tabs.count())]
    for panel_type, english in ((ChatPanel, "Chat"), (CacheInspectorPanel, "Cache inspector")):
        index = next(i for i in range(window.tabs.count())
                     if window.tabs.tabText(i) == panel_type.tab_title())
        assert titles[index] != english  # in Korean before it was built
        window.tabs.setCurrentIndex(index)
        page = window.tabs.currentWidget()
        assert isinstance(page, panel_type) and window.tabs.currentIndex() == index
        assert page.model is window.controller.model and page.title() == titles[index]
    assert classroom.tab_labs == [classroom.chat, classroom.inspector]
    assert [window.tabs.tabText(index) for index in range(window.tabs.count())] == titles
    field = classroom.inspector.findChild(QLineEdit) or classroom.chat.findChild(QLineEdit)
    assert field is not None and _claims(field, Qt.Key.Key_PageDown)


def test_a_page_built_when_its_tab_opens_holds_the_live_steps(
        qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel is built on the GUI thread, fractions of a second of Python: the live run's
    steps wait for it (`StepGate.holding`), as they waited for the labs built when the model
    loaded, and go on once it stands."""
    window = make_window()
    gate = window.controller.host.gate
    labs = window.classroom.labs
    qtbot.waitUntil(lambda: not gate.held, timeout=60_000)  # the model load's hold is over
    held_while_built: list[tuple[str, bool]] = []
    set_model = LabPanel.set_model

    def recorded(panel: LabPanel, model: LoadedModel | None) -> None:
        held_while_built.append((type(panel).__name__, gate.held))
        set_model(panel, model)

    monkeypatch.setattr(LabPanel, "set_model", recorded)
    window.tabs.setCurrentWidget(labs)
    labs.tabs.setCurrentIndex(list(labs.panels).index("paged"))
    _ = window.classroom.chat
    assert held_while_built == [("CacheVsRecomputePanel", True),  # the tab on show
                                ("PagedCachePanel", True), ("ChatPanel", True)]
    assert not gate.held
