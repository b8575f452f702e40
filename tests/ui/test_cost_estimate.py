"""The cost question before a long run: its estimate, what Cancel leaves, and its keys.

The model's time is made deterministic: every forward call advances a fake
clock (the stepper's only clock) by A + B·tokens fed, so the test checks the
estimate's arithmetic against the run's own measured times, never wall time.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from kvstudio.engine.costs import RunCost, StepTimes, generation_cost
from kvstudio.engine.generate import Stepper
from kvstudio.ui.panels.cost_dialog import cost_box, cost_message
from tests.ui.waits import HANG_GUARD_MS, model_thread_caught_up

pytestmark = pytest.mark.usefixtures("qapp")
A, B = 0.5, 0.01  # seconds per forward call, seconds per token fed (a slow, deterministic model)
N = 24  # the tiny model writes eos at step 29 with this prompt and seed


def _fake_time(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each forward call takes A + B·tokens on the stepper's clock (rows × tokens fed).

    The load's own timed forward (a real, fast one) is dropped: only the fake model's
    steps price the run here.
    """
    controller = window.controller
    qtbot_wait_for_calibration(qtbot, window)
    controller.step_times.clear()
    clock = [0.0]
    backend = window.controller.model.backend
    forward = backend.forward_last

    def timed_forward(tokens, cache, attention_window):  # type: ignore[no-untyped-def]
        clock[0] += A + B * int(tokens.shape[0]) * int(tokens.shape[1])
        return forward(tokens, cache, attention_window)

    monkeypatch.setattr(backend, "forward_last", timed_forward)
    monkeypatch.setattr(Stepper, "_clock", lambda self: clock[0])


def qtbot_wait_for_calibration(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """The load's timed recompute-sized forward arrives just after the model (its own
    signal from the model thread: waited for, not counted in event-loop passes)."""
    qtbot.waitUntil(lambda: window.controller.step_times.fit("recompute") is not None,
                    timeout=HANG_GUARD_MS)


def _run_to_end(qtbot, window, mode: str) -> None:  # type: ignore[no-untyped-def]
    controller = window.controller
    window.controls.to_end_button.click()
    qtbot.waitUntil(lambda: controller.store.current is not None
                    and controller.store.current.mode == mode
                    and controller.store.current.finished, timeout=HANG_GUARD_MS)


def test_the_recompute_estimate_is_within_2x_of_the_measured_run(  # type: ignore[no-untyped-def]
        qtbot, make_window, monkeypatch) -> None:
    window = make_window(max_new_tokens=N)
    _fake_time(qtbot, window, monkeypatch)
    asked: list[RunCost] = []
    window.controller.confirm_cost = lambda cost: asked.append(cost) or True
    window.generation.set_prompt("KV 캐시는 무엇인가요? 한 번에 한 토큰씩 만들어 냅니다.")
    _run_to_end(qtbot, window, "cached")
    cached = window.controller.store.current
    assert [c.mode for c in asked] == []  # the cached run is cheap: no question

    window.controls.set_mode("recompute")  # a new run of the same prompt: asks first
    assert [c.mode for c in asked] == ["recompute"]
    estimate = asked[0]
    _run_to_end(qtbot, window, "recompute")
    recompute = window.controller.store.current
    assert len(recompute.records) == N  # the estimate is for the whole budget: it all ran
    actual = sum(r.elapsed_s for r in recompute.records)
    assert estimate.seconds is not None
    assert 0.5 <= estimate.seconds / actual <= 2.0
    assert estimate.fit is not None and estimate.fit.a == pytest.approx(A, rel=1e-3)
    # The old rule, the cached run's seconds per token fed times recompute's tokens fed,
    # was many times off: a cached step is almost all fixed cost.
    per_token_fed = sum(r.elapsed_s for r in cached.records) / cached.tokens_fed_total
    assert per_token_fed * recompute.tokens_fed_total / actual > 4
    text = cost_message(estimate)
    assert f"{estimate.tokens_fed:,}" in text and f"{1000 * A:,.2f} ms" in text


def test_the_load_times_one_recompute_sized_forward(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=N)
    qtbot_wait_for_calibration(qtbot, window)
    fit = window.controller.step_times.fit("recompute")  # before any run: a rate to price with
    assert fit is not None and fit.steps == 1 and fit.b > 0


def test_the_fit_uses_the_mode_it_warns_about() -> None:
    times = StepTimes()
    p = 100
    times.add("cached", p, A + B * p)  # the prefill
    for _ in range(20):
        times.add("cached", 1, 2 * A + B)  # cached decode steps: a different fixed cost
    for fed in range(p, p + 20):
        times.add("recompute", fed, A + B * fed)
    fit = times.fit("recompute")
    assert fit is not None and fit.mode == "recompute"
    assert (fit.a, fit.b) == (pytest.approx(A), pytest.approx(B))
    cost = generation_cost("recompute", p, 20, fit)
    assert cost.seconds == pytest.approx(sum(A + B * (p + k) for k in range(20)))
    assert StepTimes().fit("cached") is None  # nothing measured: no seconds, no guess


def test_cancel_leaves_the_buttons_on_the_run_on_screen(  # type: ignore[no-untyped-def]
        qtbot, make_window, monkeypatch) -> None:
    window = make_window(max_new_tokens=N)
    _fake_time(qtbot, window, monkeypatch)
    controller = window.controller
    _run_to_end(qtbot, window, "cached")
    asked: list[RunCost] = []
    controller.confirm_cost = lambda cost: asked.append(cost) and False
    window.controls.set_mode("recompute")
    assert len(asked) == 1 and asked[0].mode == "recompute"
    model_thread_caught_up(qtbot, window)  # a run started anyway would be on screen now
    controller.pacer.flush()
    assert controller.store.current.mode == "cached"
    assert window.controls.mode() == "cached"  # the button is back on the run's mode
    assert "Cached" in window.status.field_text("mode")
    controller.restart()  # Home: the run on screen again, in its own mode
    qtbot.waitUntil(lambda: controller.store.current is not None
                    and not controller.store.current.records, timeout=HANG_GUARD_MS)
    assert window.controls.mode() == "cached" and controller.store.current.mode == "cached"
    assert len(asked) == 1


def test_space_does_not_dismiss_the_question(qtbot) -> None:  # type: ignore[no-untyped-def]
    box, run = cost_box(None, generation_cost("recompute", 183, 64))
    qtbot.addWidget(box)
    box.show()
    box.activateWindow()
    qtbot.waitUntil(box.isVisible, timeout=HANG_GUARD_MS)
    cancel = box.button(QMessageBox.StandardButton.Cancel)
    assert box.focusWidget() is cancel and box.defaultButton() is cancel
    for target in (box, cancel, run):
        QTest.keyClick(target, Qt.Key.Key_Space)
    assert box.isVisible() and box.clickedButton() is None
    QTest.keyClick(box, Qt.Key.Key_Return)  # Enter chooses Cancel, never Run
    assert box.clickedButton() is cancel
