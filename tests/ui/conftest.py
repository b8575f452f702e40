"""Qt fixtures for the window tests: offscreen platform, a wired window on a tiny model,
and a guard that fails any test leaving an engine or lab thread running.

The window gets its own settings file (tmp_path) and a loader that returns the
session's tiny seeded model for the embedded choices and uses the real loader
for folders and .pth files (so bad-checkpoint messages are the engine's).
"""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThread
from PySide6.QtWidgets import QApplication

import kvstudio.ui  # noqa: F401  (pins pyqtgraph to PySide6)
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.shutdown import tear_down
from kvstudio.ui.app.startup import build_window, prepare_application
from kvstudio.ui.main_window import MainWindow
from kvstudio.ui.panels.controls_panel import SPEED_INTERVALS_MS
from kvstudio.ui.run import engine_worker as worker_module
from kvstudio.ui.run import lab_worker as generator_worker
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    load_model,
    with_choice,
    wrap_model,
)
from kvstudio.ui.run.heap import install_gui_thread_collector
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.shared_window import NEXT_TEST
from tests.ui.waits import HANG_GUARD_MS


class TrackedThread(QThread):
    """A QThread that remembers every instance, so a test can check none is left running."""

    started_threads: list[QThread] = []  # noqa: RUF012  (a registry for the guard only)

    def start(self, *args: object) -> None:
        TrackedThread.started_threads.append(self)
        super().start(*args)  # type: ignore[arg-type]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Each test knows the one run after it (`shared_window.next_test_shares`)."""
    item.stash[NEXT_TEST] = nextitem


@pytest.fixture(scope="session", autouse=True)
def gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """The window's garbage-collector policy for every window test: cycles are freed on the
    GUI thread only, never on an engine or lab thread (`kvstudio.ui.run.heap`)."""
    collector = install_gui_thread_collector(qapp)
    yield
    collector.stop()
    tear_down(qapp)  # what fixtures kept alive, before the interpreter exits


@pytest.fixture(autouse=True)
def gc_policy_kept() -> Iterator[None]:
    """A test that switches Python's automatic collector back on fails (and it is switched
    off again): the rest of the session would collect on lab threads, which deadlocks."""
    yield
    if gc.isenabled():
        gc.disable()
        pytest.fail("the test left automatic garbage collection on (the GUI-thread "
                    "collector's policy is off; restore what gc.isenabled() said)")


@pytest.fixture(autouse=True)
def no_thread_left_running(monkeypatch: pytest.MonkeyPatch,
                           qtbot) -> Iterator[list[QThread]]:  # type: ignore[no-untyped-def]
    """Every engine and lab thread a test starts; the test fails if one is left running.

    Lab panels shown with `lab_helpers.show_lab` are shut down first, as their window
    would shut them down (a collected panel never gets pytest-qt's close).
    """
    monkeypatch.setattr(worker_module, "QThread", TrackedThread)
    monkeypatch.setattr(generator_worker, "QThread", TrackedThread)
    TrackedThread.started_threads.clear()
    yield TrackedThread.started_threads
    for panel in getattr(qtbot, "lab_panels", []):
        try:
            panel.shutdown()
        except RuntimeError:  # already deleted (closed, and its thread with it)
            pass
    running = []
    for thread in TrackedThread.started_threads:
        try:
            if thread.isRunning():
                running.append(thread.objectName())
                thread.quit()  # stop it, so the test fails with a message instead of an abort
                thread.wait(5000)
        except RuntimeError:  # already deleted: stopped
            pass
    TrackedThread.started_threads.clear()
    assert not running, f"thread(s) left running: {running}"


@pytest.fixture(scope="session")
def tiny_handle(tiny_model: MiniMindLM, tokenizer: TextTokenizer) -> LoadedModel:
    return wrap_model(tiny_model, tokenizer, "tiny-test", ModelChoice("embedded-chat"))


@pytest.fixture()
def exporter(tmp_path: Path) -> ChartExporter:
    """The lab panels' exporter: no file dialogs, slide packs go to tmp_path / "pack"."""
    return ChartExporter(
        save_chooser=lambda *a: "", folder_chooser=lambda *a: str(tmp_path / "pack")
    )


@pytest.fixture
def settings_path(tmp_path: Path) -> Path:
    return tmp_path / "kvstudio.ini"


def _open_window(qtbot, settings_path: Path, tiny_handle: LoadedModel,  # type: ignore[no-untyped-def]
                 language: str, max_new_tokens: int,
                 built: Callable[[MainWindow], object]) -> MainWindow:
    """A shown, wired window with the tiny model loaded: the embedded choices get the
    session's tiny model, folders and .pth files the real loader. `built` gets the window
    as soon as it exists (to be closed at teardown even if its start fails)."""

    def loader(choice: ModelChoice) -> LoadedModel:
        if choice.kind.startswith("embedded"):
            return with_choice(tiny_handle, choice)
        return load_model(choice)

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    prepare_application(app)
    settings = AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    window = build_window(app, settings, loader, threads=1, language=language)
    built(window)
    rs = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(rs, max_new_tokens=max_new_tokens))
    window.controls.set_speed(len(SPEED_INTERVALS_MS) - 1)  # as fast as the model goes
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.controller.model is not None, timeout=HANG_GUARD_MS)
    return window


def _close_window(window: MainWindow) -> None:
    window.close()
    window.languages.apply("en")


@pytest.fixture
def make_window(qtbot, settings_path: Path, tiny_handle: LoadedModel):  # type: ignore[no-untyped-def]
    """A factory: a shown, wired window with the tiny model loaded (closed at teardown)."""
    windows: list[MainWindow] = []

    def make(language: str = "en", max_new_tokens: int = 16) -> MainWindow:
        return _open_window(qtbot, settings_path, tiny_handle, language, max_new_tokens,
                            lambda window: (qtbot.addWidget(window), windows.append(window)))

    yield make
    for window in windows:
        _close_window(window)


@pytest.fixture(scope="module")
def module_qtbot(request: pytest.FixtureRequest, qapp: QApplication):  # type: ignore[no-untyped-def]
    """A qtbot for module-scoped fixtures: it waits (signals, conditions); the fixture that
    uses it closes its own widgets."""
    from pytestqt.qtbot import QtBot

    return QtBot(request)


@pytest.fixture(scope="module")
def make_module_window(module_qtbot, tmp_path_factory: pytest.TempPathFactory,  # type: ignore[no-untyped-def]
                       tiny_handle: LoadedModel):
    """`make_window` for a window a module's tests share (closed after the module's last
    test): for tests that only read it, or that each first set what they measure (its size).

    Built before a test's own fixtures, so the threads it starts (its model thread, the
    labs a fixture runs on it) are not the test's: `no_thread_left_running` checks only
    what the test itself starts. A test takes it with `shared_window.on_screen`.
    """
    windows: list[MainWindow] = []
    app = QApplication.instance()
    assert isinstance(app, QApplication)

    def make(language: str = "en", max_new_tokens: int = 16) -> MainWindow:
        # What the last test's teardown queued for its window (its language change back to
        # English) runs while that window lives, as pytest-qt runs it after a test's set-up
        # (this window is built during a set-up): pytest-qt deletes that window later.
        app.processEvents()
        settings_path = tmp_path_factory.mktemp("window") / "kvstudio.ini"
        return _open_window(module_qtbot, settings_path, tiny_handle, language,
                            max_new_tokens, windows.append)

    yield make
    for window in windows:
        _close_window(window)
        app.processEvents()  # what the close and the language change queued, while it lives
        window.deleteLater()  # as pytest-qt ends a test's window
