"""Lab: a quantized KV cache — fewer bytes, and what it costs in logits.

Owns `QuantizedCachePanel`: the boxes P and N (``kvstudio.labs.registry``'s
QUANTIZED, labelled there, built by `LabPanel`) beside `QuantizedCacheView`
(``kvstudio.charts.labs.quantized``), which draws max |Δlogit| per step for
the fp16, int8 and int4 caches next to the bytes each stores; the run is
``kvstudio.labs.cache.quantized.run`` (greedy with the model's own cache, then
with each quantized one).
"""

from __future__ import annotations

from kvstudio.charts.labs.quantized import QuantizedCacheView
from kvstudio.ui.labs.shared.base import LabPanel


class QuantizedCachePanel(LabPanel):
    view_type = QuantizedCacheView  # its course model and its boxes: the registry's QUANTIZED

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "The same greedy run with the model's own cache and with K and V stored in "
                "16 bits, in 8 bits (int8, one float16 scale per token and K/V head) and in 4 "
                "bits (two numbers a byte, same scales). Attention sees them dequantized. "
                "Bytes are measured from the stored tensors, scales included; the drift is the "
                "largest logit change per step while the context still matches."
            )
        )
