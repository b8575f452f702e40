"""Whether the model that draws the charts has random weights, so every slide can say so.

Owns one flag: `load_model` (``engine_adapter``) sets it for each model it loads,
and a slide's headline (`kvstudio.charts.plotted_data.chart_headline`) starts
with `notice()` while it is set. Random weights are only ever asked for
(``--model random``), never a fall-back, and a chart drawn from them is labelled
wherever it goes: the window, the presenter view, an exported slide, a notebook.
"""

from __future__ import annotations

_state = {"random": False}


def set_random_weights(random: bool) -> None:
    _state["random"] = random


def notice() -> str:
    """The words a slide's headline starts with while random weights draw it, else ""."""
    if not _state["random"]:
        return ""
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate(
        "WeightsNotice", "Random weights (the text is noise; counts, bytes and times are real)"
    )
