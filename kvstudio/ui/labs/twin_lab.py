"""Lab: the engine twin, KV Studio and llama.cpp on the same model, side by side.

Owns `EngineTwinPanel`: the boxes P, N, temperature, seed and the timing rounds
(``kvstudio.labs.registry``'s TWIN, labelled there, built by `LabPanel`) beside
`TwinView` (``kvstudio.charts.labs.twin``); the run is ``kvstudio.labs.twin.run``, which
writes the loaded model as a temporary GGUF and opens it in llama.cpp (the
optional llama extra). Without that extra the tab still shows, and Run says
what to install (the run's own message, before any work).
"""

from __future__ import annotations

from kvstudio.charts.labs.twin import TwinView
from kvstudio.ui.labs.shared.base import LabPanel


class EngineTwinPanel(LabPanel):
    view_type = TwinView  # its boxes: the registry's TWIN (no course model: the window's)

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
