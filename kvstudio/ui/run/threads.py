"""Stopping a worker thread: the one stop-and-wait that the engine and lab threads share.

Owns `stop_and_wait` and what happens when a thread cannot stop in time. A
worker checks for cancellation only between steps, so a single long step (a
prefill of tens of thousands of tokens takes tens of seconds) can outlast any
timeout. Destroying a `QThread` that is still running aborts the process, so
such a thread is never destroyed: it is *parked* here, with its worker, until
its step ends, and `wait_for_parked` (run at exit) waits for it. Closing the
window therefore never aborts, however long the step; the process ends when
the step does.

It does not create threads (``engine_worker`` and ``lab_worker`` do).
"""

from __future__ import annotations

import atexit
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread

log = logging.getLogger(__name__)

STOP_TIMEOUT_MS = 10_000  # how long closing waits for a step before parking the thread

_parked: list[tuple[QThread, QObject | None]] = []
_exit_hook_registered = False


def thread_running(thread: QThread) -> bool:
    """Whether `thread` runs; False once its C++ object is gone."""
    try:
        return thread.isRunning()
    except RuntimeError:  # deleted already
        return False


def stop_and_wait(
    thread: QThread,
    request_stop: Callable[[], None],
    worker: QObject | None = None,
    timeout_ms: int | None = None,
) -> bool:
    """Ask the worker to stop, end the thread's event loop and wait up to `timeout_ms`.

    `request_stop` runs first (set the worker's cancel flag, queue its shutdown
    slot). True if the thread stopped; False if a step is still running: then
    the thread and its worker are parked until that step ends, never destroyed
    while running.
    """
    if not thread_running(thread):
        return True
    request_stop()
    thread.quit()
    wait = STOP_TIMEOUT_MS if timeout_ms is None else timeout_ms
    if thread.wait(max(0, wait)):
        return True
    log.warning(
        "the %s thread is still finishing a step after %d ms; it ends when that step does",
        thread.objectName() or "worker", wait,
    )
    park(thread, worker)
    return False


def park(thread: QThread, worker: QObject | None) -> None:
    """Keep `thread` (and `worker`) alive until it finishes; wait for it at exit."""
    global _exit_hook_registered
    _parked.append((thread, worker))
    if not _exit_hook_registered:
        atexit.register(wait_for_parked)  # runs before the interpreter tears objects down
        _exit_hook_registered = True


def parked_threads() -> list[QThread]:
    """Threads still finishing a step after their owner asked them to stop."""
    return [thread for thread, _ in _parked if thread_running(thread)]


def wait_for_parked(timeout_ms: int | None = None) -> bool:
    """Wait for every parked thread (no limit by default); True when all have stopped.

    Called by `kvstudio.ui.app.startup.main` after the event loop ends and at
    interpreter exit, so no running `QThread` is ever destroyed.
    """
    done = True
    for thread, _ in list(_parked):
        if not thread_running(thread):
            continue
        stopped = thread.wait() if timeout_ms is None else thread.wait(timeout_ms)
        done = done and bool(stopped)
    if done:
        _parked.clear()
    return done
