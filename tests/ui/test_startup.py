"""Start-up shows the window before torch loads; the model loads on the worker behind a busy bar.

The first check runs in a fresh interpreter (torch must not be imported yet),
so it builds and shows the real window there, offscreen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("qapp")
ROOT = Path(__file__).resolve().parents[2]

SHOW_BEFORE_TORCH = r"""
import sys, tempfile, time
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, prepare_application
from kvstudio.ui.run.engine_adapter import load_model

app = QApplication([])
prepare_application(app)
ini = tempfile.mkdtemp() + "/settings.ini"
window = build_window(app, AppSettings(QSettings(ini, QSettings.Format.IniFormat)),
                      load_model, threads=1, language="ko")
window.show()
app.processEvents()
print("torch before the model loads:", "torch" in sys.modules)
window.start()
print("busy bar while loading:", window.status.is_loading())
deadline = time.monotonic() + 120
while window.controller.model is None and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
print("model loaded:", window.controller.model is not None)
print("busy bar after:", window.status.is_loading())
print("torch after:", "torch" in sys.modules)
window.close()
"""


def test_the_window_is_shown_before_torch_is_imported() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SHOW_BEFORE_TORCH], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert "torch before the model loads: False" in out
    assert "busy bar while loading: True" in out
    assert "model loaded: True" in out
    assert "busy bar after: False" in out
    assert "torch after: True" in out


def test_a_failed_load_ends_the_busy_bar(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    assert not window.status.is_loading()
    window.model_panel.model_chosen.emit(_missing_folder(tmp_path))
    assert window.status.is_loading()
    qtbot.waitUntil(lambda: not window.status.is_loading(), timeout=20_000)
    assert window.last_problem  # the load's own message, and the loaded model stays
    assert window.controller.model is not None


def _missing_folder(tmp_path: Path):  # type: ignore[no-untyped-def]
    from kvstudio.ui.run.engine_adapter import ModelChoice

    return ModelChoice("folder", str(tmp_path / "no-such-model"))
