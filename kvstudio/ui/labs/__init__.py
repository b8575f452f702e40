"""The lab panels: one module per lab, each running a core experiment on the lab thread.

`LabsPanel` holds them all; the window adds it as a tab (see ``classroom.py``).
"""

from __future__ import annotations

from kvstudio.ui.labs.beam_lab import BeamSearchPanel
from kvstudio.ui.labs.cache_kinds_lab import CacheKindsPanel
from kvstudio.ui.labs.compare_lab import CacheVsRecomputePanel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.labs.labs_panel import PANEL_TYPES, LabsPanel
from kvstudio.ui.labs.paged_lab import PagedCachePanel
from kvstudio.ui.labs.projector_lab import ProjectorPanel
from kvstudio.ui.labs.quantized_lab import QuantizedCachePanel
from kvstudio.ui.labs.serving import ServingPanel
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.labs.speculative_lab import SpeculativePanel
from kvstudio.ui.labs.sweep_lab import LengthSweepPanel
from kvstudio.ui.labs.temperature_lab import TemperaturePanel
from kvstudio.ui.labs.twin_lab import EngineTwinPanel

__all__ = [
    "PANEL_TYPES",
    "BeamSearchPanel",
    "CacheKindsPanel",
    "CacheVsRecomputePanel",
    "EngineTwinPanel",
    "LabPanel",
    "LabsPanel",
    "LengthSweepPanel",
    "PagedCachePanel",
    "ProjectorPanel",
    "QuantizedCachePanel",
    "ServingPanel",
    "SpeculativePanel",
    "TemperaturePanel",
    "TopPTopKPanel",
]
