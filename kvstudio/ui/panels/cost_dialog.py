"""The question before an expensive run: what it will cost, and Run or Cancel.

Owns `cost_message` (the text, from a `RunCost`: the tokens by the course
formula and the seconds from the time per forward call fitted to the steps
measured so far), `cost_box` (the dialog: it takes the focus on Cancel, which
Enter and Esc choose; Space, the step key, does nothing in it, so a student
stepping the run cannot dismiss it unseen; Run takes a click, Alt+R or Tab)
and `confirm_run_cost` (ask, modally). The controller decides when to ask
(`RunCost.large`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

from kvstudio.charts.plots.plain_text import message_box
from kvstudio.ui.run.engine_adapter import RunCost


def _duration(seconds: float) -> str:
    if seconds < 120:
        return QCoreApplication.translate("CostDialog", "about {0:.0f} s").format(seconds)
    if seconds < 7200:
        return QCoreApplication.translate("CostDialog", "about {0:.0f} min").format(seconds / 60)
    return QCoreApplication.translate("CostDialog", "about {0:.1f} h").format(seconds / 3600)


def cost_message(cost: RunCost) -> str:
    """What the run feeds the model and how long that should take, in the user's language."""
    if cost.mode == "recompute":
        formula = QCoreApplication.translate(
            "CostDialog", "recompute: P·N + N(N−1)/2 with P = {0:,}, N = {1:,}")
    else:
        formula = QCoreApplication.translate(
            "CostDialog", "cached: P + (N−1) with P = {0:,}, N = {1:,}")
    text = QCoreApplication.translate(
        "CostDialog", "This run feeds the model {0:,} tokens ({1})."
    ).format(cost.tokens_fed, formula.format(cost.prompt_tokens, cost.new_tokens))
    fit = cost.fit
    if cost.seconds is None or fit is None:
        text += " " + QCoreApplication.translate(
            "CostDialog", "Its time is not known yet: no step has been measured.")
    else:
        text += " " + QCoreApplication.translate(
            "CostDialog", "At the speed measured so far that takes {0}."
        ).format(_duration(cost.seconds))
        text += " " + QCoreApplication.translate(
            "CostDialog", "(Each forward call was timed at {0:,.2f} ms + {1:,.4f} ms per token "
            "fed, fitted to {2:,} measured steps; this run makes {3:,} calls.)"
        ).format(1000 * fit.a, 1000 * fit.b, fit.steps, cost.new_tokens)
    return text + "\n\n" + QCoreApplication.translate(
        "CostDialog", "Run it? (Cached mode or a shorter prompt costs far less.)")


class _NoSpace(QObject):
    """Swallows Space in the dialog: it is the run's step key, not an answer."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(
                event, QKeyEvent) and event.key() == Qt.Key.Key_Space:
            return True
        return False


def cost_box(parent: QWidget | None, cost: RunCost) -> tuple[QMessageBox, QAbstractButton]:
    """The question, not yet shown, and its Run button. Cancel has the focus and is the
    default (Enter, Esc); Space does nothing."""
    box = message_box(QMessageBox.Icon.Question,
                      QCoreApplication.translate("CostDialog", "A long run"),
                      cost_message(cost), QMessageBox.StandardButton.Cancel, parent)
    run = box.addButton(QCoreApplication.translate("CostDialog", "&Run"),
                        QMessageBox.ButtonRole.AcceptRole)
    cancel = box.button(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setEscapeButton(cancel)
    no_space = _NoSpace(box)
    for button in box.buttons():
        button.installEventFilter(no_space)
    box.installEventFilter(no_space)
    cancel.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
    return box, run


def confirm_run_cost(parent: QWidget, cost: RunCost) -> bool:
    """Ask; True if the user chose to run."""
    box, run = cost_box(parent, cost)
    box.setWindowModality(Qt.WindowModality.ApplicationModal)
    box.show()
    box.raise_()
    box.activateWindow()  # visibly the window with the focus, on Cancel
    box.exec()
    return box.clickedButton() is run
