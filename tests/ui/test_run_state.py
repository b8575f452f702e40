"""One run state in the real window: replays and live runs do not mix, keys work wherever
the focus is (except in text fields), the step history shows every view at an earlier
step, the axes fit the run, and a run that stops at eos says so."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.export import export_chart
from kvstudio.files.runfile import SavedRun, load_runs, save_runs
from kvstudio.ui.plots.extent import planned_steps
from kvstudio.ui.run.state import RunPhase
from kvstudio.ui.slides.numbers import live_tables
from tests.ui.waits import HANG_GUARD_MS, model_thread_caught_up

pytestmark = pytest.mark.usefixtures("qapp")
STEPS = 6


def _records(window) -> int:  # type: ignore[no-untyped-def]
    trace = window.controller.store.current
    return 0 if trace is None else len(trace.records)


def _run_to_end(qtbot, window, steps: int = STEPS) -> None:  # type: ignore[no-untyped-def]
    window.controls.to_end_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and window.controller.store.current.finished, timeout=HANG_GUARD_MS)
    assert _records(window) == steps
    window.controller.pacer.flush()


def _focus(qtbot, widget: QWidget) -> None:  # type: ignore[no-untyped-def]
    window = widget.window()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=HANG_GUARD_MS)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=HANG_GUARD_MS)


def _press(qtbot, key: Qt.Key) -> None:  # type: ignore[no-untyped-def]
    """A key press where the user's focus is (as a keyboard delivers it)."""
    target = QApplication.focusWidget()
    assert target is not None
    qtbot.keyClick(target, key)


def _saved_replay(qtbot, make_window, tmp_path: Path):  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=STEPS)
    _run_to_end(qtbot, window)
    bars = window.tokens_plot.bar_heights("cached")
    path = tmp_path / "lesson.kvrun.json"
    assert window.classroom.save_run(str(path))
    window.controller.reset()
    assert window.classroom.open_run(str(path))
    window.controller.pacer.flush()
    return window, bars


def test_in_a_replay_step_advances_the_replay_and_home_does_not_load_another_run(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    window, bars = _saved_replay(qtbot, make_window, tmp_path)
    controller, replay = window.controller, window.controller.replay
    assert controller.state.phase is RunPhase.REPLAYING
    assert "Replay" in window.run_bar.phase_text() and window.run_bar.live_button.isVisible()
    replayed_ids = {t.info.run_id for t in controller.store.traces()}

    window.controls.step_button.click()  # the Step button, not a replay menu entry
    _focus(qtbot, window.generation.chips)
    _press(qtbot, Qt.Key.Key_Right)  # and the → key
    model_thread_caught_up(qtbot, window)  # a live step would have arrived by now
    controller.pacer.flush()
    assert replay.position() == (2, STEPS)
    assert {t.info.run_id for t in controller.store.traces()} == replayed_ids
    assert window.tokens_plot.bar_heights("cached") == bars[:2]
    assert window.tokens_plot.x_range()[1] == pytest.approx(STEPS - 0.4)  # the saved length

    _press(qtbot, Qt.Key.Key_Home)  # the clicker's "start over": the replay, from step 0
    model_thread_caught_up(qtbot, window)
    assert replay.position() == (0, STEPS)
    assert controller.state.replaying
    assert controller.store.current is not None and controller.store.current.info.run_id < 0
    _press(qtbot, Qt.Key.Key_PageDown)
    assert replay.position() == (1, STEPS)


def test_back_to_live_leaves_the_replay_and_home_restarts_the_live_run(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    window, _ = _saved_replay(qtbot, make_window, tmp_path)
    controller = window.controller
    window.run_bar.live_button.click()  # the visible "Back to live"
    assert controller.state.phase is RunPhase.IDLE
    assert not window.run_bar.live_button.isVisible()
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: _records(window) == 1, timeout=HANG_GUARD_MS)
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: _records(window) == 2, timeout=HANG_GUARD_MS)
    live_id = controller.store.current.info.run_id
    assert live_id > 0 and controller.state.phase is RunPhase.PAUSED

    _focus(qtbot, window.generation.chips)
    _press(qtbot, Qt.Key.Key_Home)  # restarts what is on screen: the live run, not the replay
    qtbot.waitUntil(lambda: controller.store.current.info.run_id > live_id, timeout=HANG_GUARD_MS)
    assert controller.store.current.info.run_id > 0 and _records(window) == 0
    assert not controller.state.replaying


