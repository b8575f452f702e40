"""Start-up shows the window before torch loads; the model loads on the worker behind a busy bar.

The start-up and exit checks run in one fresh interpreter (torch must not be
imported yet when the window is first shown), one stage after the other: the
window shown before torch loads, then `main()` closed as the model loads, then
`main()` run through a run, the presenter view and the labs and closed, then
the process exit. Each stage prints what the tests read, with a marker line on
both streams before it, so each test reads its own stage's output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
ROOT = Path(__file__).resolve().parents[2]

# Every stage starts with this line on stdout and on stderr (`_stages` splits on it).
STAGE_MARK = "=== stage: "
STAGE = r"""
import sys

def stage(name):
    for stream in (sys.stdout, sys.stderr):
        print(f"=== stage: {name}", file=stream, flush=True)

codes = []
"""

SHOW_BEFORE_TORCH = r"""
stage("shown before torch")
import sys, tempfile, time
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, finish, prepare_application
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
finish(app)  # as main() ends: the next stage starts with no window left
"""


MAIN_CLOSES_AS_THE_MODEL_LOADS = r"""
stage("closed as the model loads")
import sys, tempfile
from PySide6.QtWidgets import QApplication
from kvstudio.ui.app import startup
from kvstudio.ui.main_window import MainWindow

app = QApplication.instance()  # the process's one application: main() uses it
build = startup.build_window

def build_and_close_on_load(*args, **kwargs):
    window = build(*args, **kwargs)
    # Connected after the classroom's own slot, which queues the labs' build: the window
    # closes before that build runs (a lecturer quitting the moment the model is up).
    window.controller.model_loaded.connect(lambda model: (window.close(), app.exit(0)))
    return window

startup.build_window = build_and_close_on_load
code = startup.main(["--settings", tempfile.mkdtemp() + "/s.ini", "--lang", "ko"])
startup.build_window = build
print("main returned", code, flush=True)
codes.append(code)
"""


MAIN_RUNS_AND_QUITS = r"""
stage("runs and quits")
import sys, tempfile
from dataclasses import replace
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from kvstudio.ui.app import startup
from kvstudio.ui.main_window import MainWindow

app = QApplication.instance()  # the process's one application: main() uses it
done = []

def window():
    return next(w for w in app.topLevelWidgets() if isinstance(w, MainWindow))

def tick():  # one stage per tick: load, run to the end, presenter on and off, labs, close
    w = window()
    store = w.controller.store
    if w.controller.model is None or done == ["closing"]:
        return
    if not done:
        w.sampling.set_run_settings(replace(w.sampling.run_settings("cached"), max_new_tokens=8))
        w.controller.run_to_end()
        done.append("run")
    elif done == ["run"] and store.current is not None and store.current.finished:
        w.classroom.presenter.set_enabled(True)
        done.append("presenter")
    elif done == ["run", "presenter"]:
        w.classroom.presenter.set_enabled(False)
        w.tabs.setCurrentIndex(1)  # the labs are built
        done.append("labs")
    elif done == ["run", "presenter", "labs"]:
        done[:] = ["closing"]
        print("closing after a run, the presenter view and the labs", flush=True)
        w.close()

timer = QTimer()
timer.timeout.connect(tick)
timer.start(100)
code = startup.main(["--settings", tempfile.mkdtemp() + "/s.ini", "--lang", "ko"])
print("main returned", code, flush=True)
from kvstudio.ui.app.shutdown import python_owned_qt_objects
print("left for the exit hook", python_owned_qt_objects(), flush=True)
codes.append(code)
sys.exit(next((c for c in codes if c), 0))  # the first stage that failed, else 0
"""


@dataclass(frozen=True)
class StartupProcess:
    """One interpreter's run of the stages: its exit status and each stage's output."""

    returncode: int
    stdout: dict[str, str]  # stage -> what it printed
    stderr: dict[str, str]

    def stderr_from(self, first: str) -> str:
        """Everything the process wrote to stderr from stage `first` on (its exit included)."""
        names = list(self.stderr)
        return "".join(self.stderr[name] for name in names[names.index(first):])


def _stages(text: str) -> dict[str, str]:
    parts: dict[str, str] = {"": ""}
    name = ""
    for line in text.splitlines(keepends=True):
        if line.startswith(STAGE_MARK):
            name = line[len(STAGE_MARK):].strip()
            parts[name] = ""
        else:
            parts[name] += line
    return parts


# The interpreter running the stages, once a session (`start_in_background`).
_started: list[tuple[subprocess.Popen[str], Path]] = []


def start_in_background(items: list[pytest.Item]) -> None:
    """Start the stages' interpreter if a selected test reads it: ``tests/conftest.py``
    calls this once the session has collected its tests, so it runs beside the tests
    before this module."""
    if any("startup_process" in getattr(item, "fixturenames", ()) for item in items):
        _start()


def stop_in_background() -> None:
    """At the session's end: end the interpreter if it still runs, remove its output."""
    for process, folder in _started:
        if process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)
    _started.clear()


