"""KV Studio in a notebook: the window's labs, charts and exports in Jupyter, Colab or a script.

    from kvstudio import notebook as kv
    run = kv.compare()          # cache vs recompute, P = 183, N = 64
    run.records                 # the lab's table as a list of dicts (run.df: a DataFrame)
    kv.export(run, "compare.png")

Each lab function (`compare`, `sample`, `cutoff`, `cache_kinds`, `sweep`,
`paged`, `quantized`, `projector`, `chat`, `serving`, `beam`, `speculative`) is
made from the lab's declaration (``kvstudio.labs.registry``): it runs the lab's
own run, the one the window and the ``kvstudio`` command run, draws it with the
lab's view, the chart code the window shows (``kvstudio.charts.labs``), shows a
progress bar and the chart live (through ``pyqtgraph.jupyter``; a text progress
line in a terminal) and returns a `LabRun`. `load` loads a model once; `export` /
`export_pack` write PNG, SVG, PDF and CSV exactly as the window's export does;
`language("ko")` draws the charts in Korean. A front beside the window and the
command: it imports neither (an import-linter contract).
Needs the ``notebook`` extra in Jupyter
(``pip install "kvstudio[notebook]"``); plain Python needs only KV Studio.
"""

from kvstudio.notebook.environment import prepare_qt_environment

prepare_qt_environment()  # before anything imports Qt: offscreen without a display

from kvstudio.notebook.environment import application, in_jupyter, language, threads  # noqa: E402
from kvstudio.notebook.export import export, export_pack  # noqa: E402
from kvstudio.notebook.labs import (  # noqa: E402
    beam,
    cache_kinds,
    chat,
    compare,
    cutoff,
    paged,
    projector,
    quantized,
    run_lab,
    sample,
    serving,
    speculative,
    sweep,
    twin,
)
from kvstudio.notebook.models import about, load  # noqa: E402
from kvstudio.notebook.runner import LabRun  # noqa: E402

__all__ = [
    "LabRun",
    "about",
    "application",
    "beam",
    "cache_kinds",
    "chat",
    "compare",
    "cutoff",
    "export",
    "export_pack",
    "in_jupyter",
    "language",
    "load",
    "paged",
    "projector",
    "quantized",
    "run_lab",
    "sample",
    "serving",
    "speculative",
    "sweep",
    "threads",
    "twin",
]
