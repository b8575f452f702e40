"""Lab: dynamic vs static vs sliding-window cache on one prompt.

Owns `CacheKindsPanel`: the boxes P, N and W (``kvstudio.labs.registry``'s
CACHE_KINDS, labelled there, built by `LabPanel`) beside `CacheKindsView`
(``kvstudio.charts.labs.cache_kinds``), which draws the bytes each cache holds
and the keys each new token attends to; the run is
``kvstudio.labs.cache.kinds.run``.
"""

from __future__ import annotations

from kvstudio.charts.labs.cache_kinds import CacheKindsView
from kvstudio.ui.labs.shared.base import LabPanel


class CacheKindsPanel(LabPanel):
    view_type = CacheKindsView  # its course model and its boxes: the registry's CACHE_KINDS

    def retranslate(self) -> None:
        super().retranslate()
        self.explanation.setText(
            self.tr(
                "The same greedy run with three caches. Dynamic grows by one token per step; "
                "static reserves P + N tokens up front; with a sliding window W each token sees "
                "the last W tokens, itself included (transformers' sliding_window), so the "
                "cache keeps W − 1 and its memory stops growing there. When W covers the whole "
                "context the output must match the dynamic cache."
            )
        )
