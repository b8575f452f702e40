"""The serving lab's view (``view.py``), its timeline chart's axis and colours
(``timeline.py``) and what its result says on a slide (``exports.py``)."""

from kvstudio.charts.labs.serving.view import ServingView

__all__ = ["ServingView"]
