"""Lab: many users, one cache — the serving panel (``panel.py``), its timeline chart
(``timeline.py``) and what its result says on a slide (``exports.py``)."""

from kvstudio.ui.labs.serving.panel import ServingPanel, parse_batch_sizes

__all__ = ["ServingPanel", "parse_batch_sizes"]
