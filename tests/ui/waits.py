"""How the window tests wait: on the condition or the signal itself, never against a clock.

A model step, a lab run or a layout pass takes as long as the machine lets it:
on the 2-core machine with two busy neighbours, several times longer than alone,
and a step's gate (`kvstudio.ui.run.step_gate`) waits for the GUI thread to
rest, which a test polling every 10 ms keeps it from doing. So no wait in these
tests is a time limit. `HANG_GUARD_MS` only ends a wait whose condition never
comes (a deadlock, a signal never sent) with the test's own message, before
pytest's `faulthandler_timeout` (240 s) ends the whole run.

A check that something did *not* happen (no live step in a replay, nothing
stepped while typing) waits for `model_thread_caught_up` instead of a fixed
time: every request the window sent to its model thread before the call has
been handled, and what the thread sent back has been delivered, however slow
the machine.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

HANG_GUARD_MS = 120_000  # not a time limit: only a wait that never ends stops here
HANG_GUARD_S = HANG_GUARD_MS / 1000


def model_thread_caught_up(qtbot: Any, window: Any, after_ms: int = 0) -> None:
    """Return once the window's model thread has handled everything queued to it so far.

    The check runs on the model thread as a queued call behind every request the
    window sent before (`after_ms` > 0: as a timer there, so every timer of that
    thread due earlier, a play tick, has fired first); then the GUI thread handles
    what the model thread emitted before it (records, "finished", "paused").
    """
    worker = window.controller.host.worker
    done = threading.Event()
    QTimer.singleShot(after_ms, worker, done.set)
    qtbot.waitUntil(done.is_set, timeout=HANG_GUARD_MS)
    QApplication.processEvents()  # deliver what the model thread sent before the check
