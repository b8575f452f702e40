"""Runs the engine off the UI thread: a worker object on a QThread, plus its owner.

`GenerationWorker` lives on the thread. It loads models, keeps one `Stepper`,
steps it on request or on its own timer (play), runs repeated sampling, and
reports through signals carrying frozen records. Cancellation is checked
between steps. Each step runs through the host's `StepGate`: it starts when
the GUI thread has gone idle, so its measured time is the model's alone. (The
thread keeps the UI's priority: lowered, it lost the CPU to every other program
and its steps read slower than `kvstudio compare` on the same machine.)
`EngineHost` lives on the UI thread: it owns the QThread, turns method calls
into queued signals, and stops and waits for the thread on shutdown
(``threads.stop_and_wait``, shared with the lab thread). The window talks only
to the host.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.run.engine_adapter import (
    AnswerCounts,
    ModelChoice,
    ModelLoader,
    RunRequest,
    encode_prompt,
    make_stepper,
    repeated_sampling,
    run_info,
    warm_up,
)
from kvstudio.ui.run.step_gate import StepGate
from kvstudio.ui.run.threads import stop_and_wait, thread_running

if TYPE_CHECKING:
    from kvstudio.engine.generate import Stepper

log = logging.getLogger(__name__)

MIN_PLAY_INTERVAL_MS = 2  # "as fast as possible" still rests 2 ms per step: the UI thread gets in


class GenerationWorker(QObject):
    """Owns the model and the live stepper; every slot runs on the worker thread."""

    model_loaded = Signal(object)  # LoadedModel
    calibrated = Signal(int, float)  # tokens, seconds of one timed forward without a cache
    load_failed = Signal(object)  # the ModelChoice that could not be loaded
    run_started = Signal(object)  # RunInfo
    step_ready = Signal(int, object)  # run id, StepRecord
    run_finished = Signal(int)  # run id
    playing_changed = Signal(bool)
    failed = Signal(str)  # a message the user can act on
    sampling_progress = Signal(int, int)  # done, total
    sampling_finished = Signal(object)  # AnswerCounts, or None when cancelled

    def __init__(self, loader: ModelLoader, gate: StepGate | None = None) -> None:
        super().__init__()
        self._loader = loader
        # Each timed step waits for the window to rest (`StepGate`): a record's elapsed_s is
        # the model's forward and sampling alone, never forward plus somebody's redraw.
        self.gate = gate or StepGate()
        self._model: LoadedModel | None = None
        self._stepper: Stepper | None = None
        self._request: RunRequest | None = None
        self._run_id = 0
        self._cancel = threading.Event()
        self._play_timer = QTimer(self)  # a child, so it moves to the worker thread with us
        self._play_timer.timeout.connect(self._on_play_tick)

    # ---- thread-safe -----------------------------------------------------------------------
    def request_cancel(self) -> None:
        """Called from the UI thread: the next between-steps check stops the work."""
        self._cancel.set()

    def clear_cancel(self) -> None:
        """Called from the UI thread just before queueing new cancellable work."""
        self._cancel.clear()

    # ---- slots (queued from the host) --------------------------------------------------------
    @Slot(object)
    def load(self, choice: ModelChoice) -> None:
        self._stop_play()
        try:
            model = self._loader(choice)
            # So the first run's TTFT is not also the model's first-ever forward; the
            # timed recompute-sized forward gives the cost estimate its first rate.
            calibration = warm_up(model, self.gate.step)
        except (ValueError, OSError, RuntimeError, KeyError) as exc:
            log.warning("model load failed: %s", exc)
            self.failed.emit(str(exc))
            self.load_failed.emit(choice)
            return
        except Exception as exc:  # a slot must never raise: anything else is a message too
            log.exception("model load failed")
            self.failed.emit(f"Cannot load the model ({type(exc).__name__}: {exc}).")
            self.load_failed.emit(choice)
            return
        self._model, self._stepper, self._request = model, None, None
        self.model_loaded.emit(model)
        self.calibrated.emit(*calibration)

    @Slot(object)
    def start(self, request: RunRequest) -> None:
        """Start a fresh run of `request` (the previous run of its mode is replaced)."""
        self._begin(request)

    @Slot(object)
    def step(self, request: RunRequest) -> None:
        self._stop_play()
        self._advance(request)

    @Slot(object, int)
    def play(self, request: RunRequest, interval_ms: int) -> None:
        if self._stepper is None or request != self._request or self._stepper.finished:
            if not self._begin(request):
                return
        self._request = request
        self._play_timer.start(max(MIN_PLAY_INTERVAL_MS, interval_ms))
        self.playing_changed.emit(True)

    @Slot(int)
    def set_interval(self, interval_ms: int) -> None:
        self._play_timer.setInterval(max(MIN_PLAY_INTERVAL_MS, interval_ms))

    @Slot()
    def pause(self) -> None:
        self._stop_play()

    @Slot()
    def reset(self) -> None:
        self._stop_play()
        self._stepper, self._request = None, None

    @Slot(object, int, object)
    def sample(self, request: RunRequest, samples: int, temperatures: tuple[float, ...]) -> None:
        self._stop_play()
        if self._model is None:
            self.failed.emit("No model is loaded yet; pick one in the Model menu.")
            self.sampling_finished.emit(None)
            return
        try:
            ids = encode_prompt(self._model, request)
            result: AnswerCounts | None = None
            for item in repeated_sampling(self._model, ids, request.settings, samples,
                                          temperatures, request.prompt,
                                          request.use_chat_template):
                if self._cancel.is_set():
                    break
                if isinstance(item, AnswerCounts):
                    result = item
                else:
                    self.sampling_progress.emit(item.done, item.total)
        except ValueError as exc:
            self.failed.emit(str(exc))
            result = None
        self.sampling_finished.emit(result)

    @Slot()
    def shutdown(self) -> None:
        self._play_timer.stop()
        self._stepper = None

    # ---- internals ----------------------------------------------------------------------------
    def _on_play_tick(self) -> None:
        if self._request is None or not self._advance(self._request):
            self._stop_play()

    def _stop_play(self) -> None:
        if self._play_timer.isActive():
            self._play_timer.stop()
            self.playing_changed.emit(False)

    def _begin(self, request: RunRequest) -> bool:
        if self._model is None:
            self.failed.emit("No model is loaded yet; pick one in the Model menu.")
            return False
        try:
            ids = encode_prompt(self._model, request)
            stepper = make_stepper(self._model, ids, request.settings)
        except ValueError as exc:
            self.failed.emit(str(exc))
            return False
        self._run_id += 1
        self._stepper, self._request = stepper, request
        self.run_started.emit(run_info(self._run_id, self._model, request, ids))
        # The window sets the new run up (chips, charts) before the prefill is timed: without
        # this the first step (TTFT) raced that work and read up to 7x its steady value.
        self.gate.gui_has_work()
        return True

    def _advance(self, request: RunRequest) -> bool:
        """One token; False when nothing more can be stepped (finished or failed)."""
        if self._stepper is None or request != self._request:
            if not self._begin(request):
                return False
        stepper = self._stepper
        if stepper is None:  # _begin failed and has reported why
            return False
        if stepper.finished:
            self._stop_play()  # the UI hears "paused" before "finished"
            self.run_finished.emit(self._run_id)
            return False
        try:
            with self.gate.step():
                record = stepper.step()
        except (ValueError, RuntimeError) as exc:
            log.warning("step failed: %s", exc)
            self._stop_play()
            self.failed.emit(str(exc))
            return False
        self.step_ready.emit(self._run_id, record)
        if stepper.finished:
            self._stop_play()
            self.run_finished.emit(self._run_id)
            return False
        return True


class EngineHost(QObject):
    """Owns the worker thread; its methods are safe to call from the UI thread."""

    _load_requested = Signal(object)
    _start_requested = Signal(object)
    _step_requested = Signal(object)
    _play_requested = Signal(object, int)
    _interval_changed = Signal(int)
    _pause_requested = Signal()
    _reset_requested = Signal()
    _sample_requested = Signal(object, int, object)
    _shutdown_requested = Signal()

    def __init__(self, loader: ModelLoader, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName("kvstudio-engine")
        self.gate = StepGate()  # the controller tells it when the GUI thread rests
        self.worker = GenerationWorker(loader, self.gate)
        self.worker.moveToThread(self._thread)
        self._load_requested.connect(self.worker.load)
        self._start_requested.connect(self.worker.start)
        self._step_requested.connect(self.worker.step)
        self._play_requested.connect(self.worker.play)
        self._interval_changed.connect(self.worker.set_interval)
        self._pause_requested.connect(self.worker.pause)
        self._reset_requested.connect(self.worker.reset)
        self._sample_requested.connect(self.worker.sample)
        self._shutdown_requested.connect(self.worker.shutdown)
        self._thread.finished.connect(self.worker.deleteLater)
        self._thread.start()

    def load(self, choice: ModelChoice) -> None:
        self._load_requested.emit(choice)

    def start(self, request: RunRequest) -> None:
        self._start_requested.emit(request)

    def step(self, request: RunRequest) -> None:
        self._step_requested.emit(request)

    def play(self, request: RunRequest, interval_ms: int) -> None:
        self._play_requested.emit(request, interval_ms)

    def set_interval(self, interval_ms: int) -> None:
        self._interval_changed.emit(interval_ms)

    def pause(self) -> None:
        self._pause_requested.emit()

    def reset(self) -> None:
        self._reset_requested.emit()

    def sample(self, request: RunRequest, samples: int, temperatures: tuple[float, ...]) -> None:
        self.worker.clear_cancel()
        self._sample_requested.emit(request, samples, temperatures)

    def cancel_sampling(self) -> None:
        self.worker.request_cancel()

    def is_running(self) -> bool:
        return thread_running(self._thread)

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Stop the play timer, cancel work, quit the thread and wait for it.

        False if a step outlasted the wait: the thread is then parked until that
        step ends (`threads.stop_and_wait`), never destroyed while running.
        """
        return stop_and_wait(self._thread, self._request_stop, self.worker, timeout_ms)

    def _request_stop(self) -> None:
        self.gate.release_all()  # a step waiting for the window's start-up work goes on
        self.worker.request_cancel()
        self._shutdown_requested.emit()
