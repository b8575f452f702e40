"""The four live plots. Each is one class with a long-lived set of items it updates with setData.

Every plot exposes `plot_item` (for export) and `refresh(store)` (redraw from
the runs). Colours per mode come from `MODE_COLOURS` so all plots agree.
"""

from __future__ import annotations

from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.plots.base import MODE_COLOURS, LivePlot
from kvstudio.ui.plots.cache_bytes import CacheBytesPlot
from kvstudio.ui.plots.step_time import StepTimePlot
from kvstudio.ui.plots.tokens_fed import TokensFedPlot

__all__ = ["MODE_COLOURS", "AnswerHistogramPlot", "CacheBytesPlot", "LivePlot", "StepTimePlot",
           "TokensFedPlot"]
