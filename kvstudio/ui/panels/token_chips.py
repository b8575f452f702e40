"""Token chips drawn by one widget: a boundary per token, wrapped like text, with tooltips.

Owns `TokenChipsView`. A QLabel per token (and a layout in Python) cost
seconds per run at full speed; here chips are measured once when added,
laid out in one pass when the width changes, and painted with a few
QPainter calls, so adding a token costs almost nothing on the UI thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QHelpEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from kvstudio.charts.plots.plain_text import plain_tooltip

PAD_X, PAD_Y, GAP, MARGIN = 4.0, 2.0, 3.0, 4.0


@dataclass(frozen=True)
class ChipStyle:
    fill: str
    text: str
    border: str
    border_width: float = 1.0
    dashed: bool = False


STYLES = {
    "prompt": ChipStyle("#e8e8e8", "#555555", "#c8c8c8"),
    "generated": ChipStyle("#ffffff", "#111111", "#9ecae1"),
    "pending": ChipStyle("#ffffff", "#aaaaaa", "#9ecae1", dashed=True),
    "current": ChipStyle("#fdd835", "#000000", "#f57f17", border_width=2.0),
    # Special tokens (<|im_start|>, <|im_end|> …) are markers, not text: dark, monospace-like.
    "special": ChipStyle("#37474f", "#ffffff", "#263238"),
    "eos": ChipStyle("#b71c1c", "#ffffff", "#7f0000", border_width=2.0),  # the end of the answer
}


@dataclass
class Chip:
    text: str
    kind: str  # a key of STYLES
    tooltip: str
    width: float
    rect: QRectF | None = None


class TokenChipsView(QWidget):
    """Chips in reading order; the last generated chip is highlighted as the current one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chips: list[Chip] = []
        self._laid_out = 0  # chips already placed
        self._cursor = (MARGIN, MARGIN)  # where the next chip goes
        self._layout_width = -1.0
        self._current = -1
        self._scroll_room = 0  # height the scroll offset to the last line needs (px)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setMouseTracking(True)
        # Focus can rest here (a click, or after Sample ×N) without swallowing the run keys.
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

    # ---- content ---------------------------------------------------------------------------------
    def clear(self) -> None:
        self._chips.clear()
        self._laid_out, self._current = 0, -1
        self._cursor = (MARGIN, MARGIN)
        self._scroll_room = 0
        self.setMinimumHeight(int(self._line_height() + 2 * MARGIN))
        self.update()

    def add(self, text: str, kind: str, tooltip: str, current: bool = False) -> None:
        metrics = QFontMetricsF(self.font())
        self._chips.append(Chip(text, kind, tooltip, metrics.horizontalAdvance(text) + 2 * PAD_X))
        if current:
            self._current = len(self._chips) - 1
        self._place_new()
        self.update()

    def texts(self) -> list[str]:
        return [c.text for c in self._chips]

    def kinds(self) -> list[str]:
        return [c.kind for c in self._chips]

    def tooltips(self) -> list[str]:
        return [c.tooltip for c in self._chips]

    def count(self) -> int:
        return len(self._chips)

    def last_rect(self) -> QRectF | None:
        return self._chips[-1].rect if self._chips else None

    # ---- geometry --------------------------------------------------------------------------------
    def _line_height(self) -> float:
        return QFontMetricsF(self.font()).height() + 2 * PAD_Y

    def _place_new(self) -> None:
        """Place the chips not yet placed, continuing from the cursor (O(new chips))."""
        width = max(float(self.width()), 100.0)
        if width != self._layout_width:
            self._layout_width = width
            self._laid_out, self._cursor = 0, (MARGIN, MARGIN)
        x, y = self._cursor
        h = self._line_height()
        for chip in self._chips[self._laid_out:]:
            if x + chip.width > width - MARGIN and x > MARGIN:
                x, y = MARGIN, y + h + GAP
            chip.rect = QRectF(x, y, chip.width, h)
            x += chip.width + GAP
        self._laid_out = len(self._chips)
        self._cursor = (x, y)
        needed = max(int(y + h + MARGIN), self._scroll_room)
        if needed != self.minimumHeight():
            self.setMinimumHeight(needed)  # the scroll area scrolls once chips outgrow it

    def scroll_showing_last(self, view_height: int) -> int:
        """The scroll offset that shows the last chip with whole lines from the top.

        Scrolling just far enough to show the last chip left the view's top edge
        inside a line, so the first line read cut in half. The offset starts a
        line instead (a partly shown line is then the last one, below the chip);
        the view grows below its last line where that offset needs the room.
        """
        last = self.last_rect()
        if last is None:
            return 0
        pitch = self._line_height() + GAP
        lines = max(0, math.ceil((last.bottom() + MARGIN - view_height) / pitch))
        # One pixel above the line's top, for its border; below the line above's bottom.
        offset = 0 if lines == 0 else int(MARGIN + lines * pitch) - 1
        # A view lower than two lines: never past the newest chip's own line (its top).
        offset = min(offset, max(0, int(last.top()) - 1))
        self._scroll_room = offset + view_height  # room to start the view at that line
        if self._scroll_room > self.minimumHeight():
            self.setMinimumHeight(self._scroll_room)
        return offset

    def sizeHint(self) -> QSize:
        return QSize(400, int(self._cursor[1] + self._line_height() + MARGIN))

    def minimumSizeHint(self) -> QSize:
        return QSize(100, int(self._line_height() + 2 * MARGIN))

    def hasHeightForWidth(self) -> bool:
        return False

    def resizeEvent(self, event: QEvent) -> None:  # type: ignore[override]
        self._place_new()
        super().resizeEvent(event)  # type: ignore[arg-type]

    # ---- painting and tooltips -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        visible = QRectF(event.rect())
        for index, chip in enumerate(self._chips):
            if chip.rect is None or not chip.rect.intersects(visible):
                continue
            current = index == self._current and chip.kind not in ("eos", "special")
            style = STYLES["current" if current else chip.kind]
            pen = QPen(QColor(style.border), style.border_width)
            if style.dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(QColor(style.fill))
            painter.drawRoundedRect(chip.rect.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
            painter.setPen(QColor(style.text))
            painter.drawText(chip.rect, Qt.AlignmentFlag.AlignCenter, chip.text)
        painter.end()

    def chip_at(self, x: float, y: float) -> int | None:
        for index, chip in enumerate(self._chips):
            if chip.rect is not None and chip.rect.contains(x, y):
                return index
        return None

    def tooltip_at(self, x: float, y: float) -> str:
        index = self.chip_at(x, y)
        return "" if index is None else self._chips[index].tooltip

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.tooltip_at(event.pos().x(), event.pos().y())
            if tip:
                QToolTip.showText(event.globalPos(), plain_tooltip(tip), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)
