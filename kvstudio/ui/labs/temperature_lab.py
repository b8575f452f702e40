"""Lab: a list of temperatures × 30 samples with one seed, and the same seed in both modes.

Owns `TemperaturePanel`: the boxes (prompt, temperatures, samples, answer
length, the course's knobs on one row, seed, both modes: ``kvstudio.labs.registry``'s
SAMPLE, labelled there, built by `LabPanel`) beside `TemperatureView`
(``kvstudio.charts.labs.sample``), which draws the grouped histogram, the
distinct answers per temperature, the answers themselves and whether both
modes gave the same answers for the same seed; the run is
``kvstudio.labs.sampling.temperature.run``. Its fields start from the course
preset (`kvstudio.labs.course.COURSE`: the dock's top-k, top-p and penalty),
and a settings line under the table says which settings made the result (the
fields' before a run) and what differs from the course's.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDoubleSpinBox, QLineEdit, QSpinBox

from kvstudio.charts.labs.sample import TemperatureView
from kvstudio.engine.records import SamplingSettings
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.spin_boxes import param_value
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.run.engine_adapter import parse_temperatures


class TemperaturePanel(LabPanel):
    view_type = TemperatureView  # its course model and its boxes: the registry's SAMPLE
    # The knobs on one row: the chart keeps its height at 1366×768.
    box_rows = (("top_k", "top_p", "penalty"),)
    temperatures: QLineEdit  # some of the boxes LabPanel builds from the declaration
    samples: QSpinBox
    new_tokens: QSpinBox
    top_k: QSpinBox
    top_p: QDoubleSpinBox
    penalty: QDoubleSpinBox
    seed: QSpinBox

    def add_widgets(self) -> None:
        assert isinstance(self.lab_view, TemperatureView)
        self.temperature_view: TemperatureView = self.lab_view
        self.chart_layout.addWidget(self.temperature_view.answers)  # under the chart
        self.settings_label = self.add_side_note()  # the settings that made the chart, and changes
        for box in (self.top_k, self.top_p, self.penalty, self.seed, self.samples,
                    self.new_tokens):
            box.valueChanged.connect(self._show_settings)
        self.temperatures.textChanged.connect(self._show_settings)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Each temperature draws the same number of answers from one seed. Low "
                "temperatures repeat one answer; high ones spread out. The same seed gives the "
                "same answers in cached and recompute mode, except where float rounding (the two "
                "modes' logits differ by about 1e-5) tips a draw that sits right at a boundary."
            )
        )
        self.top_k.setSpecialValueText(self.tr("off"))
        self._show_settings()

    def sampling(self) -> SamplingSettings:
        """The knobs in the fields (each temperature replaces the temperature)."""
        return SamplingSettings(COURSE.temperature, self.top_k.value(), self.top_p.value(),
                                self.penalty.value(), self.seed.value())

    def read_params(self) -> dict[str, Any]:
        """The boxes' parameters; the temperatures read as the sampling dock reads them."""
        temps = parse_temperatures(self.temperatures.text())
        if not temps:
            raise ValueError("Give at least one temperature, e.g. 0.3, 0.7, 1.0, 1.3.")
        values: dict[str, Any] = {"temperatures": temps}
        for param in self.spec.params:
            if param.name != "temperatures":
                values[param.name] = param_value(param, getattr(self, param.box_name))
        return self.spec.check(values)

    def settings_text(self) -> str:
        """The settings line: from the result once there is one, else from the fields."""
        made = self.temperature_view.settings_text()
        if made:
            return made
        try:
            temps = parse_temperatures(self.temperatures.text()) or COURSE.temperatures
        except ValueError:
            temps = COURSE.temperatures
        return self.temperature_view.sampling_settings_text(
            self.sampling(), temperatures=list(temps), samples=self.samples.value(),
            answer_tokens=self.new_tokens.value())

    def _show_settings(self) -> None:
        if hasattr(self, "settings_label"):
            self.settings_label.setText(self.settings_text())

    def clear_views(self) -> None:
        super().clear_views()
        self._show_settings()

    def take_result(self, result: object) -> None:
        super().take_result(result)
        self._show_settings()
