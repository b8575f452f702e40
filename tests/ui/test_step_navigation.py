"""Start, Step and Run to end, shared by the labs that step by hand (`SteppedLabPanel`).

Driven through the buttons, as a student would: they are enabled only while a
run waits for them, and the top-p lab collects its summary after the last step
without another click.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lab_helpers import show_lab

from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
from kvstudio.ui.labs.shared.step_navigation import SteppedLabPanel
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.waits import HANG_GUARD_MS


@pytest.fixture(params=[TopPTopKPanel, CacheInspectorPanel])
def panel(  # type: ignore[no-untyped-def]
    request, qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> Iterator[SteppedLabPanel]:
    panel = show_lab(qtbot, request.param, exporter, tiny_handle)
    yield panel
    panel.shutdown()


def _buttons(panel: SteppedLabPanel) -> tuple[bool, bool]:
    return panel.step_button.isEnabled(), panel.to_end_button.isEnabled()


def test_step_buttons_wait_for_a_paused_run(qtbot, panel: SteppedLabPanel) -> None:  # type: ignore[no-untyped-def]
    panel.new_tokens.setValue(4)
    assert [panel.run_button.text(), panel.step_button.text(), panel.to_end_button.text()] == [
        "Start", "Step", "Run to end"]
    assert _buttons(panel) == (False, False)  # nothing to step yet
    assert not panel.step() and not panel.run_to_end()
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        panel.run_button.click()
    assert _buttons(panel) == (True, True)
    rows = panel.table.rowCount()
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        panel.step_button.click()
        assert _buttons(panel) == (False, False)  # while the step runs
    assert _buttons(panel) == (True, True) and panel.table.rowCount() == rows + 1
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS):
        panel.to_end_button.click()
    assert _buttons(panel) == (False, False)  # the run is over
    assert panel.table.rowCount() > rows + 1


def test_cutoff_lab_collects_the_summary_after_the_last_step(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.new_tokens.setValue(2)
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        panel.run_button.click()
    assert not panel.run_is_over()
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS):  # no Run to end needed
        panel.step_button.click()
    assert len(panel.lab_view.steps) == 2 and panel.run_is_over()
    assert _buttons(panel) == (False, False)
    panel.shutdown()
