"""Every text a user can see in a window right now: widget texts and pyqtgraph scene texts.

For tests that check a language switch leaves nothing in the other language.
Text the user typed or the model wrote (prompt boxes, the answer list, token
chips) is left out: it is content, not interface.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import (
    QAbstractButton,
    QDockWidget,
    QGraphicsTextItem,
    QGraphicsView,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QProgressBar,
    QStatusBar,
    QTabBar,
    QTableWidget,
    QWidget,
)

TAG = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    return TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&").strip()


def visible_texts(window: QMainWindow) -> list[tuple[str, str]]:
    """(where, text) for every visible piece of interface text in `window`."""
    out: list[tuple[str, str]] = [("window title", window.windowTitle())]
    out += [("menu", a.text()) for a in window.menuBar().actions()]
    for widget in window.findChildren(QWidget):
        if not widget.isVisibleTo(window):
            continue
        name = type(widget).__name__
        if isinstance(widget, QLabel):
            out.append((name, widget.text()))
        elif isinstance(widget, QAbstractButton):
            out.append((name, widget.text()))
        elif isinstance(widget, QGroupBox):
            out.append((name, widget.title()))
        elif isinstance(widget, QTabBar):
            out += [(name, widget.tabText(i)) for i in range(widget.count())]
        elif isinstance(widget, QDockWidget):
            out.append((name, widget.windowTitle()))
        elif isinstance(widget, QProgressBar) and widget.isTextVisible():
            out.append((name, widget.text()))
        elif isinstance(widget, QStatusBar):
            out.append((name, widget.currentMessage()))
        elif isinstance(widget, QTableWidget):
            for c in range(widget.columnCount()):
                item = widget.horizontalHeaderItem(c)
                out.append((name, item.text() if item is not None else ""))
        elif isinstance(widget, QLineEdit | QPlainTextEdit) and not _text_of(widget):
            out.append((name, widget.placeholderText()))
        if isinstance(widget, QGraphicsView) and widget.scene() is not None:
            for item in widget.scene().items():
                if isinstance(item, QGraphicsTextItem) and item.isVisible():
                    out.append((name + " scene", item.toPlainText()))
    return [(where, _plain(text)) for where, text in out if _plain(text)]


def _text_of(widget: QLineEdit | QPlainTextEdit) -> str:
    return widget.text() if isinstance(widget, QLineEdit) else widget.toPlainText()
