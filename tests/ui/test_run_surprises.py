"""Small surprises of the live run: a finished run stays when a sampling setting
changes, and re-choosing the loaded model keeps the runs on screen."""

from __future__ import annotations

import pytest

from tests.ui.waits import HANG_GUARD_MS, model_thread_caught_up

pytestmark = pytest.mark.usefixtures("qapp")


def _run_to_end(qtbot, window, mode: str) -> None:  # type: ignore[no-untyped-def]
    controller = window.controller
    window.controls.set_mode(mode)
    window.controls.to_end_button.click()
    qtbot.waitUntil(lambda: controller.store.current is not None
                    and controller.store.current.mode == mode
                    and controller.store.current.finished, timeout=HANG_GUARD_MS)


def test_a_setting_change_keeps_a_finished_run(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=6)
    controller = window.controller
    _run_to_end(qtbot, window, "recompute")
    finished = controller.store.current
    steps = len(finished.records)
    window.sampling.seed_box.setValue(window.sampling.seed_box.value() + 1)  # e.g. for Sample ×N
    model_thread_caught_up(qtbot, window)
    assert controller.store.current is finished and len(finished.records) == steps
    assert controller.store.current.finished
    window.controls.step_button.click()  # the next step starts a run with the new settings
    qtbot.waitUntil(lambda: controller.store.current is not finished, timeout=HANG_GUARD_MS)
    assert controller.store.current.info.request.settings.sampling.seed == \
        window.sampling.seed_box.value()


def test_a_setting_change_restarts_a_run_still_going(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=6)
    controller = window.controller
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: controller.store.current is not None
                    and len(controller.store.current.records) == 1, timeout=HANG_GUARD_MS)
    first = controller.store.current
    window.sampling.seed_box.setValue(window.sampling.seed_box.value() + 1)
    qtbot.waitUntil(lambda: controller.store.current is not first, timeout=HANG_GUARD_MS)


def test_choosing_the_loaded_model_again_keeps_the_runs(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=4)
    controller = window.controller
    _run_to_end(qtbot, window, "cached")
    trace = controller.store.current
    box = window.model_panel.model_box
    chosen: list[object] = []
    window.model_panel.model_chosen.connect(chosen.append)
    box.activated.emit(box.currentIndex())  # the user picks the entry already loaded
    model_thread_caught_up(qtbot, window)
    assert chosen == [] and controller.store.current is trace
    other = 1 - box.currentIndex()
    box.activated.emit(other)  # another model still loads
    assert len(chosen) == 1
