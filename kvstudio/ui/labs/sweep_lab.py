"""Lab: ms per token against context length, both modes, with linear and quadratic fits.

Owns `LengthSweepPanel`: the boxes (what varies, said in words here, the lengths,
the other length, rounds: ``kvstudio.labs.registry``'s SWEEP, labelled there, built
by `LabPanel`) beside `LengthSweepView` (``kvstudio.charts.labs.sweep``), which draws
the median points with min–max bars, the fitted line and parabola where the fit
means something, and a table of the fits and the points; the run is
``kvstudio.labs.cache.sweep.run``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox

from kvstudio.charts.labs.sweep import LengthSweepView
from kvstudio.charts.lazy import LazyModule
from kvstudio.ui.labs.shared.base import LabPanel

if TYPE_CHECKING:
    from kvstudio.labs.cache import sweep as lab
else:
    lab = LazyModule("kvstudio.labs.cache.sweep")  # torch loads when a lab first runs


class LengthSweepPanel(LabPanel):
    view_type = LengthSweepView  # its course model and its boxes: the registry's SWEEP
    vary: QComboBox  # built by LabPanel: "prompt", then "new"

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Generates at several lengths in both modes and plots the time per generated "
                "token (the median decode step, the prefill apart) against the context length "
                "P + N. With the cache it stays nearly flat; "
                "without it, every token re-reads the whole context, so it grows with length. "
                "Each point is the median of several rounds, its bar the fastest and slowest "
                "round. Dashed: best straight line; solid: best parabola; a curve is drawn only "
                "when it explains the points (R² at least {0:g})."
            ).format(lab.MIN_R_SQUARED)
        )
        self.vary.setItemText(0, self.tr("prompt length P"))
        self.vary.setItemText(1, self.tr("new tokens N"))
