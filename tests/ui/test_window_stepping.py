"""Stepping drives the engine one token at a time and every view shows the engine's numbers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from kvstudio.engine import formulas
from tests.ui.waits import HANG_GUARD_MS, model_thread_caught_up

pytestmark = pytest.mark.usefixtures("qapp")


def _step_and_wait(qtbot, window, expected: int) -> None:  # type: ignore[no-untyped-def]
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) == expected,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()


def test_one_step_is_one_token_and_updates_every_plot(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    _step_and_wait(qtbot, window, 1)
    trace = window.controller.store.current
    prompt_len = trace.info.prompt_len
    record = trace.records[0]
    assert record.step == 0 and record.phase == "prefill"
    assert len(window.generation.chip_texts()) == prompt_len + 1
    assert window.tokens_plot.bar_heights("cached") == [float(prompt_len)]
    assert window.time_plot.per_step_ms("cached") == pytest.approx([record.elapsed_s * 1000])
    assert window.cache_plot.drawn_layer_bytes() == [
        (float(k), float(v)) for k, v in record.cache_layer_bytes
    ]
    assert record.cache_total_bytes == trace.info.formula_cache_bytes(record.cache_length)
    assert "1/16" in window.status.field_text("step")

    qtbot.keyClick(window, Qt.Key.Key_Right)  # the → shortcut steps too
    qtbot.waitUntil(lambda: len(trace.records) == 2, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert len(window.generation.chip_texts()) == prompt_len + 2
    assert window.tokens_plot.bar_heights("cached") == [float(prompt_len), 1.0]
    assert window.tokens_plot.cumulative_values("cached")[-1] == formulas.tokens_fed_cached(
        prompt_len, 2)
    assert window.status.field_text("fed").endswith(str(prompt_len + 1))


def test_toggle_switches_tokens_fed_from_constant_to_growing(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    for n in range(1, 5):
        _step_and_wait(qtbot, window, n)
    cached_trace = window.controller.store.trace("cached")
    p = cached_trace.info.prompt_len
    assert window.tokens_plot.bar_heights("cached") == [p, 1, 1, 1]

    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    for n in range(1, 5):
        _step_and_wait(qtbot, window, n)
    assert window.tokens_plot.bar_heights("recompute") == [p, p + 1, p + 2, p + 3]
    assert window.tokens_plot.cumulative_values("recompute")[-1] == (
        formulas.tokens_fed_recompute(p, 4))
    # The cached run stays drawn next to it for comparison.
    assert window.tokens_plot.bar_heights("cached") == [p, 1, 1, 1]
    # Recompute keeps no cache: the cache plot keeps showing the cached run, and says so.
    assert window.cache_plot.summary.replace("\u00a0", " ").startswith(
        "(cached run; recompute keeps none)")


def test_changing_a_setting_mid_run_starts_a_new_run(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    _step_and_wait(qtbot, window, 1)
    _step_and_wait(qtbot, window, 2)
    first_id = window.controller.store.current.info.run_id
    window.sampling.seed_box.setValue(7)
    qtbot.waitUntil(lambda: window.controller.store.current.info.run_id != first_id,
                    timeout=HANG_GUARD_MS)
    assert window.controller.store.current.records == []
    assert window.controller.store.current.info.request.settings.sampling.seed == 7


def test_play_and_pause(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=200)
    window.controls.set_speed(4)  # 60 ms per step: slow enough to pause mid-run
    window.controls.play_button.click()
    qtbot.waitUntil(lambda: window.controller.playing, timeout=HANG_GUARD_MS)
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) >= 3, timeout=HANG_GUARD_MS)
    window.controls.play_button.click()
    qtbot.waitUntil(lambda: not window.controller.playing, timeout=HANG_GUARD_MS)
    assert not window.controls.is_playing()
    count = len(window.controller.store.current.records)
    # Past a play tick's due time on the model thread: a tick still running would have
    # stepped (and its record arrived) before this returns, however slow the machine.
    model_thread_caught_up(qtbot, window, after_ms=300)
    assert len(window.controller.store.current.records) == count
    assert count < 200


def test_run_to_end_finishes_the_budget(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=12)
    with qtbot.waitSignal(window.controller.run_finished, timeout=HANG_GUARD_MS):
        window.controls.to_end_button.click()
    trace = window.controller.store.current
    assert trace.finished and 1 <= len(trace.records) <= 12


def test_closing_during_play_exits_cleanly(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=400)
    window.controls.play_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) >= 5, timeout=HANG_GUARD_MS)
    host = window.controller.host
    window.close()
    assert not host.is_running()
