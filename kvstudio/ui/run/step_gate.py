"""Keeps the model's timed step apart from the window's own work: `StepGate`.

The model thread and the GUI thread share one interpreter. While the GUI
thread runs Python (a redraw, pyqtgraph painting its items, handling a record)
the model's forward waits for the interpreter lock between its kernels, so a
step timed with ``perf_counter`` grows by the drawing time: with *Run to end*
the window once read 22.7 ms per cached token where `kvstudio compare` read
2.7 ms. The gate makes the two threads take turns instead:

- the GUI thread is *busy* from the moment its event loop wakes until it is
  about to block again (`QAbstractEventDispatcher.awake` / `aboutToBlock`,
  connected by `attach_to_gui_thread`): a redraw, its painting and the
  handling of the last record all fall in between;
- the worker starts a timed step (`step()`) only once the GUI thread is idle
  (after a step the GUI thread counts as busy until it has handled the record
  and rests again; so after a new run's announcement, `gui_has_work()`: a first
  prefill that overlapped the window setting the run up read a median 8.6 ms,
  up to 25.7 ms, against 3.8 ms once it waited; 6 fresh windows, Xvfb),
  waiting at most `max_wait_s` (a GUI thread that never rests slows the run,
  it never stops it; `forced` counts those steps), and is *stepping* until the
  step ends;
- a job the GUI thread may put off (the pacer's redraw tick) asks
  `gui_may_draw()` first and draws after the step instead of into it;
- start-up work the GUI thread has queued and that outlasts `max_wait_s` (the
  Labs tab, built just after the model loads: about a second of Python) is
  announced with `hold()` and ended with `release()`: a step waits for it,
  up to `max_hold_s`. Without that, Run to end pressed as the model became
  ready started its prefill 250 ms into that build and timed it too: the
  first cached TTFT read a median 6.6 ms, up to 119 ms, against 3.0 ms for
  recompute's (16 fresh windows, Xvfb).

The GUI thread never blocks on the gate; only the worker waits. Plain
``threading``: the Qt side is the one function that connects the dispatcher.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QAbstractEventDispatcher, QObject, Qt

DEFAULT_MAX_WAIT_S = 0.25  # the longest a step waits for the window to go idle
DEFAULT_MAX_HOLD_S = 10.0  # the longest a step waits for the GUI thread's start-up work
# Qt says "about to block" before each turn of its loop that *may* wait, also when
# events are still queued, and it paints a changed window from a timer (5 ms by
# default, QT_QPA_UPDATE_IDLE_TIME): the GUI thread counts as resting only once
# it has said nothing for longer than that.
SETTLE_S = 0.008


class StepGate:
    """Turn-taking between the model's timed step (worker) and the GUI thread's work."""

    def __init__(self, max_wait_s: float = DEFAULT_MAX_WAIT_S, settle_s: float = SETTLE_S,
                 max_hold_s: float = DEFAULT_MAX_HOLD_S) -> None:
        self._cond = threading.Condition()
        self._holds = 0  # start-up jobs the GUI thread has queued and not yet finished
        self.max_hold_s = max_hold_s
        self._gui_busy = False
        self._idle_since = 0.0  # perf_counter when the GUI thread last said it would rest
        self.settle_s = settle_s
        self._stepping = False
        self.max_wait_s = max_wait_s
        self.attached = False  # True once a GUI thread reports to it (`attach_to_gui_thread`)
        self.steps = 0  # timed steps that went through the gate
        self.forced = 0  # steps that started after max_wait_s with the GUI thread still busy
        self.gui_woke_in_steps = 0  # times the GUI thread woke up during a step (diagnostics)
        self.held_steps = 0  # steps that waited for start-up work (`hold`) to finish

    # ---- the GUI thread ----------------------------------------------------------------------
    def gui_awake(self) -> None:
        """The GUI thread's event loop woke up: it may run Python now."""
        with self._cond:
            self._gui_busy = True
            if self._stepping:
                self.gui_woke_in_steps += 1

    def gui_idle(self) -> None:
        """The GUI thread is about to wait for events: a step may start."""
        with self._cond:
            self._gui_busy = False
            self._idle_since = time.perf_counter()
            self._cond.notify_all()

    def gui_may_draw(self) -> bool:
        """False while a timed step runs: a redraw now would be timed as part of the step.

        True claims the turn: the GUI thread counts as busy from here until it rests
        again, so no step can start while it draws (the check and the claim are one).
        """
        with self._cond:
            if self._stepping:
                return False
            self._gui_busy = True
            return True

    def hold(self) -> None:
        """The GUI thread has queued start-up work longer than `max_wait_s` (building a
        tab): steps wait until the matching `release()`, however long the GUI rests before."""
        with self._cond:
            self._holds += 1

    def release(self) -> None:
        """The work announced by `hold()` is done (or will not run): steps may start."""
        with self._cond:
            self._holds = max(0, self._holds - 1)
            self._cond.notify_all()

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Steps wait while the body runs: GUI-thread work that may outlast `max_wait_s`
        (a lab's tab built when it first opens, during a live run)."""
        self.hold()
        try:
            yield
        finally:
            self.release()

    def release_all(self) -> None:
        """Drop every hold (the window is closing: its queued work will not run)."""
        with self._cond:
            self._holds = 0
            self._cond.notify_all()

    @property
    def held(self) -> bool:
        with self._cond:
            return self._holds > 0

    # ---- the worker thread -------------------------------------------------------------------
    def gui_has_work(self) -> None:
        """The worker just sent the GUI thread something to handle (a new run): the next step
        waits until the GUI thread has handled it and rested, as after a step's record."""
        with self._cond:
            self._gui_busy = self.attached

    def _wait_for_startup(self) -> None:
        """(Lock held.) Wait until no start-up work is held; a hold outlasting `max_hold_s`
        is dropped (a GUI job that never ends slows one step, it never stops the run)."""
        if self._holds == 0:
            return
        self.held_steps += 1
        deadline = time.perf_counter() + self.max_hold_s
        while self._holds > 0:
            now = time.perf_counter()
            if now >= deadline:
                self._holds = 0
                return
            self._cond.wait(deadline - now)

    def _wait_for_quiet(self) -> bool:
        """(Lock held.) Wait until the GUI thread has rested `settle_s`; False on time-out."""
        self._wait_for_startup()
        deadline = time.perf_counter() + self.max_wait_s
        while True:
            now = time.perf_counter()
            if not self._gui_busy and now - self._idle_since >= self.settle_s:
                return True
            if now >= deadline:
                return False
            if self._gui_busy:
                self._cond.wait(deadline - now)
            else:
                self._cond.wait(min(deadline, self._idle_since + self.settle_s) - now)

    @property
    def stepping(self) -> bool:
        with self._cond:
            return self._stepping

    @contextmanager
    def step(self) -> Iterator[None]:
        """Run the body as the model's step: after the GUI thread has gone idle."""
        with self._cond:
            if not self._wait_for_quiet():
                self.forced += 1
            self._stepping = True
            self.steps += 1
        try:
            yield
        finally:
            with self._cond:
                self._stepping = False
                # The step's record goes to the GUI thread next: it has work before it rests
                # again, even if its loop has not woken up yet to say so.
                self._gui_busy = self.attached
                self._cond.notify_all()


def attach_to_gui_thread(gate: StepGate, owner: QObject) -> None:
    """Tell `gate` when the calling (GUI) thread's event loop wakes and rests.

    `owner` (a QObject on the GUI thread) scopes the connections: they go with it.
    """
    dispatcher = QAbstractEventDispatcher.instance(owner.thread())
    if dispatcher is None:  # no event loop on this thread: nothing to keep apart
        return
    gate.attached = True
    direct = Qt.ConnectionType.DirectConnection
    dispatcher.awake.connect(gate.gui_awake, direct)
    dispatcher.aboutToBlock.connect(gate.gui_idle, direct)
    owner.destroyed.connect(lambda *_: _detach(dispatcher, gate))


def _detach(dispatcher: QAbstractEventDispatcher, gate: StepGate) -> None:
    for signal, slot in ((dispatcher.awake, gate.gui_awake),
                         (dispatcher.aboutToBlock, gate.gui_idle)):
        try:
            signal.disconnect(slot)
        except (RuntimeError, TypeError):  # already gone with the dispatcher
            pass
    gate.attached = False
    gate.release_all()  # nor for start-up work that will not run
    gate.gui_idle()  # a worker never waits for a GUI that is gone
