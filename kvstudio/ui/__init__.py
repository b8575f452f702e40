"""KV Studio's window: the only package that imports PySide6 or pyqtgraph.

Importing it pins pyqtgraph to PySide6 (pyqtgraph prefers PyQt6 when both are
installed) before anything imports pyqtgraph. It creates no QApplication and
loads no model: see `kvstudio.ui.app.startup` for start-up.
"""

from __future__ import annotations

import os

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import PySide6  # noqa: F401  (must precede any pyqtgraph import)
