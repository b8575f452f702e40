"""Paces redraws: records may arrive faster than the screen, the views redraw a few at a time.

Owns `RedrawPacer`. Views register a refresh callable; `request()` (cheap,
called per record) marks them all dirty. A short single-shot timer then
refreshes one dirty view per tick, round robin, so one event-loop turn never
repaints every plot at once (painting four plots together stalled the loop
for tens of milliseconds). `flush()` refreshes everything now (tests, the end
of a run, a language switch).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal


class RedrawPacer(QObject):
    redraw_due = Signal()  # after a flush: everything is up to date

    def __init__(self, tick_ms: int = 20, parent: QObject | None = None) -> None:
        super().__init__(parent)
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
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        self._timer.stop()
        for refresh in self._views:
            refresh()
        self._dirty = [False] * len(self._views)
        self.redraw_due.emit()

    def _on_tick(self) -> None:
        n = len(self._views)
        for offset in range(n):
            index = (self._next + offset) % n
            if self._dirty[index]:
                self._dirty[index] = False
                self._next = (index + 1) % n
                self._views[index]()
                break
        if any(self._dirty):
            self._timer.start()
