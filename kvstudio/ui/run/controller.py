"""Turns user intents into worker calls and worker reports into the run store.

Owns `RunController`: the rules of a session (a new run starts when the mode,
the settings or the prompt change; the other mode's last run stays drawn;
Reset forgets both), the `RunStore`, the redraw pacing (`pacer`), and settling
the heap once a model is loaded (`heap.settle_heap`). It does not
build widgets: the window gives it a function that reads the current request
from the panels, and connects its signals to the views.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from kvstudio.core.records import StepRecord
from kvstudio.ui.run.engine_adapter import (
    AnswerCounts,
    ModelChoice,
    ModelHandle,
    RunInfo,
    RunRequest,
    parse_temperatures,
)
from kvstudio.ui.run.engine_worker import EngineHost
from kvstudio.ui.run.heap import settle_heap
from kvstudio.ui.run.pacer import RedrawPacer
from kvstudio.ui.run.store import RunStore

log = logging.getLogger(__name__)

RequestSource = Callable[[], RunRequest]


class RunController(QObject):
    playing_changed = Signal(bool)
    model_loaded = Signal(object)  # ModelHandle
    problem = Signal(str)  # a message for the user (already actionable)
    loading = Signal(bool)  # a model load started (True) or ended, loaded or failed (False)
    sampling_started = Signal()
    note = Signal(str)  # a short status message
    run_finished = Signal()
    sampling_progress = Signal(int, int)
    sampling_finished = Signal(object)  # AnswerCounts | None

    def __init__(self, host: EngineHost, request_source: RequestSource,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.store = RunStore()
        self.model: ModelHandle | None = None
        self.playing = False
        self.sampling = False
        self.loading_model = False
        self._request_source = request_source
        self._interval_ms = 120
        self.pacer = RedrawPacer(parent=self)  # the window registers its views with it
        worker = host.worker
        worker.model_loaded.connect(self._on_model_loaded)
        worker.run_started.connect(self._on_run_started)
        worker.step_ready.connect(self._on_step_ready)
        worker.run_finished.connect(self._on_run_finished)
        worker.playing_changed.connect(self._on_playing_changed)
        worker.failed.connect(self._on_failed)
        worker.sampling_progress.connect(self.sampling_progress)
        worker.sampling_finished.connect(self._on_sampling_finished)

    # ---- intents ---------------------------------------------------------------------------------
    def load_model(self, choice: ModelChoice) -> None:
        self.note.emit(self.tr("Loading the model…"))
        self.loading_model = True
        self.loading.emit(True)
        self.host.load(choice)

    def step(self) -> None:
        self.host.step(self._request_source())

    def set_playing(self, playing: bool) -> None:
        if playing:
            self.host.play(self._request_source(), self._interval_ms)
        else:
            self.host.pause()

    def run_to_end(self) -> None:
        self.host.play(self._request_source(), 0)

    def set_interval(self, interval_ms: int) -> None:
        self._interval_ms = interval_ms
        self.host.set_interval(interval_ms)

    def reset(self) -> None:
        self.host.reset()
        self.store.clear()
        self.pacer.flush()

    def restart_if_running(self) -> None:
        """Mode or settings changed: rerun the same prompt if a run is on screen."""
        if self.store.current is None and not self.playing:
            return
        request = self._request_source()
        if self.playing:
            self.host.play(request, self._interval_ms)
        else:
            self.host.start(request)

    def sample(self, samples: int, temperatures_text: str, answer_tokens: int) -> None:
        """Start repeated sampling of answers of at most `answer_tokens` tokens.

        `temperatures_text` empty = the current temperature. The other knobs
        (top-k, top-p, penalty, seed) are the run's.
        """
        try:
            temperatures = parse_temperatures(temperatures_text)
        except ValueError as exc:
            self.problem.emit(str(exc))
            return
        request = self._request_source()
        settings = replace(request.settings, max_new_tokens=answer_tokens)
        self.sampling = True
        self.sampling_started.emit()
        self.host.sample(replace(request, settings=settings), samples, temperatures)

    def cancel_sampling(self) -> None:
        self.host.cancel_sampling()

    # ---- reports from the worker ---------------------------------------------------------
    def _on_model_loaded(self, model: ModelHandle) -> None:
        self.loading_model = False
        self.loading.emit(False)
        self.model = model
        self.store.clear()
        self.pacer.flush()
        frozen = settle_heap()  # full GC passes while playing would otherwise stall the UI
        log.debug("heap settled after loading %s: %d objects frozen", model.name, frozen)
        self.model_loaded.emit(model)
        self.note.emit(self.tr("Model ready: {0}").format(model.name))

    def _on_run_started(self, info: RunInfo) -> None:
        self.store.begin(info)
        self.pacer.request()
        self.note.emit("")  # an old "run finished" no longer applies

    def _on_step_ready(self, run_id: int, record: StepRecord) -> None:
        if self.store.add(run_id, record):
            self.pacer.request()

    def _on_run_finished(self, run_id: int) -> None:
        self.store.finish(run_id)
        self.pacer.request()  # not flush(): redrawing every view at once stalls the loop
        self.run_finished.emit()
        self.note.emit(self.tr("Run finished. Reset, or change a setting, to run again."))

    def _on_playing_changed(self, playing: bool) -> None:
        self.playing = playing
        self.playing_changed.emit(playing)

    def _on_failed(self, message: str) -> None:
        if self.loading_model:  # the worker works in order: this is the load failing
            self.loading_model = False
            self.loading.emit(False)
        self.problem.emit(message)

    def _on_sampling_finished(self, counts: AnswerCounts | None) -> None:
        self.sampling = False
        self.sampling_finished.emit(counts)