def test_after_sample_n_the_right_key_steps(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.answers.samples_box.setValue(3)
    window.answers.length_box.setValue(2)
    _focus(qtbot, window.answers.go_button)
    finished: list[object] = []
    window.controller.sampling_finished.connect(finished.append)
    window.answers.go_button.click()
    qtbot.waitUntil(lambda: bool(finished), timeout=HANG_GUARD_MS)
    _press(qtbot, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: _records(window) == 1, timeout=HANG_GUARD_MS)
    _press(qtbot, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: _records(window) == 2, timeout=HANG_GUARD_MS)


def test_run_keys_stay_with_a_text_field(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    prompt = window.generation.prompt_edit
    _focus(qtbot, prompt)
    for key in (Qt.Key.Key_Right, Qt.Key.Key_PageDown, Qt.Key.Key_Home, Qt.Key.Key_Left):
        _press(qtbot, key)
    model_thread_caught_up(qtbot, window)
    assert window.controller.store.current is None  # nothing stepped while typing
    _focus(qtbot, window.controls.reset_button)  # a button has the focus: the keys step
    _press(qtbot, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: _records(window) == 1, timeout=HANG_GUARD_MS)


def test_step_history_shows_every_view_as_it_was(qtbot, make_window,  # type: ignore[no-untyped-def]
                                                 tmp_path: Path) -> None:
    window = make_window(max_new_tokens=STEPS)
    _run_to_end(qtbot, window)
    controller = window.controller
    trace = controller.store.current
    p = trace.info.prompt_len
    all_bars = window.tokens_plot.bar_heights("cached")

    window.run_bar.slider().setValue(2)  # drag the scrubber to step 2
    assert controller.state.viewing == 2
    assert window.tokens_plot.bar_heights("cached") == all_bars[:3]
    assert window.time_plot.per_step_ms("cached") == pytest.approx(
        [r.elapsed_s * 1000 for r in trace.records[:3]])
    assert window.cache_plot.drawn_layer_bytes() == [
        (float(k), float(v)) for k, v in trace.records[2].cache_layer_bytes]
    assert len(window.generation.chip_texts()) == p + 3
    assert window.status.field_text("step").startswith("Step 3/")
    assert f"looking back at step 3 of {STEPS}" in window.run_bar.phase_text()  # 1 … N
    traces = window.controller.shown().traces()
    assert len(live_tables(traces)["cached steps"]) == 3  # exports follow the selected step
    csv = export_chart(window.tokens_plot, tmp_path / "fed.csv", "csv")
    (table,) = read_csv_tables(csv.read_bytes())
    assert [row[0] for row in table[1:]] == ["0", "1", "2"]  # steps 0-2 only
    assert window.tokens_plot.x_range()[1] == pytest.approx(STEPS - 0.4)  # axes stay put

    _focus(qtbot, window.generation.chips)
    _press(qtbot, Qt.Key.Key_Left)
    assert controller.state.viewing == 1
    assert window.tokens_plot.bar_heights("cached") == all_bars[:2]
    _press(qtbot, Qt.Key.Key_Right)  # forward through history, not a new token
    assert controller.state.viewing == 2 and _records(window) == STEPS
    _press(qtbot, Qt.Key.Key_End)
    assert controller.state.viewing is None
    assert window.tokens_plot.bar_heights("cached") == all_bars
    assert len(window.generation.chip_texts()) == p + STEPS


def test_axes_fit_the_run_and_formulas_stop_where_it_does(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=64)
    for n in (1, 2, 3):
        window.controls.step_button.click()
        qtbot.waitUntil(lambda n=n: _records(window) == n, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    _low, high = window.tokens_plot.x_range()
    assert high == pytest.approx(planned_steps(3, 64, False) - 0.4)
    assert 3 < high < 16  # room for the next steps, not the 64-token budget
    assert window.tokens_plot.formula_steps("cached") == [0.0, 1.0, 2.0]
    assert window.time_plot.plot_item.vb.viewRange()[0][1] == pytest.approx(high)


def _eos_run(window, tmp_path: Path, steps: int = 4) -> SavedRun:  # type: ignore[no-untyped-def]
    """A saved run of the window's model whose last step chose <|im_end|> before its budget."""
    path = tmp_path / "live.kvrun.json"
    assert window.classroom.save_run(str(path))
    run = load_runs(path)[0]
    eos = window.controller.model.tokenizer.eos_id
    last = replace(run.records[steps - 1], token_ids=(eos,), token_texts=("",), finished=(True,))
    return replace(run, records=(*run.records[: steps - 1], last), max_new_tokens=16)


def test_the_eos_chip_is_labelled_as_the_end_of_the_answer(qtbot, make_window,  # type: ignore[no-untyped-def]
                                                           tmp_path: Path) -> None:
    window = make_window(max_new_tokens=STEPS)
    _run_to_end(qtbot, window)
    run = _eos_run(window, tmp_path)
    live_info = window.controller.store.current.info

    # Live: the worker reports a run whose fourth step is eos.
    worker = window.controller.host.worker
    info = replace(live_info, run_id=10_000)
    worker.run_started.emit(info)
    for record in run.records:
        worker.step_ready.emit(info.run_id, record)
    worker.run_finished.emit(info.run_id)
    window.controller.pacer.flush()
    _assert_eos_shown(window, step=3)

    # Replay of a saved run: the file does not name eos; the window still knows it.
    path = tmp_path / "eos.kvrun.json"
    save_runs(path, [run])
    assert window.classroom.open_run(str(path))
    window.controller.run_to_end()
    window.controller.pacer.flush()
    _assert_eos_shown(window, step=3)


def _assert_eos_shown(window, step: int) -> None:  # type: ignore[no-untyped-def]
    chips = window.generation.chips
    assert chips.texts()[-1] == "<|im_end|>"
    assert chips.kinds()[-1] == "eos"
    tip = chips.tooltips()[-1]
    assert "end of the answer" in tip and "Part of a character" not in tip
    assert f"answer finished at step {step + 1} of " in window.run_bar.phase_text()  # 1 … N
    assert window.run_bar.phase_text().endswith(": <|im_end|>")
    assert window.controller.state.phase in (RunPhase.FINISHED, RunPhase.REPLAYING)
    # The axes end with the answer, not at the budget of 16.
    assert window.tokens_plot.x_range()[1] == pytest.approx(step + 1 - 0.4)
    prompt_kinds = chips.kinds()[: window.controller.store.current.info.prompt_len]
    assert "special" in prompt_kinds  # <|im_start|> of the chat template


def test_the_axes_span_grows_in_doublings_and_ends_with_the_run() -> None:
    assert [planned_steps(n, 64, False) for n in (0, 1, 6, 7, 12, 14, 40)] == [
        8, 8, 8, 16, 16, 32, 64]
    assert planned_steps(3, 4, False) == 4  # never past the budget
    assert planned_steps(10, 64, True) == 10  # a finished run fills its axes


def test_the_top_p_lab_shows_an_earlier_step_when_its_row_is_selected(  # type: ignore[no-untyped-def]
        qtbot, make_window) -> None:
    window = make_window()
    lab = window.classroom.labs.panels["cutoff"]
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.runner.paused, timeout=HANG_GUARD_MS):
        assert lab.run()
    with qtbot.waitSignal(lab.result_ready, timeout=HANG_GUARD_MS):
        assert lab.run_to_end()
    view = lab.lab_view
    qtbot.waitUntil(lambda: len(view.steps) == 3, timeout=HANG_GUARD_MS)
    lab.table.setCurrentCell(0, 0)  # a click on the first row
    assert list(view._bars.opts["height"]) == _drawn_heights(view.steps[0])
    assert lab.numbers()["shown_step"] == 0
    assert lab.status.text().startswith("Step 0:")
    lab.table.setCurrentCell(2, 0)
    assert list(view._bars.opts["height"]) == _drawn_heights(view.steps[2])
    assert _drawn_heights(view.steps[0]) != _drawn_heights(view.steps[2])


def _drawn_heights(step) -> list[float]:  # type: ignore[no-untyped-def]
    """Bars of one step: kept tokens after top-k renormalises, cut ones at their old height;
    a chosen token past them, one more bar."""
    k, after = step.top_k_cut, step.after_top_k()
    bars = [float(after[i] if k is None or i < k else p)
            for i, p in enumerate(step.probabilities)]
    if step.chosen_outside():
        bars.append(step.chosen_probability_before / step.top_k_mass)
    return bars
