"""Paces redraws: many records may arrive between two frames, the views redraw once.

Owns one single-shot QTimer. `request()` is cheap and can be called per record;
`redraw_due` fires at most once per interval.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal


class RedrawPacer(QObject):
    redraw_due = Signal()

    def __init__(self, interval_ms: int = 33, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.redraw_due)

    def request(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Redraw now (tests, and the last record of a run)."""
        self._timer.stop()
        self.redraw_due.emit()
