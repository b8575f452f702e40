"""Lab: ms per token against context length, both modes, with linear and quadratic fits.

Owns `LengthSweepPanel`: the boxes (what varies, the lengths, the other length,
rounds) beside `LengthSweepView` (``kvstudio.charts.labs.sweep``), which draws
the median points with min–max bars, the fitted line and parabola where the fit
means something, and a table of the fits and the points; the run is
``kvstudio.labs.cache.sweep.run``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QWidget

from kvstudio.charts.labs.sweep import LengthSweepView
from kvstudio.charts.lazy import LazyModule
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import SWEEP as LAB
from kvstudio.ui.app.spin_boxes import param_int_box, param_line
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter

if TYPE_CHECKING:
    from kvstudio.labs.cache import sweep as lab
else:
    lab = LazyModule("kvstudio.labs.cache.sweep")  # torch loads when a lab first runs


class LengthSweepPanel(LabPanel):
    view_type = LengthSweepView  # its course model: the registry's course_role

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.vary = QComboBox()
        self.vary.addItem("", "prompt")
        self.vary.addItem("", "new")
        self.vary.setCurrentIndex(self.vary.findData(COURSE.sweep_vary))  # the course preset
        self.values = param_line(LAB.param("values"))
        self.fixed = param_int_box(LAB.param("fixed"))
        self.repeats = param_int_box(LAB.param("repeats"))
        for key, widget in (("vary", self.vary), ("values", self.values), ("fixed", self.fixed),
                            ("repeats", self.repeats)):
            self.add_field(key, widget)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Length sweep")

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
        self.set_field_names(
            {
                "vary": self.tr("Vary"),
                "values": self.tr("Lengths"),
                "fixed": self.tr("The other length"),
                "repeats": self.tr("Rounds (median of)"),
            }
        )
