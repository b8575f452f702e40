"""A lab's results table: what it shows and what it exports.

Owns `ResultsTable` (a read-only table whose `rows()` are the display strings and
whose `values()` are the numbers as measured, for CSV), `ByteCount` (a number of
bytes, shown with thousands separators under a header that says bytes) and
`gap_text` (a max |Δlogit| in a headline). Floats read as
`kvstudio.labs.number_format.table_float` writes them, the same as the command line's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from kvstudio.charts.plots.plain_text import plain_tooltip
from kvstudio.labs.number_format import table_float

CHECK, CROSS = "✓", "✗"


class ByteCount(int):
    """A number of bytes: shown as ``503,808`` in a table (its header says bytes), written as
    the plain number to CSV. KiB appears only in a column whose header says KiB."""



@dataclass(frozen=True)
class Shown:
    """A measured number shown with its context ("6.9 ms (median of 5, 2.3–7.7)") and written
    to CSV as the number alone (the column's header names its unit)."""

    value: float
    text: str


class ResultsTable(QTableWidget):
    """A read-only table of results; `rows()` gives it back as dicts (for CSV)."""

    rows_changed = Signal()  # new rows are in (the lab gives the table room for them)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        # Columns take their content's width (the table scrolls sideways when it is wider
        # than its room); a cell that must still be cut is cut in the middle, never at an end
        # ("Recompute" read as "ecomput"), and its tooltip holds the whole text.
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setAlternatingRowColors(True)

    def set_rows(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self._values = [list(row) for row in rows]
        self._headers = list(headers)
        self.clear()
        self.setColumnCount(len(headers))
        self.setRowCount(len(rows))
        self.setHorizontalHeaderLabels(list(headers))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                item = QTableWidgetItem(_display(value))
                item.setToolTip(plain_tooltip(item.text()))  # the text a cut leaves out
                if isinstance(value, int | float | Shown) and not isinstance(value, bool):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.setItem(r, c, item)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)  # a stretched last column shrinks below its text
        header.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.rows_changed.emit()

    def content_width(self) -> int:
        """The width that shows every column whole (frame and vertical scroll bar included)."""
        header = self.horizontalHeader()
        columns = sum(header.sectionSize(c) for c in range(self.columnCount())
                      if not self.isColumnHidden(c))
        bar = self.verticalScrollBar().sizeHint().width()
        return columns + 2 * self.frameWidth() + bar

    def rows(self) -> list[dict[str, str]]:
        """The rows as shown (display strings)."""
        headers = [_text(self.horizontalHeaderItem(c)) for c in range(self.columnCount())]
        return [
            {h: _text(self.item(r, c)) for c, h in enumerate(headers)}
            for r in range(self.rowCount())
        ]

    def values(self) -> list[dict[str, Any]]:
        """The rows as measured: numbers stay numbers (bytes as a byte count), for CSV."""
        headers = getattr(self, "_headers", [])
        quantity = QCoreApplication.translate("ResultsTable", "quantity")  # the unnamed column
        out = []
        for row in getattr(self, "_values", []):
            out.append({h or quantity: _value(v) for h, v in zip(headers, row, strict=False)})
        return out


def _value(value: Any) -> Any:
    if isinstance(value, Shown):
        return value.value
    if isinstance(value, bool):
        return value
    if isinstance(value, ByteCount):
        return int(value)
    return value


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""


def _display(value: Any) -> str:
    if isinstance(value, Shown):
        return value.text
    if isinstance(value, bool):
        return CHECK if value else CROSS
    if isinstance(value, ByteCount):
        return f"{int(value):,}"
    if isinstance(value, float):
        return table_float(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def gap_text(gap: float | None) -> str:
    """A max |Δlogit| in a headline or status line: two significant digits, ``0`` when bit
    for bit, ``—`` when not measured (``2.3e-05``: these gaps are float32 rounding)."""
    return "—" if gap is None else f"{gap:.2g}"
