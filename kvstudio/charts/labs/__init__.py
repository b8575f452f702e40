"""Each lab's view: what its result shows (charts, table, headline, numbers), drawn
the same way by the window's lab panel and by the notebook. `VIEW_TYPES` maps a
registry key to its view; the Cache inspector, a window tab outside the registry, has
its view in ``inspector.py``.
"""

from __future__ import annotations

from kvstudio.charts.labs.base import LabView
from kvstudio.charts.labs.beam import BeamSearchView
from kvstudio.charts.labs.cache_kinds import CacheKindsView
from kvstudio.charts.labs.chat import ChatView
from kvstudio.charts.labs.compare import CacheVsRecomputeView
from kvstudio.charts.labs.cutoff import TopPTopKView
from kvstudio.charts.labs.paged import PagedCacheView
from kvstudio.charts.labs.projector import ProjectorView
from kvstudio.charts.labs.quantized import QuantizedCacheView
from kvstudio.charts.labs.sample import TemperatureView
from kvstudio.charts.labs.serving import ServingView
from kvstudio.charts.labs.speculative import SpeculativeView
from kvstudio.charts.labs.sweep import LengthSweepView
from kvstudio.charts.labs.twin import TwinView

VIEW_TYPES: dict[str, type[LabView]] = {
    view.key: view for view in (CacheKindsView, CacheVsRecomputeView, LengthSweepView, ServingView,
                                TemperatureView, TopPTopKView,
                                PagedCacheView, QuantizedCacheView, ProjectorView,
                                BeamSearchView, SpeculativeView, ChatView, TwinView)
}
