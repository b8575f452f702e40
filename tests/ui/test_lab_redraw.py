"""Lab panels draw progress in batches, and timing labs only at the end.

A redraw runs pyqtgraph's Python on the UI thread and holds the GIL; the model
thread waits for it inside a step it is timing. Drawing every progress item made
a 4 ms cached step measure 45 ms and the lab's speed ratio read 1.0×.
"""

from __future__ import annotations

from pathlib import Path

from kvstudio.labs.common import Progress
from kvstudio.ui.labs import CacheKindsPanel, CacheVsRecomputePanel
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.waits import HANG_GUARD_MS


def _exporter(tmp_path: Path) -> ChartExporter:
    return ChartExporter(save_chooser=lambda *a: "", folder_chooser=lambda *a: str(tmp_path))


def _spy(panel: LabPanel) -> list[object]:
    drawn: list[object] = []
    target = panel.lab_view  # what draws the lab
    original = target.show_progress

    def show_progress(item: object) -> None:
        drawn.append(item)
        original(item)

    target.show_progress = show_progress  # type: ignore[method-assign]
    return drawn


def test_progress_items_are_drawn_in_one_batch(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    panel = CacheKindsPanel(_exporter(tmp_path))
    qtbot.addWidget(panel)
    drawn = _spy(panel)
    items = [Progress("kinds", "other", i, 10) for i in range(1, 6)]
    for item in items:
        panel._on_runner_progress(item)
    assert drawn == []  # nothing drawn while items arrive …
    qtbot.waitUntil(lambda: len(drawn) == 5, timeout=HANG_GUARD_MS)  # … then all of them at once
    assert drawn == items
    assert panel.progress.value() == 5


def test_timing_lab_updates_only_the_progress_bar_while_running(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    panel = CacheVsRecomputePanel(_exporter(tmp_path))
    qtbot.addWidget(panel)
    drawn = _spy(panel)
    for i in range(1, 4):
        panel._on_runner_progress(Progress("compare", "cached", i, 8))
    panel._flush_progress()
    assert drawn == []  # the chart is drawn from the result, not step by step
    assert (panel.progress.maximum(), panel.progress.value()) == (8, 3)
