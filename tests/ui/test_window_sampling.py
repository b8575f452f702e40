"""Repeated sampling fills the histogram in the worker, and can be cancelled."""

from __future__ import annotations

import pytest

from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_sample_n_fills_the_histogram(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.answers.samples_box.setValue(6)
    window.answers.length_box.setValue(4)
    window.answers.temperatures_edit.setText("0.5, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS) as blocker:
        window.answers.go_button.click()
    counts = blocker.args[0]
    assert counts is not None and counts.temperatures == (0.5, 1.5)
    assert sum(n for row in counts.counts for _, n in row) == 12
    assert sum(window.answers.plot.bar_totals()) == 12
    assert window.answers.answer_lines(), "the side list shows every distinct answer"


def test_sampling_can_be_cancelled(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.answers.length_box.setValue(400)
    window.answers.samples_box.setValue(64)
    window.answers.temperatures_edit.setText("0.7, 1.0, 1.3")
    with qtbot.waitSignal(window.controller.sampling_progress, timeout=HANG_GUARD_MS):
        window.answers.go_button.click()
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS) as blocker:
        window.answers.cancel_button.click()
    assert blocker.args[0] is None
    assert window.answers.go_button.isEnabled()


def test_bad_temperature_list_is_a_message_not_a_crash(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.answers.temperatures_edit.setText("hot, cold")
    window.answers.go_button.click()
    assert "temperatures" in window.last_problem
    assert window.answers.go_button.isEnabled()
