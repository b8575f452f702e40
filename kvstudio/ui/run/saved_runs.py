"""Saving the run on screen to a file and opening a saved one, off the GUI thread.

Owns `SavedRuns`: "Save run…" writes the controller's replayable run (steps and
the answers histogram) as a run file (``kvstudio.files.runfile``); "Open saved
run…" reads and checks a file on its own thread (a 30,000-step file took 9 s on
the GUI thread), behind a busy bar in the status bar, then hands it to the
controller to replay without the model. `opened` says how each opening ended.
The Lecture menu (``ui/classroom.py``) holds the actions; this holds the work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from kvstudio.files.runfile import RUN_SUFFIX, RunFile
from kvstudio.ui.run import replay as replay_files
from kvstudio.ui.run.lab_worker import GeneratorRunner

if TYPE_CHECKING:
    from kvstudio.ui.run.controller import RunController
    from kvstudio.ui.run.engine_adapter import AnswerCounts


def _read_run_file(path: str) -> Iterator[object]:
    """The file-reading job: one item, the checked run file (its last item: the result)."""
    yield replay_files.read_run_file(path)


class SavedRuns(QObject):
    """Save the shown run; open a saved one on the file thread and show it as a replay."""

    opened = Signal(bool)  # a saved run read off the GUI thread: shown, or refused

    def __init__(self, window: QWidget, controller: RunController, *,
                 counts: Callable[[], AnswerCounts | None], folder: Callable[[], Path],
                 shown: Callable[[], None], note: Callable[[str], None],
                 warn: Callable[[str], None]) -> None:
        """`window` parents the dialogs; `counts` is the answers histogram saved with the
        run; `folder` is where the dialogs start; `shown` is called once a replay is on
        screen; `note` and `warn` report to the user."""
        super().__init__(window)
        self.window, self.controller = window, controller
        self._counts, self._folder, self._shown = counts, folder, shown
        self._note, self._warn = note, warn
        self.replay = controller.replay
        self.file_runner = GeneratorRunner("kvstudio-files", parent=self)
        self.file_runner.finished.connect(self._on_read)
        self.file_runner.failed.connect(self._on_failed)

    def save(self, path: str | None = None) -> bool:
        """Write the run on screen to `path` (asked for when None); False if not written."""
        model = self.controller.model
        name = model.name if model is not None else self.replay.model_name
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self.window, self.tr("Save run"), str(self._folder() / f"run{RUN_SUFFIX}"),
                self.tr("KV Studio runs (*.json)"))
        if not path:
            return False
        try:
            written = self.replay.save(path, name, self._counts())
        except ValueError as exc:
            self._warn(str(exc))
            return False
        self._note(self.tr("Saved the run to {0}").format(written))
        return True

    def open(self, path: str | None = None) -> bool:
        """Open a saved run and return once it is shown (True) or refused (False).

        The file is read on its own thread (`begin_open`); this waits for it in an
        event loop, so the window keeps drawing and answering meanwhile.
        """
        path = path if path is not None else self.choose_file()
        if not path:
            return False
        outcome: list[bool] = []
        loop = QEventLoop()

        def done(shown: bool) -> None:
            outcome.append(shown)
            loop.quit()

        def stopped(running: bool) -> None:  # the window closed while the file was read
            if not running and not outcome:
                loop.quit()

        self.opened.connect(done)
        self.file_runner.running_changed.connect(stopped)
        try:
            if not self.begin_open(path):
                return False
            if not outcome and self.file_runner.busy:
                loop.exec()
        finally:
            self.opened.disconnect(done)
            self.file_runner.running_changed.disconnect(stopped)
        return bool(outcome and outcome[0])

    def begin_open(self, path: str) -> bool:
        """Start reading `path` on the file thread; `opened` says how it ended.

        False (and nothing started) while another file is still being read, or once
        the window is closing.
        """
        if self.file_runner.closed:
            return False
        if self.file_runner.busy:
            self._note(self.tr("Still opening the last saved run; wait for it."))
            return False
        self._note(self.tr("Opening {0}…").format(Path(path).name))
        self.file_runner.start(lambda: _read_run_file(path))
        return True

    def choose_file(self) -> str:
        """The open dialog; "" when cancelled."""
        path, _ = QFileDialog.getOpenFileName(
            self.window, self.tr("Open saved run"), str(self._folder()),
            self.tr("KV Studio runs (*.json)"))
        return path

    def cancel(self) -> None:
        self.file_runner.cancel()

    def shutdown(self) -> None:
        self.file_runner.shutdown()

    def _on_read(self, loaded: object) -> None:
        try:
            if not isinstance(loaded, RunFile):
                raise ValueError("The saved run could not be read; open it again.")
            self.controller.show_replay(loaded)
        except ValueError as exc:
            self._warn(str(exc))
            self.opened.emit(False)
            return
        self._shown()
        self.opened.emit(True)

    def _on_failed(self, message: str) -> None:
        self._warn(message)
        self.opened.emit(False)
