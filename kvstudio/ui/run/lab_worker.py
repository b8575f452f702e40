"""Run any core generator on a worker thread: progress, a final result, cancel, clean stop.

Owns `GeneratorWorker` (lives on a `QThread`, pulls items from a generator)
and `GeneratorRunner` (lives on the UI thread, owns the thread, and is what
panels talk to). The rule the core's experiments follow: a generator yields
progress items and its **last** item is the result. The runner emits
`progress` for every item but the last and `finished` with the last one.
Cancellation is checked between items; the generator is closed so its
`finally` blocks run. A job can also be pulled one item at a time (`advance`),
which the top-p/top-k lab uses to step a run by hand.

It knows nothing about what the generators compute. The window's engine
thread (``engine_worker.py``) is separate: it owns the live stepper. Both stop
through ``threads.stop_and_wait``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, QThread, Signal, Slot

from kvstudio.ui.run.threads import stop_and_wait, thread_running

log = logging.getLogger(__name__)

JobFactory = Callable[[], Iterator[object]]
_NOTHING = object()


class GeneratorWorker(QObject):
    """Pulls items from one generator at a time; every slot runs on the worker thread."""

    progress = Signal(int, object)  # job id, item
    finished = Signal(int, object)  # job id, the last item (the result)
    failed = Signal(int, str)  # job id, a message the user can act on
    cancelled = Signal(int)  # job id
    paused = Signal(int)  # job id: `advance` pulled what it was asked for, more remain

    def __init__(self) -> None:
        super().__init__()
        # Jobs up to this id are cancelled. An id, not a flag the next job clears: a cancel
        # sent before the worker thread began its job (a busy machine) still stops that job.
        self._cancelled_up_to = 0
        self._lock = threading.Lock()
        self._job = 0
        self._generator: Iterator[object] | None = None
        self._pending: object = _NOTHING  # the item seen last: progress unless it ends the run

    def request_cancel(self, job: int) -> None:
        """Thread-safe: job `job` (and every earlier one) stops at its next check between
        items, or before its first item if it has not begun yet."""
        with self._lock:
            self._cancelled_up_to = max(self._cancelled_up_to, job)

    def _cancelled(self) -> bool:
        with self._lock:
            return self._job <= self._cancelled_up_to

    @Slot(int, object, int)
    def begin(self, job: int, factory: JobFactory, count: int) -> None:
        """Start job `job`; pull `count` items (-1 = all) before pausing."""
        self._close()
        self._job = job
        try:
            self._generator = iter(factory())
        except Exception as exc:  # any failure becomes a message, not a crash
            self._fail(exc)
            return
        self._pull(count)

    @Slot(int, int)
    def advance(self, job: int, count: int) -> None:
        if job != self._job or self._generator is None:
            return
        self._pull(count)

    @Slot()
    def shutdown(self) -> None:
        self._close()

    def _pull(self, count: int) -> None:
        """Emit `count` progress items (-1 = all), holding the newest one back.

        An item is progress only once another one follows it; the one left when
        the generator ends is the result. So a paused job is one item ahead.
        """
        generator = self._generator
        if generator is None:
            return
        emitted = 0
        while count < 0 or emitted < count:
            if self._cancelled():
                self._close()
                self.cancelled.emit(self._job)
                return
            try:
                item = next(generator)
            except StopIteration:
                self._finish()
                return
            except Exception as exc:  # any failure becomes a message
                self._fail(exc)
                return
            if self._pending is not _NOTHING:
                self.progress.emit(self._job, self._pending)
                emitted += 1
            self._pending = item
        self.paused.emit(self._job)

    def _finish(self) -> None:
        result, self._pending = self._pending, _NOTHING
        self._generator = None
        if result is _NOTHING:
            self.failed.emit(self._job, "The experiment produced nothing.")
        else:
            self.finished.emit(self._job, result)

    def _fail(self, exc: Exception) -> None:
        self._close()
        if isinstance(exc, ValueError):
            message = str(exc)  # the core's messages are written for the user
        else:
            log.exception("A lab job failed")
            message = f"{type(exc).__name__}: {exc}"
        self.failed.emit(self._job, message)

    def _close(self) -> None:
        generator, self._generator = self._generator, None
        self._pending = _NOTHING
        close = getattr(generator, "close", None)
        if close is not None:
            close()


class GeneratorRunner(QObject):
    """Owns a worker thread for generator jobs; call it from the UI thread only.

    Signals carry only the current job's items: anything a cancelled or
    replaced job still sends is dropped.
    """

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    paused = Signal()
    running_changed = Signal(bool)

    _begin_requested = Signal(int, object, int)
    _advance_requested = Signal(int, int)
    _shutdown_requested = Signal()

    def __init__(self, name: str = "kvstudio-lab", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName(name)
        self._worker = GeneratorWorker()
        self._worker.moveToThread(self._thread)
        self._begin_requested.connect(self._worker.begin)
        self._advance_requested.connect(self._worker.advance)
        self._shutdown_requested.connect(self._worker.shutdown)
        self._worker.progress.connect(self._on_worker_progress)
        self._worker.finished.connect(self._on_worker_finished)
        self._worker.failed.connect(self._on_worker_failed)
        self._worker.cancelled.connect(self._on_worker_cancelled)
        self._worker.paused.connect(self._on_worker_paused)
        self._thread.finished.connect(self._worker.deleteLater)
        self._job = 0
        self._busy = False
        self._has_job = False  # a paused job that `advance` can continue
        self._closed = False  # after shutdown the worker is gone: no more jobs

    # ---- API -----------------------------------------------------------------------------
    def start(self, factory: JobFactory, count: int = -1) -> int:
        """Run a new job (replacing any current one); `count` items then pause (-1 = all).

        The thread starts with the first job, so idle panels cost no thread.
        """
        if self._closed:
            raise RuntimeError("This runner was shut down; create a new one.")
        if not self._thread.isRunning():
            self._thread.start()
        self._job += 1
        self._has_job = True
        self._set_busy(True)
        self._begin_requested.emit(self._job, factory, count)
        return self._job

    def advance(self, count: int = 1) -> bool:
        """Continue a paused job by `count` items (-1 = to the end); False if there is none."""
        if not self._has_job or self._busy:
            return False
        self._set_busy(True)
        self._advance_requested.emit(self._job, count)
        return True

    def cancel(self) -> None:
        """Stop the current job (begun or still queued to the worker): `cancelled` follows."""
        self._worker.request_cancel(self._job)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def has_job(self) -> bool:
        return self._has_job

    def is_running(self) -> bool:
        """Whether the thread is alive (not whether a job is running)."""
        return thread_running(self._thread)

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Cancel, close the generator, quit the thread and wait for it (`stop_and_wait`)."""
        self._closed = True
        self._job += 1  # drop whatever the old job still sends
        ok = stop_and_wait(self._thread, self._request_stop, self._worker, timeout_ms)
        self._set_busy(False)
        return ok

    def _request_stop(self) -> None:
        self._worker.request_cancel(self._job)
        self._shutdown_requested.emit()

    # ---- worker → UI ----------------------------------------------------------------------
    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.running_changed.emit(busy)

    def _on_worker_progress(self, job: int, item: object) -> None:
        if job == self._job:
            self.progress.emit(item)

    def _ended(self, job: int) -> bool:
        """Whether `job` is the current job, which has now ended (finished, failed, cancelled)."""
        if job != self._job:
            return False
        self._has_job = False
        self._set_busy(False)
        return True

    def _on_worker_finished(self, job: int, result: object) -> None:
        if self._ended(job):
            self.finished.emit(result)

    def _on_worker_failed(self, job: int, message: str) -> None:
        if self._ended(job):
            self.failed.emit(message)

    def _on_worker_cancelled(self, job: int) -> None:
        if self._ended(job):
            self.cancelled.emit()

    def _on_worker_paused(self, job: int) -> None:
        if job == self._job:
            self._set_busy(False)
            self.paused.emit()
