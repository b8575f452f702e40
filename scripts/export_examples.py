"""Regenerate the example exports in docs/exports/ (what a lecturer gets from the window).

Usage: QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/export_examples.py [OUT_DIR]

Runs the seeded course model (random weights until a trained one ships: the
text is noise, the counts, bytes and times are real) greedily in both modes,
draws the window's live plots and the cache-vs-recompute lab, and exports:

- cache-vs-recompute.png  the lab chart, 1920 px wide, slide theme
- tokens-fed.svg          the live tokens-fed plot as SVG
- live-charts.pdf         tokens fed, time per step, cache bytes: one page each
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import torch
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

import kvstudio.ui  # noqa: F401  (pins pyqtgraph to PySide6)
from kvstudio.core.checkpoints import random_model
from kvstudio.core.records import MODES, SamplingSettings
from kvstudio.ui.app.startup import prepare_application
from kvstudio.ui.labs import CacheVsRecomputePanel
from kvstudio.ui.plots import CacheBytesPlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    RunRequest,
    RunSettings,
    make_stepper,
    run_info,
    wrap_loaded,
)
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides import export
from kvstudio.ui.slides.export_menu import ChartExporter

log = logging.getLogger("export_examples")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/exports")
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # read when the QApplication starts
    app = QApplication.instance() or QApplication([])
    prepare_application(app)  # type: ignore[arg-type]
    model = wrap_loaded(random_model(0), ModelChoice())

    store = RunStore()
    for run_id, mode in enumerate(reversed(MODES), start=1):  # cached last: the current run
        settings = RunSettings(mode, SamplingSettings.greedy_settings(), 24)
        request = RunRequest("KV 캐시는 무엇인가요? 한 문단으로 설명해 주세요.", False, settings)
        ids = model.tokenizer.encode(request.prompt)
        store.begin(run_info(run_id, model, request, ids))
        for record in make_stepper(model, ids, settings):
            store.add(run_id, record)
    plots = [TokensFedPlot(), StepTimePlot(), CacheBytesPlot()]
    for plot in plots:
        plot.resize(800, 480)
        plot.show()
        plot.refresh(store)
    export.export_chart(plots[0], out / "tokens-fed.svg")
    export.atomic_write(out / "live-charts.pdf", export.render_pdf(plots))

    lab = CacheVsRecomputePanel(ChartExporter())
    lab.resize(1500, 800)
    lab.show()
    lab.set_model(model)
    loop = QEventLoop()
    lab.result_ready.connect(loop.quit)
    lab.failed.connect(loop.quit)
    QTimer.singleShot(0, lab.run)
    loop.exec()
    export.export_chart(lab.view, out / "cache-vs-recompute.png")
    lab.shutdown()
    log.info("wrote %s", ", ".join(sorted(p.name for p in out.iterdir())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
