"""Run keys never fire while the user types: the text field (or table) keeps its keys.

Owns `TypingGuard`, an application event filter. The run's keys (→, ←,
Space, Home, End, Page Down, N, P, B) are window-wide shortcuts, so they work
wherever the focus is; but a prompt box, a number box or a table needs those
keys itself. Qt asks the focused widget first (a ShortcutOverride event);
text widgets claim some keys (→, Home) and not others (Page Down), so the
same key stepped the run in one box and moved the cursor in another. Here
every run key is claimed for the focused text field or table, and nothing
else is touched. Also owns `UnselectedOnFocus`: a field whose text Tab must not
select, so a stray key cannot replace it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

RUN_KEYS = frozenset({
    Qt.Key.Key_Right, Qt.Key.Key_Left, Qt.Key.Key_Space, Qt.Key.Key_Home, Qt.Key.Key_End,
    Qt.Key.Key_PageDown, Qt.Key.Key_PageUp, Qt.Key.Key_N, Qt.Key.Key_P, Qt.Key.Key_B,
})


def is_typing_widget(widget: QObject | None) -> bool:
    """A widget where these keys edit text or move a selection."""
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    if isinstance(widget, QTextEdit | QPlainTextEdit | QLineEdit):
        return not widget.isReadOnly()
    return isinstance(widget, QAbstractSpinBox | QAbstractItemView)


class TypingGuard(QObject):
    """Install with `guard(window)`: it watches the window's text fields and tables only
    (an application-wide filter would run Python for every event while playing)."""

    def guard(self, root: QWidget) -> int:
        """Watch every text field and table under `root`; returns how many."""
        count = 0
        for widget in root.findChildren(QWidget):
            if is_typing_widget(widget) or is_typing_widget(widget.parent()):
                widget.installEventFilter(self)
                count += 1
        return count

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            plain = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if (plain == Qt.KeyboardModifier.NoModifier and event.key() in RUN_KEYS
                    and _typing_owner(watched) is not None):
                event.accept()  # the text field keeps the key; the shortcut does not fire
                return True
        return False


def _typing_owner(watched: QObject) -> QObject | None:
    """The text widget itself, also when the event goes to its inner line edit or viewport."""
    if is_typing_widget(watched):
        return watched
    parent = watched.parent()
    return parent if is_typing_widget(parent) else None


class UnselectedOnFocus(QObject):
    """Keeps a text field's text unselected when it gets the focus by Tab or a page switch.

    Qt selects all of a QLineEdit's text when the focus arrives by Tab (also
    when a tab page hands the focus to its first field), so the first key a
    lecturer presses replaces the prompt; here the cursor goes to the end
    instead. A click still places the cursor where it lands.
    """

    def __init__(self, edit: QLineEdit) -> None:
        super().__init__(edit)
        self._edit = edit
        edit.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self._edit and event.type() == QEvent.Type.FocusIn
                and isinstance(event, QFocusEvent)
                and event.reason() != Qt.FocusReason.MouseFocusReason):
            QTimer.singleShot(0, self._edit, self._unselect)  # after Qt's own select-all
        return False

    def _unselect(self) -> None:
        self._edit.deselect()
        self._edit.end(False)
