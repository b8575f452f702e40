"""Paces redraws: records may arrive faster than the screen, the views redraw a few at a time.

Owns `RedrawPacer`. Views register a refresh callable; `request()` (cheap,
called per record) marks them all dirty. A short single-shot timer then
refreshes one dirty view per tick, round robin, so one event-loop turn never
repaints every plot at once (painting four plots together stalled the loop
for tens of milliseconds). `flush()` refreshes everything now (tests, the end
of a run, a language switch).

Between the model's steps (`may_draw`, from the `StepGate`): with `draw_on_request`
each record draws one view at once, while the model thread waits for the GUI
thread to rest; a tick that falls inside a timed step is put off to the next
record (or `DEFER_MS`), so drawing never runs during a step it would slow.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

DEFER_MS = 50  # a tick put off for a step tries again this much later (or at the next record)


class RedrawPacer(QObject):
    def __init__(self, tick_ms: int = 20, parent: QObject | None = None,
                 may_draw: Callable[[], bool] | None = None) -> None:
        super().__init__(parent)
        self._tick_ms = tick_ms
        self.may_draw: Callable[[], bool] = may_draw or (lambda: True)
        self.deferred = 0  # ticks put off because a step was being timed
        self.draw_on_request = False  # draw one view inside `request()` (between steps)
        self._views: list[Callable[[], None]] = []
        self._dirty: list[bool] = []
        self._next = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(tick_ms)
        self._timer.timeout.connect(self._on_tick)

    def add_view(self, refresh: Callable[[], None]) -> None:
        self._views.append(refresh)
        self._dirty.append(True)

    def request(self) -> None:
        self._dirty = [True] * len(self._views)
        if self.draw_on_request and self.may_draw():
            self._timer.stop()
            self._on_tick()  # now, between two steps: the model thread waits for us to rest
            return
        if not self._timer.isActive() or self._timer.interval() == DEFER_MS:
            self._timer.start(self._tick_ms)

    def flush(self) -> None:
        self._timer.stop()
        for refresh in self._views:
            refresh()
        self._dirty = [False] * len(self._views)

    def _on_tick(self) -> None:
        if not self.may_draw():
            self.deferred += 1
            self._timer.start(DEFER_MS)
            return
        self._timer.setInterval(self._tick_ms)
        n = len(self._views)
        for offset in range(n):
            index = (self._next + offset) % n
            if self._dirty[index]:
                self._dirty[index] = False
                self._next = (index + 1) % n
                self._views[index]()
                break
        if any(self._dirty):
            # Drawing at each record, the rest waits for the next one (a tick now would
            # fall inside the next step); the longer tick only catches the run's end.
            self._timer.start(DEFER_MS if self.draw_on_request else self._tick_ms)