def _start() -> tuple[subprocess.Popen[str], Path]:
    """The stages' interpreter, started once a session; its output goes to files, so it
    never blocks on a pipe."""
    if not _started:
        folder = Path(tempfile.mkdtemp(prefix="kvstudio-startup-"))
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
        script = STAGE + SHOW_BEFORE_TORCH + MAIN_CLOSES_AS_THE_MODEL_LOADS + MAIN_RUNS_AND_QUITS
        with (folder / "stdout").open("w", encoding="utf-8") as out, \
                (folder / "stderr").open("w", encoding="utf-8") as err:
            process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env,
                                       stdout=out, stderr=err, text=True)
        _started.append((process, folder))
    return _started[0]


@pytest.fixture(scope="module")
def startup_process() -> Iterator[StartupProcess]:
    """The stages in one fresh interpreter, offscreen (started once a session)."""
    process, folder = _start()
    try:
        code = process.wait(timeout=300)
        stdout = _stages((folder / "stdout").read_text(encoding="utf-8"))
        stderr = _stages((folder / "stderr").read_text(encoding="utf-8"))
        for name in ("shown before torch", "closed as the model loads", "runs and quits"):
            stdout.setdefault(name, "")  # a stage never reached printed nothing
            stderr.setdefault(name, "")
        yield StartupProcess(code, stdout, stderr)
    finally:
        stop_in_background()


def test_the_real_window_runs_and_exits_cleanly(startup_process: StartupProcess) -> None:
    """`main()` as `python main.py` runs it: a run, the presenter view and the labs, then
    closing ends the process with status 0 (no crash while Qt and Python tear down)."""
    out = startup_process.stdout["runs and quits"]
    err = startup_process.stderr_from("runs and quits")
    assert "closing after a run, the presenter view and the labs" in out, err
    assert "main returned 0" in out
    # Nothing Qt is left for PySide's exit hook, whose order of deletion crashed (SIGSEGV)
    # in about one exit in four while the window's frozen cycles were left to it.
    assert "left for the exit hook []" in out, out
    assert startup_process.returncode == 0, err[-2000:]
    assert "Traceback" not in err and "Error calling" not in err


def test_closing_as_the_model_loads_exits_cleanly(startup_process: StartupProcess) -> None:
    """The labs are built just after the model loads; a window closed before that build
    ran exits 0 without building them (the build ran during tear-down and raised)."""
    out = startup_process.stdout["closed as the model loads"]
    err = startup_process.stderr_from("closed as the model loads")  # to the process's end
    assert "main returned 0" in out, err[-2000:]
    assert startup_process.returncode == 0, err[-2000:]
    assert "Traceback" not in err, err[-2000:]


def test_the_window_is_shown_before_torch_is_imported(startup_process: StartupProcess) -> None:
    out = startup_process.stdout["shown before torch"]
    assert startup_process.returncode == 0, startup_process.stderr_from("")[-2000:]
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
    qtbot.waitUntil(lambda: not window.status.is_loading(), timeout=HANG_GUARD_MS)
    assert window.last_problem  # the load's own message, and the loaded model stays
    assert window.controller.model is not None


def _missing_folder(tmp_path: Path):  # type: ignore[no-untyped-def]
    from kvstudio.ui.run.engine_adapter import ModelChoice

    return ModelChoice("folder", str(tmp_path / "no-such-model"))
