"""The model's steps are timed apart from the drawing, and the counters agree.

A redraw that holds the interpreter (a busy loop, as painting pyqtgraph items
does) must never run inside a timed step under *Run to end*; the reported
ms/token comes from the records' `elapsed_s` alone. The gate itself is tested
with threads and events, never with a wall-clock bound.

Forced steps are counted from the run's start: the load's warm-up steps also
go through the gate, with its default wait, while the window is still being
built and polled, and on a busy machine some of them start forced. The run's
test waits for *Run to end*'s own "finished" signal instead of polling the
store (a test that wakes the event loop every 10 ms keeps the GUI thread from
resting as long as the gate asks, `SETTLE_S`, on a busy machine), and each
step may wait as long as the GUI thread needs (`HANG_GUARD_S`, only a hang
guard): "no step was forced" says that every step found the GUI thread at
rest, however slow the machine.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from kvstudio.engine.generate import Stepper
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, prepare_application
from kvstudio.ui.run.engine_adapter import ModelChoice, with_choice
from kvstudio.ui.run.step_gate import StepGate
from tests.ui.waits import HANG_GUARD_MS, HANG_GUARD_S

pytestmark = pytest.mark.usefixtures("qapp")
BUSY_REDRAW_S = 0.02  # each slowed redraw holds the interpreter this long
MODEL_WAIT_S = 0.005  # and each step waits this long inside its timed part (a bigger model)


def _hold_interpreter(seconds: float) -> None:
    """Busy Python (keeps the GIL, unlike sleep): what a slow redraw does to the model."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_slow_redraw_never_runs_inside_a_timed_step(qtbot, make_window,  # type: ignore[no-untyped-def]
                                                       monkeypatch) -> None:
    window = make_window(max_new_tokens=24)
    controller = window.controller
    gate = controller.host.gate
    # The load's warm-up steps went through the gate before the model arrived, each waiting
    # at most the default while make_window polled: they are not this run's steps.
    forced_at_load = gate.forced
    gate.max_wait_s = HANG_GUARD_S  # on a slow machine too, no step may start into a redraw
    draws: list[tuple[float, float]] = []
    steps: list[tuple[float, float]] = []
    original_refresh = window.time_plot.refresh

    def slow_refresh(store):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        original_refresh(store)
        _hold_interpreter(BUSY_REDRAW_S)
        draws.append((started, time.perf_counter()))

    window.time_plot.refresh = slow_refresh  # the pacer looks the method up at each call
    original_step = Stepper.step

    def timed_step(self):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        record = original_step(self)
        steps.append((started, time.perf_counter()))
        return record

    monkeypatch.setattr(Stepper, "step", timed_step)
    original_sample = Stepper._sample

    def slower_sample(self, logits):  # type: ignore[no-untyped-def]
        time.sleep(MODEL_WAIT_S)  # inside the timed part, lets the GIL go like torch's kernels
        return original_sample(self, logits)

    monkeypatch.setattr(Stepper, "_sample", slower_sample)
    # The finish itself, not a poll: the event loop sleeps between events, as in the app.
    with qtbot.waitSignal(controller.run_finished, timeout=HANG_GUARD_MS):
        window.controls.to_end_button.click()
    trace = controller.store.current
    assert trace is not None and trace.finished
    assert len(trace.records) == 24 and len(steps) == 24
    during_run = [d for d in draws if d[0] < steps[-1][1]]
    assert len(during_run) >= 2  # the window kept drawing while the run went on
    overlaps = [(d, s) for d in draws for s in steps if d[0] < s[1] and s[0] < d[1]]
    assert overlaps == []
    assert gate.forced == forced_at_load  # no step of the run started forced
    # Each record's time is the worker's clock around forward + sampling: inside the step.
    for record, (started, ended) in zip(trace.records, steps, strict=True):
        assert record.elapsed_s <= ended - started
    controller.pacer.flush()
    median_ms = 1000 * statistics.median(r.elapsed_s for r in trace.records[1:])
    assert trace.decode_ms_per_token == pytest.approx(median_ms)
    assert window.status.field_text("ms_token").startswith(f"{median_ms:,.2f} ms/token")
    assert trace.tokens_per_second == pytest.approx(1000 / median_ms)


