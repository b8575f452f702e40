"""The end of a window process: every Qt object is deleted while Python is still whole.

Owns `tear_down` (what `startup.main`, the scripts and the test session run
after their event loop) and `python_owned_qt_objects` (what would be left for
PySide's exit hook; tests assert it is empty). It does not stop threads: a
step still running is waited for first (`run.threads.wait_for_parked`).

Why: at interpreter exit PySide's own hook deletes every Qt object that Python
still owns, one by one in no set order, after Python has begun to finalize. A
pyqtgraph item deleted there re-lays out its parent, which calls the item's
Python overrides; their errors cannot be printed any more and the process
dies with SIGSEGV (`PepException_GetArgs` under `destroyQCoreApplication`, in
about one exit in four). Two things left the whole window to that hook: the
window sits in reference cycles (plots, panels and slots refer to each other),
and those cycles had been frozen out of the collector (`heap.settle_heap`), so
not even a final `gc.collect()` could free them.

So the order is made explicit here: (1) let the collector see every object
again, (2) delete each top-level window from C++, parents first, while every
Python handler still has its objects, (3) delete what only those windows'
items used (pyqtgraph's parentless context menus: deleting them *before* their
view boxes crashed), (4) collect the Python wrappers left behind.
"""

from __future__ import annotations

import gc
import warnings

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView, QWidget


def _delete_now(app: QCoreApplication, widgets: list[QWidget]) -> None:
    for widget in widgets:
        if not getattr(widget, "closed", False):  # pyqtgraph's views refuse a second close()
            widget.close()
        widget.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _detach_items(view: QGraphicsView) -> None:
    """Let items that look at other items stop (`detach_from_chart`) while all are whole: a
    chart's deletion resizes its items from inside their parents' destructors, and a Python
    resize handler that reads a half-deleted parent crashes the process."""
    scene = view.scene()
    if scene is None:
        return
    for item in scene.items():
        detach = getattr(item, "detach_from_chart", None)
        if callable(detach):
            detach()


def delete_widget(app: QApplication, widget: QWidget) -> None:
    """Delete `widget` now, its charts one at a time first (as `tear_down` deletes windows).

    For a widget that never joins a window, such as a notebook's lab panel refused before
    it ran: ``deleteLater`` would delete it whole at some later event, and a chart deleted
    inside its parent's destructor crashed in ~QGraphicsScene."""
    if not shiboken6.isValid(widget):
        return
    for view in widget.findChildren(QGraphicsView):
        if shiboken6.isValid(view):
            _detach_items(view)
            _delete_now(app, [view])
    _delete_now(app, [widget])


def _parentless(app: QApplication, popups: bool) -> list[QWidget]:
    """Top-level widgets with no parent: windows, or (with `popups`) menus."""
    return [
        widget for widget in app.topLevelWidgets()
        if shiboken6.isValid(widget) and widget.parent() is None
        and (widget.windowType() == Qt.WindowType.Popup) == popups
    ]


def tear_down(app: QApplication) -> None:
    """Delete every window, then every menu only they used, then collect; idempotent.

    Run after the event loop has ended and parked threads have finished, before
    the interpreter exits. Afterwards `python_owned_qt_objects()` is empty, so the
    order of PySide's exit hook no longer matters.
    """
    gc.unfreeze()  # settle_heap froze the window's cycles out of every collection
    # No collection before the windows go: one that frees a window's cycle clears its
    # Python objects (attributes gone) while Qt can still call their handlers.
    # The charts found from the windows down, not from QApplication.allWidgets(): asking
    # for a wrapper of every widget in Qt's set met a freed one at the end of a test
    # session (a segfault in 1 of 3 runs of tests/ui/test_serving_lab.py then
    # test_notebook_charts.py, on the commit before too; 0 of 14 this way).
    views = [view for window in app.topLevelWidgets() if shiboken6.isValid(window)
             for view in ([window] if isinstance(window, QGraphicsView) else [])
             + window.findChildren(QGraphicsView)]
    for view in views:
        # One chart at a time, while the window around it is whole: its scene deletes
        # its items in a layout that still stands (a whole window deleted at once
        # crashed in ~QGraphicsScene, in a QGraphicsWidget's destructor).
        if shiboken6.isValid(view):
            _detach_items(view)
            _delete_now(app, [view])
    _delete_now(app, _parentless(app, popups=False))  # windows (their widgets go with them)
    # Deletions the windows' destructors queued; no other event is delivered any more (a
    # timer still pending, such as a lab build, must not run against deleted windows).
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()  # the windows' Python wrappers, now empty shells, and their cycles
    _delete_now(app, _parentless(app, popups=True))  # menus whose view boxes are gone
    gc.collect()
    for obj in _python_owned():
        # Plain QObjects that outlived their owners (pyqtgraph's WidgetGroups, finished
        # QThreads): nothing draws any more, so deleting them here is safe and leaves
        # nothing for the exit hook.
        shiboken6.delete(obj)
    gc.collect()


def _python_owned() -> list[QObject | QGraphicsItem]:
    gc.unfreeze()
    found: list[QObject | QGraphicsItem] = []
    app = QCoreApplication.instance()
    with warnings.catch_warnings():  # isinstance on a deprecated torch alias warns
        warnings.simplefilter("ignore")
        for obj in gc.get_objects():
            try:
                if (isinstance(obj, (QObject, QGraphicsItem)) and obj is not app
                        and shiboken6.isValid(obj) and shiboken6.ownedByPython(obj)):
                    found.append(obj)
            except (RuntimeError, TypeError, ReferenceError):  # its C++ object is gone
                continue
    return found


def python_owned_qt_objects() -> list[str]:
    """Type names of the live Qt objects Python still owns: what PySide's exit hook would delete.

    Includes objects frozen out of the collector (it unfreezes them; the next
    `settle_heap` freezes again).
    """
    return sorted(type(obj).__name__ for obj in _python_owned())
