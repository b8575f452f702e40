"""Lab: cache vs recompute on the course prompt (P = 183, N = 64), in fp32, fp16 or bf16.

Owns `CacheVsRecomputePanel`: the boxes (preset, P, N, warm-up, rounds, number
format: ``kvstudio.labs.registry``'s COMPARE, labelled there, built by `LabPanel`;
the presets said in words here) beside `CacheVsRecomputeView`
(``kvstudio.charts.labs.compare``), which draws the median ms per step of both modes
with a min–max band and max |Δlogit| per step, and the lab table; the run is
``kvstudio.labs.cache.compare.run``. P and N start from the course preset (P = 183,
N = 64); the preset box switches to the seed notebook's case (its 16-token sentence,
N = 64) in one click, and back.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QSpinBox

from kvstudio.charts.labs.compare import CacheVsRecomputeView
from kvstudio.labs.course import CACHE_PRESETS, CachePreset
from kvstudio.ui.labs.shared.base import LabPanel


class CacheVsRecomputePanel(LabPanel):
    view_type = CacheVsRecomputeView  # its course model and its boxes: the registry's COMPARE
    preset: QComboBox  # some of the boxes LabPanel builds: the course (P = 183) or the notebook
    prompt_tokens: QSpinBox
    new_tokens: QSpinBox

    def add_widgets(self) -> None:
        self.preset.currentIndexChanged.connect(self._on_preset_chosen)
        self.settings_label = self.add_side_note()  # what the lab changes from the course preset

    def choose_preset(self, name: str) -> None:
        """Show the preset `name` (``course`` or ``notebook``): its P and N, in one click."""
        self.preset.setCurrentIndex(max(0, self.preset.findData(name)))
        self._on_preset_chosen()

    def chosen_preset(self) -> CachePreset:
        return CACHE_PRESETS[str(self.preset.currentData())]

    def _on_preset_chosen(self) -> None:
        preset = self.chosen_preset()
        if hasattr(self, "settings_label"):
            self.settings_label.setText(self.settings_note())
        self.prompt_tokens.setValue(preset.prompt_tokens)
        self.new_tokens.setValue(preset.new_tokens)

    def read_params(self) -> dict[str, Any]:
        """The boxes' values; P or N typed away from the chosen preset's makes the run the
        course's text at those lengths (the seed notebook's sentence is its P = 16 only)."""
        values = super().read_params()
        preset = self.chosen_preset()
        if (values["prompt_tokens"], values["new_tokens"]) != (preset.prompt_tokens,
                                                               preset.new_tokens):
            values["preset"] = "course"
        return values

    def settings_note(self) -> str:
        """The setting the lab changes from the course preset (the chosen preset's)."""
        assert isinstance(self.lab_view, CacheVsRecomputeView)
        return self.lab_view.settings_note(self.chosen_preset().name)

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "Greedy generation on the lab prompt in both modes, after a short warm-up. "
                "Cached mode feeds P + (N − 1) tokens in total, recompute P·N + N(N − 1)/2. "
                "In 16-bit the two modes' logits drift apart; in fp32 they agree to about 1e-5 "
                "(float32 rounding: the headline gives the measured largest gap)."
            )
        )
        self.preset.setItemText(0, self.tr("course: P = 183, N = 64"))
        self.preset.setItemText(1, self.tr("seed notebook: P = 16, N = 64"))
        self.settings_label.setText(self.settings_note())
