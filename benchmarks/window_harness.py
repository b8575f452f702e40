"""Shared set-up for the window benchmarks: a real, wired window driven by its own controls.

Owns `open_window()` (QApplication, bundled font, settings in a temp file, the
engine's default model), `close_window()` (the app's own exit path), the two ways a
script waits for the window (`wait_for` a condition, `settle` for a while: both run
Qt's own event loop, which blocks when idle, so the window's `StepGate` sees the GUI
thread rest and starts each step then, as in normal use; a loop of
``processEvents()`` and ``sleep`` never rests, and every step was forced after the
gate's 250 ms wait) and `rss_mib()` (resident memory from /proc). The
benchmarks run outside CI: `soak.py` (minutes at full speed, memory samples)
and `responsiveness.py` (longest event-loop stall while playing).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, finish, prepare_application
from kvstudio.ui.main_window import MainWindow
from kvstudio.ui.run.engine_adapter import load_model


def rss_mib() -> float:
    """Resident set size of this process in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def open_window(language: str = "ko", threads: int = 1) -> tuple[QApplication, MainWindow]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    prepare_application(app)
    ini = Path(tempfile.mkdtemp(prefix="kvstudio-bench-")) / "settings.ini"
    settings = AppSettings(QSettings(str(ini), QSettings.Format.IniFormat))
    window = build_window(app, settings, load_model, threads=threads, language=language)
    window.show()
    window.start()
    wait_for(lambda: window.controller.model is not None, 60, "the model to load")
    return app, window


def settle(ms: int = 500) -> None:
    """Run the event loop for `ms` (repaints, queued layouts and slots run meanwhile)."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_for(condition: Callable[[], bool], timeout: float = 300.0,
             what: str = "the window") -> None:
    """Run the event loop until `condition()`, looking every 50 ms; a TimeoutError after
    `timeout` seconds names `what` it waited for."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        settle(50)


def close_window(app: QApplication, window: MainWindow) -> None:
    """Close `window` and end as ``main.py`` does: wait for a step still running, then delete
    every Qt object while Python is whole (`startup.finish`). Returning from a script with
    the window merely closed left the charts to PySide's exit hook, which crashed in about 1
    of 3 runs of scripts/lab_screenshots.py (exit status 139 after every PNG was written)."""
    window.close()
    app.processEvents()
    finish(app)
