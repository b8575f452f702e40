"""Helpers the lab panel tests share: a lab panel shown on a model, and one run to its result.

The `exporter` fixture those panels take lives in ``conftest.py``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.waits import HANG_GUARD_MS

# The engine twin lab runs only with the optional llama extra (CI's engines step installs it).
LLAMA_EXTRA = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "gguf"))


def show_lab(
    qtbot: Any,
    cls: type[Any],
    exporter: ChartExporter,
    model: LoadedModel,
    size: tuple[int, int] = (1000, 700),
) -> Any:
    """A `cls` lab panel, shown at `size` with `model` loaded (shut down with the test).

    pytest-qt closes the widgets it was given only while they live, and it holds
    them weakly: a panel the test no longer holds may be collected before the
    close, its lab thread still waiting for jobs. The test's `qtbot` keeps it,
    and the thread guard in ``conftest.py`` shuts it down before checking.
    """
    panel = cls(exporter)
    qtbot.addWidget(panel)
    if not hasattr(qtbot, "lab_panels"):
        qtbot.lab_panels = []
    qtbot.lab_panels.append(panel)
    panel.resize(*size)
    panel.show()
    panel.set_model(model)
    return panel


def run_lab(qtbot: Any, panel: Any) -> object:
    """Runs the panel's lab and waits for its result (what `result_ready` carried)."""
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS) as blocker:
        assert panel.run()
    return blocker.args[0]


def run_stepped(qtbot: Any, panel: Any) -> object:
    """Start a stepped lab (top-p, inspector) and run it to its end; its result."""
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        assert panel.run()
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS) as blocker:
        assert panel.run_to_end()
    return blocker.args[0]


def fill_every_page(qtbot: Any, window: Any) -> list[Any]:
    """Run every lab, two chat turns and the inspector with the smallest settings that
    fill each of their charts (the tiny model); the pages, in the order run."""
    labs = window.classroom.labs
    window.tabs.setCurrentWidget(labs)
    labs.panels["compare"].prompt_tokens.setValue(8)
    labs.panels["compare"].new_tokens.setValue(3)
    labs.panels["compare"].warmup.setValue(0)
    labs.panels["compare"].repeats.setValue(1)
    labs.panels["sample"].temperatures.setText("0.5, 1.5")
    labs.panels["sample"].samples.setValue(3)
    labs.panels["sample"].new_tokens.setValue(2)
    labs.panels["cutoff"].new_tokens.setValue(2)
    labs.panels["cache_kinds"].prompt_tokens.setValue(8)
    labs.panels["cache_kinds"].new_tokens.setValue(3)
    labs.panels["cache_kinds"].window_size.setValue(4)
    labs.panels["sweep"].values.setText("4, 8, 12")
    labs.panels["sweep"].fixed.setValue(2)
    labs.panels["sweep"].repeats.setValue(1)
    labs.panels["paged"].samples.setValue(2)
    labs.panels["paged"].new_tokens.setValue(3)
    labs.panels["quantized"].prompt_tokens.setValue(8)
    labs.panels["quantized"].new_tokens.setValue(3)
    labs.panels["serving"].batch_sizes.setText("1, 2")
    labs.panels["serving"].repeats.setValue(1)
    labs.panels["serving"].answer_tokens.setValue(3)
    labs.panels["speculative"].new_tokens.setValue(6)
    labs.panels["speculative"].ks.setText("1, 2")
    labs.panels["speculative"].repeats.setValue(1)
    labs.panels["beam"].beams.setValue(2)
    labs.panels["beam"].new_tokens.setValue(3)
    labs.panels["beam"].check_transformers.setChecked(False)
    labs.panels["twin"].prompt_tokens.setValue(48)  # its checks use the first 40
    labs.panels["twin"].new_tokens.setValue(3)
    labs.panels["twin"].repeats.setValue(2)
    pages = []
    for lab in labs.labs():
        if lab is labs.panels["twin"] and not LLAMA_EXTRA:
            continue  # without the llama extra its Run says what to install (test_twin_panel)
        labs.tabs.setCurrentWidget(lab)
        if hasattr(lab, "to_end_button"):
            run_stepped(qtbot, lab)
        else:
            run_lab(qtbot, lab)
        pages.append(lab)
    chat = window.classroom.chat
    window.tabs.setCurrentWidget(chat)
    chat.answer_tokens.setValue(3)
    for _ in range(2):
        chat.next_scripted_turn()
        run_lab(qtbot, chat)
    inspector = window.classroom.inspector
    window.tabs.setCurrentWidget(inspector)
    inspector.new_tokens.setValue(2)
    run_stepped(qtbot, inspector)
    return [*pages, chat, inspector]


def show_page(window: Any, page: Any) -> None:
    """Make `page` (a lab, the chat or the inspector) the one on screen."""
    labs = window.classroom.labs
    if page in labs.labs():
        window.tabs.setCurrentWidget(labs)
        labs.tabs.setCurrentWidget(page)
    else:
        window.tabs.setCurrentWidget(page)
