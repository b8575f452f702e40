"""File > Open saved run reads and checks the file on its own thread, behind a busy bar.

Read on the GUI thread, a 30,000-step run froze the window 9.3 s (and a
2,000,000-entry logits row 9.0 s). The read now runs on the file thread; the
window keeps answering and shows "Opening the saved run…" until the replay is
on screen or the file is refused.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from kvstudio.ui.run import replay as replay_module
from kvstudio.ui.run.state import RunPhase
from tests.core.saved_runs import run_file_text
from tests.ui.waits import HANG_GUARD_MS, HANG_GUARD_S


def _run_file(path: Path, steps: int) -> Path:
    path.write_text(run_file_text(steps, model_name="saved-model"), encoding="utf-8")
    return path


@pytest.fixture
def held_reader(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The run-file reader, recording its thread; off the GUI thread it waits to be released."""
    threads: list[threading.Thread] = []
    release = threading.Event()
    real = replay_module.load_run_file

    def read(path):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            release.wait(HANG_GUARD_S)  # a slow disk: the window must go on meanwhile
        return real(path)

    monkeypatch.setattr(replay_module, "load_run_file", read)
    yield threads, release
    release.set()


def _choose(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def test_file_open_reads_the_run_off_the_gui_thread_behind_a_busy_bar(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_reader) -> None:
    threads, release = held_reader
    window = make_window()
    _choose(monkeypatch, _run_file(tmp_path / "lesson.kvrun.json", 40))
    window.classroom.open_action.trigger()  # returns while the file is still being read
    qtbot.waitUntil(lambda: bool(threads), timeout=HANG_GUARD_MS)
    assert threads[0] is not threading.main_thread()
    assert window.status.is_opening()  # the busy bar says a run is being opened
    assert window.controller.state.phase is not RunPhase.REPLAYING
    release.set()
    qtbot.waitUntil(lambda: window.controller.state.phase is RunPhase.REPLAYING,
                    timeout=HANG_GUARD_MS)
    qtbot.waitUntil(lambda: not window.status.is_opening(), timeout=HANG_GUARD_MS)
    assert window.controller.replay.position() == (0, 40)
    assert window.controller.replay.model_name == "saved-model"


def test_a_refused_file_is_said_and_the_busy_bar_goes(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_reader) -> None:
    threads, release = held_reader
    release.set()
    window = make_window()
    good = _run_file(tmp_path / "good.kvrun.json", 5)
    bad = tmp_path / "bad.kvrun.json"
    bad.write_text(good.read_text(encoding="utf-8")[:200], encoding="utf-8")
    _choose(monkeypatch, bad)
    with qtbot.waitSignal(window.classroom.run_opened, timeout=HANG_GUARD_MS) as opened:
        window.classroom.open_action.trigger()
    assert opened.args == [False]
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert "cut short" in window.classroom.last_warning
    assert not window.status.is_opening()
    assert window.controller.state.phase is not RunPhase.REPLAYING
    assert window.classroom.open_run(str(good))  # the scripted call still answers True/False
    assert window.controller.state.phase is RunPhase.REPLAYING
