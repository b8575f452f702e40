"""The question before an expensive run: what it will cost, and Run or Cancel.

Owns `cost_message` (the text, from a `RunCost`) and `confirm_run_cost` (a
modal question). The controller decides when to ask (`RunCost.large`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from kvstudio.ui.app.plain_text import message_box
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
    if cost.seconds is None:
        text += " " + QCoreApplication.translate(
            "CostDialog", "Its time is not known yet: no step has been measured.")
    else:
        text += " " + QCoreApplication.translate(
            "CostDialog", "At the speed measured so far that takes {0}."
        ).format(_duration(cost.seconds))
    return text + "\n\n" + QCoreApplication.translate(
        "CostDialog", "Run it? (Cached mode or a shorter prompt costs far less.)")


def confirm_run_cost(parent: QWidget, cost: RunCost) -> bool:
    """Ask; True if the user chose to run."""
    box = message_box(QMessageBox.Icon.Question,
                      QCoreApplication.translate("CostDialog", "A long run"),
                      cost_message(cost), QMessageBox.StandardButton.Cancel, parent)
    run = box.addButton(QCoreApplication.translate("CostDialog", "Run"),
                        QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is run
