"""Lab: many users, one cache — the serving panel (``panel.py``); its view, the charts
and tables, is ``kvstudio.charts.labs.serving``."""

from kvstudio.ui.labs.serving.panel import ServingPanel

__all__ = ["ServingPanel"]
