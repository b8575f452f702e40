"""Screenshots of the three scale labs (paged, quantized, projector), in Korean, under Xvfb.

Usage: xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/scale_lab_screenshots.py \
           [--out docs/labs] [--lang ko]
Each lab runs on the shipped ko-chat model with its default settings; the panel is
grabbed once its result is drawn.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from PySide6.QtWidgets import QApplication
from window_harness import settle, wait_for

from kvstudio.charts.i18n import LanguageSwitcher
from kvstudio.ui.app.shutdown import tear_down
from kvstudio.ui.app.startup import prepare_application
from kvstudio.ui.labs import PagedCachePanel, ProjectorPanel, QuantizedCachePanel
from kvstudio.ui.run.engine_adapter import ModelChoice, load_model
from kvstudio.ui.slides.export_menu import ChartExporter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("docs/labs"))
    parser.add_argument("--lang", default="ko")
    args = parser.parse_args()
    app = QApplication(sys.argv)
    prepare_application(app)
    LanguageSwitcher(app).apply(args.lang)
    model = load_model(ModelChoice("embedded-chat"))
    exporter = ChartExporter(save_chooser=lambda *a: "", folder_chooser=lambda *a: "")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, cls in (
        ("paged-cache", PagedCachePanel),
        ("quantized-cache", QuantizedCachePanel),
        ("scale-projector", ProjectorPanel),
    ):
        panel = cls(exporter)
        panel.resize(1500, 820)
        panel.show()
        panel.set_model(model)
        if isinstance(panel, ProjectorPanel):
            panel.source.setCurrentIndex(panel.source.findData("llama-3.1-8b"))
        done: list[object] = []
        panel.result_ready.connect(done.append)
        panel.run()
        wait_for(lambda done=done: bool(done), 300, name)  # type: ignore[misc]
        settle(400)
        path = args.out / f"{name}.png"
        panel.grab().save(str(path))
        print(f"wrote {path}")
        panel.shutdown()
        panel.close()
    tear_down(app)  # what it built, before Python ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
