"""The live prompt box holds what a lab text field holds, and says when a paste was cut.

Qt lays a one-line paste out whole: 100 KB took 1.45 s and 1 MB froze the
window for minutes (155–244 s), while the lab fields stop at 32,767 characters
(`kvstudio.labs.params.MAX_TEXT_CHARS`). A longer paste is cut there, and the
line under the box says how many characters were left out and what to do.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication, QTextCursor

from kvstudio.labs.params import MAX_TEXT_CHARS
from kvstudio.ui.panels.generation_view import GenerationView

# A little past the bound: long enough to be cut, short enough that today's box
# (no bound) takes it in well under a second instead of hanging the test.
OVER = MAX_TEXT_CHARS + 5_000


def _view(qtbot) -> GenerationView:  # type: ignore[no-untyped-def]
    view = GenerationView()
    qtbot.addWidget(view)
    view.show()
    return view


def test_a_long_one_line_paste_is_cut_to_the_lab_fields_bound_and_said(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(qtbot)
    pasted = "가" * OVER  # one line, as a pasted document often is
    QGuiApplication.clipboard().setText(pasted)
    view.prompt_edit.paste()
    assert len(view.prompt()) == MAX_TEXT_CHARS
    assert view.prompt() == pasted[:MAX_TEXT_CHARS]  # the start kept, in order
    note = view.prompt_note()
    assert f"{MAX_TEXT_CHARS:,}" in note and f"{OVER:,}" in note
    assert f"{OVER - MAX_TEXT_CHARS:,}" in note  # how much was left out
    assert "Shorten" in note
    assert QGuiApplication.clipboard().text() == pasted  # nothing of the user's text is lost


def test_a_paste_fills_only_the_room_left_and_replaces_a_selection(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(qtbot)
    view.set_prompt("abc")
    cursor = view.prompt_edit.textCursor()
    cursor.setPosition(1)
    cursor.setPosition(2, QTextCursor.MoveMode.KeepAnchor)  # "b" selected: one more character
    view.prompt_edit.setTextCursor(cursor)
    data = QMimeData()
    data.setText("x" * OVER)
    view.prompt_edit.insertFromMimeData(data)
    text = view.prompt()
    assert len(text) == MAX_TEXT_CHARS
    assert text.startswith("ax") and text.endswith("xc")
    assert view.prompt_note()
    view.prompt_edit.setPlainText("short again")  # room in the box: the note has done its job
    assert view.prompt_note() == ""
    data.setText("fits")
    view.prompt_edit.insertFromMimeData(data)
    assert view.prompt_note() == ""


def test_a_remembered_or_typed_overlong_prompt_is_cut_too(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(qtbot)
    view.set_prompt("y" * OVER)  # a prompt remembered from before the bound
    assert len(view.prompt()) == MAX_TEXT_CHARS
    assert view.prompt_note()
    view.prompt_edit.setPlainText("z" * MAX_TEXT_CHARS)
    view.prompt_edit.moveCursor(QTextCursor.MoveOperation.End)
    view.prompt_edit.insertPlainText("!")  # typing at the bound
    assert len(view.prompt()) == MAX_TEXT_CHARS
    assert view.prompt_note()


def test_cut_and_paste_in_the_box_still_work(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(qtbot)
    view.set_prompt("hello world")
    view.prompt_edit.selectAll()
    view.prompt_edit.cut()  # Ctrl+X: Qt's own slot, not shadowed by the box's signal
    assert view.prompt() == ""
    view.prompt_edit.paste()
    assert view.prompt() == "hello world"
    assert view.prompt_note() == ""
