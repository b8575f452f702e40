"""What the window and the notebook both draw with: charts' data, style, slides and export.

The one package besides the window (``kvstudio.ui``) that imports Qt and pyqtgraph,
below both fronts that draw (the window and ``kvstudio.notebook``), above the labs:

- `chart_data` — what a chart is (`ChartLike`), the numbers it plots (`DataTable`,
  `Series`) and `ExportError`; `style` — the plot style of the window, a slide and
  the projector; `colour_scale` — a heat map's colour bar and its scale on a slide;
- `canvas` — the slide sizes; `render` — a chart drawn onto a slide as PNG, SVG or
  PDF (`svg_outlines`: text as outlines), with its headline (`plotted_data`, which
  also writes the CSV) and the random-weights notice (`weights_notice`); `export` —
  the files and the slide pack;
- `fonts`, `i18n` and `korean` — the bundled Korean font, the translations and
  Korean particles, so a chart reads the same in the window and in a notebook.
"""

from __future__ import annotations

import os

# pyqtgraph prefers PyQt6 when both are installed: the charts (and the window) use PySide6.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import PySide6  # noqa: F401  (before any pyqtgraph import)