def test_the_gate_starts_a_step_only_when_the_gui_thread_rests() -> None:
    gate = StepGate(max_wait_s=HANG_GUARD_S, settle_s=0.0)
    gate.gui_awake()  # the GUI thread is handling something
    started, release = threading.Event(), threading.Event()

    def worker() -> None:
        with gate.step():
            started.set()
            release.wait(HANG_GUARD_S)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert not started.wait(0.1)  # never while the GUI thread is busy
        gate.gui_idle()
        assert started.wait(HANG_GUARD_S)
        assert gate.stepping and not gate.gui_may_draw()  # a redraw waits for the step
    finally:
        release.set()
        thread.join(HANG_GUARD_S)
    assert gate.gui_may_draw()  # and claims the turn: the next step waits for it
    assert gate.forced == 0 and gate.steps == 1


def test_a_gui_thread_that_never_rests_slows_steps_but_never_stops_them() -> None:
    gate = StepGate(max_wait_s=0.0)
    gate.gui_awake()
    with gate.step():
        pass
    assert gate.forced == 1


def test_start_up_work_holds_a_step_past_the_usual_wait() -> None:
    """`hold()`: the step waits for `release()`, although its wait for a resting GUI
    thread (`max_wait_s` = 0) would have started it at once, forced."""
    gate = StepGate(max_wait_s=0.0, max_hold_s=HANG_GUARD_S)
    gate.hold()
    order: list[str] = []
    started = threading.Event()

    def worker() -> None:
        with gate.step():
            order.append("step")
            started.set()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert not started.wait(0.1)
        order.append("release")
        gate.release()
        assert started.wait(HANG_GUARD_S)
    finally:
        gate.release_all()
        thread.join(HANG_GUARD_S)
    assert order == ["release", "step"]
    assert gate.held_steps == 1 and not gate.held


def test_a_hold_never_released_slows_one_step_but_never_stops_the_run() -> None:
    gate = StepGate(max_wait_s=0.0, max_hold_s=0.0)
    gate.hold()
    with gate.step():
        pass
    assert not gate.held and gate.held_steps == 1  # dropped: the next step does not wait
    with gate.step():
        pass
    assert gate.held_steps == 1 and gate.steps == 2


def test_a_run_started_as_the_model_loads_steps_after_the_labs_are_built(  # type: ignore[no-untyped-def]
        qtbot, settings_path: Path, tiny_handle: LoadedModel, monkeypatch) -> None:
    """Run to end pressed in the same turn the model arrives (before the Labs tab's build,
    queued just then, has run): its first timed step comes after that build. It used to
    start 250 ms into it (the gate's `max_wait_s`), and the first cached TTFT was timed
    with a second of the GUI thread's Python in it: 10x the recompute one."""
    import kvstudio.ui.labs  # the labs' 17 chart modules: only this test needs them

    order: list[str] = []
    loaded = threading.Event()

    class RecordedLabs(kvstudio.ui.labs.LabsPanel):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            order.append("labs built")

    monkeypatch.setattr(kvstudio.ui.labs, "LabsPanel", RecordedLabs)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    prepare_application(app)
    settings = AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    window = build_window(app, settings, lambda choice: with_choice(tiny_handle, choice),
                          threads=1, language="en")
    qtbot.addWidget(window)
    try:
        controller, gate = window.controller, window.controller.host.gate
        rs = window.sampling.run_settings("cached")
        window.sampling.set_run_settings(replace(rs, max_new_tokens=4))
        timed_step = gate.step

        @contextmanager
        def recorded_step() -> Iterator[None]:
            with timed_step():
                if loaded.is_set():  # not the load's own timed forwards
                    order.append("step")
                yield

        gate.step = recorded_step  # type: ignore[method-assign]

        def run_at_once(_model: object) -> None:  # after the classroom's slot: build queued
            loaded.set()
            window.controls.to_end_button.click()

        controller.model_loaded.connect(run_at_once)
        window.show()
        with qtbot.waitSignal(controller.run_finished, timeout=HANG_GUARD_MS):
            window.start(ModelChoice("embedded-chat"))
        assert order[0] == "labs built" and "step" in order, order
        assert not gate.held
    finally:
        window.close()
        window.languages.apply("en")


def test_status_bar_and_slider_count_the_same_steps(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=5)
    controller = window.controller
    for k in range(1, 6):
        window.controls.step_button.click()
        qtbot.waitUntil(lambda k=k: controller.store.current is not None
                        and len(controller.store.current.records) == k, timeout=HANG_GUARD_MS)
        controller.pacer.flush()
        assert window.status.field_text("step") == f"Step {k}/5"
        assert window.run_bar.step_text() == f"step {k} / 5"
    for index in range(5):  # looking back: both count the steps shown, 1 … N
        controller.view_step(index)
        assert window.status.field_text("step") == f"Step {index + 1}/5"
        assert window.run_bar.step_text() == f"step {index + 1} / 5"
