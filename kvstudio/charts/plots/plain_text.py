"""Text from a file, a model or a user, shown as text: never parsed as HTML.

Qt guesses whether a string is rich text (``Qt.mightBeRichText``) in tooltips,
QLabel and QMessageBox, and pyqtgraph's titles, legends and axis labels are
always HTML. An answer read from a run file such as ``<img src="/dev/zero">``
would then be loaded as an image (the window aborts; a FIFO as ``src`` freezes
it) and ``<b>``/``<a>`` would render as bold text and links. Every widget of the
window that can show such text goes through this module:

- `plain_label` — a QLabel fixed to ``Qt.PlainText`` (the only way the window
  makes labels);
- `message_box` — a QMessageBox whose text is ``Qt.PlainText``;
- `plain_tooltip` — a tooltip that shows its text literally (escaped, line
  breaks and spaces kept);
- `html_text` — text escaped for a place that only takes HTML (pyqtgraph).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget


def plain_tooltip(text: str) -> str:
    """A tooltip string that Qt shows as exactly `text` ("" stays "": no tooltip).

    A plain string would still be guessed as rich text when it starts with a tag, so
    the text is escaped inside a paragraph that keeps its line breaks and spaces.
    """
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


def html_text(text: str) -> str:
    """`text` for an HTML-only place (pyqtgraph labels): escaped, line breaks as <br>."""
    return html.escape(text, quote=False).replace("\n", "<br>")


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel that shows its text as it is, whatever it holds."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def message_box(
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton,
    parent: QWidget | None = None,
) -> QMessageBox:
    """A QMessageBox showing `text` as plain text (messages echo values read from files)."""
    box = QMessageBox(icon, title, "", buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    return box
