"""The window process's garbage-collector policy: cycles are freed on the GUI thread only,
and the loaded heap stays out of full collections.

Owns `GuiThreadCollector` (installed by `app.startup.prepare_application`)
and `settle_heap()` (which the run controller calls once a model is loaded).
Nothing here runs at import time.

Why the GUI thread: Python's cyclic collector runs in whichever thread happens
to allocate past a threshold. When that is the model or lab thread, it frees
whatever Qt objects sit in unreachable cycles (a closed dialog's pyqtgraph
items, an old panel) from that thread. Shiboken then hands the widget's
deletion to the GUI thread while the worker, inside a QObject destructor,
holds Qt's connection lock and waits for the GIL that the GUI thread holds
while it waits for that lock: both threads stop for good (seen in CI: the lab
thread in a tokenizer call, the GUI thread in `QObject::~QObject`). So the
automatic collector is switched off and the same thresholds are checked on a
GUI-thread timer instead, as pyqtgraph's own `GarbageCollector` recipe does.
"""

from __future__ import annotations

import atexit
import gc
import logging
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject, QTimer

log = logging.getLogger(__name__)

COLLECT_INTERVAL_MS = 200  # how often the GUI thread checks the collector's counts


class GuiThreadCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread, on a timer.

    Each tick collects the generations whose allocation counts passed their
    thresholds (`gc.get_threshold()`), exactly what the automatic collector
    would have done, only never on a worker thread. Reference counting still
    frees everything that is not in a cycle, at once, in any thread.
    """

    def __init__(self, parent: QObject | None = None,
                 interval_ms: int = COLLECT_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self.collections = [0, 0, 0]  # per generation, for tests and diagnostics
        # False while the model's step is being timed (the window's `StepGate`): a
        # collection then would hold the interpreter and be timed as part of the step.
        self.may_collect: Callable[[], bool] = lambda: True
        self.reenabled = 0  # how often something else had switched the automatic collector on

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Hand collection back to Python (the automatic collector)."""
        self._timer.stop()
        gc.enable()

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def collect_due(self) -> int:
        """Collect what the thresholds say is due; return the oldest generation collected
        (-1 for none).

        Also switches the automatic collector off again if something switched it
        on (any library may call `gc.enable()`): left on, it would sooner or later
        run on a lab thread and deadlock there.
        """
        if gc.isenabled():
            log.warning("automatic garbage collection was switched on; switching it off again")
            gc.disable()
            self.reenabled += 1
        if not self.may_collect():
            return -1  # the next tick collects it
        counts, thresholds = gc.get_count(), gc.get_threshold()
        generation = -1
        for g in range(3):
            if thresholds[g] > 0 and counts[g] > thresholds[g]:
                generation = g
        if generation >= 0:
            gc.collect(generation)
            self.collections[generation] += 1
        return generation


def install_gui_thread_collector(app: QCoreApplication) -> GuiThreadCollector:
    """Make sure `app` has a running `GuiThreadCollector` (one per application).

    Cycles still waiting at exit are collected before PySide tears down what is
    left (its own exit hook deletes every remaining Qt object in no set order;
    a pyqtgraph item freed that way calls back into a Python that is shutting
    down and crashes): on `aboutToQuit`, and again at interpreter exit for a
    process that never quits its event loop (tests, scripts).
    """
    found = app.findChild(GuiThreadCollector)
    if isinstance(found, GuiThreadCollector):
        collector = found
    else:
        collector = GuiThreadCollector(app)
        app.aboutToQuit.connect(_collect_everything)
        atexit.register(_collect_everything)  # runs before PySide's own exit hook (LIFO)
    if not collector.active:
        collector.start()
    return collector


def _collect_everything() -> None:
    gc.collect()


def settle_heap() -> int:
    """Collect once, then freeze every live object out of the cyclic GC; return how many.

    A full (generation 2) collection walks every object the GC tracks. With
    torch, the model, the Qt wrappers and pyqtgraph loaded that took 130-150 ms,
    holding the GIL: about once per half minute of playing the window froze
    that long. After freezing, full collections walk only what was made since
    (the runs' records and plot data) and take a few milliseconds. Frozen
    objects are still freed by reference counting; cycles among them wait for
    the next model load, which unfreezes, collects and freezes again.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
