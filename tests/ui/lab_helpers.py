"""Helpers the lab panel tests share: a lab panel shown on a model, and one run to its result.

The `exporter` fixture those panels take lives in ``conftest.py``.
"""

from __future__ import annotations

from typing import Any

from kvstudio.ui.run.engine_adapter import ModelHandle
from kvstudio.ui.slides.export_menu import ChartExporter

LAB_TIMEOUT_MS = 20_000  # one lab run on the tiny model


def show_lab(
    qtbot: Any,
    cls: type[Any],
    exporter: ChartExporter,
    model: ModelHandle,
    size: tuple[int, int] = (1000, 700),
) -> Any:
    """A `cls` lab panel, shown at `size` with `model` loaded (closed with the test)."""
    panel = cls(exporter)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    panel.set_model(model)
    return panel


def run_lab(qtbot: Any, panel: Any, timeout: int = LAB_TIMEOUT_MS) -> object:
    """Runs the panel's lab and waits for its result (what `result_ready` carried)."""
    with qtbot.waitSignal(panel.result_ready, timeout=timeout) as blocker:
        assert panel.run()
    return blocker.args[0]
