"""Lab: the engine twin, KV Studio and llama.cpp on the same model, side by side.

Owns `EngineTwinPanel`: the boxes P, N, temperature, seed and the timing rounds
beside `TwinView`
(``kvstudio.charts.labs.twin``); the run is ``kvstudio.labs.twin.run``, which
writes the loaded model as a temporary GGUF and opens it in llama.cpp (the
optional llama extra). Without that extra the tab still shows, and Run says
what to install (the run's own message, before any work).
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from kvstudio.charts.labs.twin import TwinView
from kvstudio.labs.registry import TWIN as LAB
from kvstudio.ui.app.spin_boxes import param_float_box, param_int_box
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter


class EngineTwinPanel(LabPanel):
    view_type = TwinView  # the window's model (the registry names no course model)

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(exporter, parent)
        self.prompt_tokens = param_int_box(LAB.param("prompt_tokens"))
        self.new_tokens = param_int_box(LAB.param("new_tokens"))
        self.temperature = param_float_box(LAB.param("temperature"))
        self.seed = param_int_box(LAB.param("seed"))
        self.repeats = param_int_box(LAB.param("repeats"))
        for key, widget in (
            ("prompt", self.prompt_tokens),
            ("new", self.new_tokens),
            ("temperature", self.temperature),
            ("seed", self.seed),
            ("repeats", self.repeats),
        ):
            self.add_field(key, widget)
        self.retranslate()

    def title(self) -> str:
        return self.tr("Engine twin")

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "The same model in KV Studio and in llama.cpp (written as a GGUF file): the "
                "same tokens (greedy at temperature 0; above it, both engines' logits go through "
                "KV Studio's sampler with the same seed), the KV bytes a token costs as each "
                "engine reports it, "
                "the tokens each evaluates for a second prompt sharing a prefix, a copied and a "
                "cropped sequence, and decode ms/token on one thread in interleaved rounds. "
                "llama.cpp runs the step as one compiled graph; KV Studio's eager PyTorch "
                "dispatches every operation from Python, so each token costs more here. "
                "Needs the llama extra: pip install \"kvstudio[llama]\"."
            )
        )
        self.set_field_names(
            {
                "prompt": self.tr("Prompt tokens P"),
                "new": self.tr("New tokens N"),
                "temperature": self.tr("Temperature (0: greedy)"),
                "seed": self.tr("Seed"),
                "repeats": self.tr("Timing rounds"),
            }
        )
