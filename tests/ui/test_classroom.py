"""The classroom extras in the real window: labs tab, export on every plot, lecture mode,
save → reopen → replay to the same charts, and the slide pack of the live run and labs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThread
from PySide6.QtWidgets import QApplication

from kvstudio.core.runfile import load_run_file, load_runs
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.slides.chart_data import read_csv_tables
from kvstudio.ui.slides.export import canvas_named
from kvstudio.ui.slides.export_menu import ExportButton

pytestmark = pytest.mark.usefixtures("qapp")
TIMEOUT = 20_000


def _window(make_window, tmp_path: Path):  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=6)
    extras = getattr(window, "classroom", None)
    if not isinstance(extras, ClassroomExtras):
        extras = install(window)  # until the window installs it itself
    extras.exporter.folder = tmp_path
    extras.exporter.canvas = canvas_named("16:9 small")  # the same code path, faster
    extras.exporter.folder_chooser = lambda *a: str(tmp_path / "pack")
    return window, extras


def _run_to_end(qtbot, window, steps: int) -> None:  # type: ignore[no-untyped-def]
    window.controller.run_to_end()
    qtbot.waitUntil(
        lambda: (
            window.controller.store.current is not None
            and len(window.controller.store.current.records) == steps
        ),
        timeout=TIMEOUT,
    )
    window.controller.pacer.flush()


def test_install_adds_labs_export_and_menu(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "Labs" in titles
    assert extras.labs.cache.model is window.controller.model  # the loaded model reached the labs
    for plot in window.plots().values():
        assert plot.findChildren(ExportButton)
    menus = [a.text() for a in window.menuBar().actions()]
    assert "Lec&ture" in menus


def test_lecture_mode_enlarges_and_restores(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    size_before = app.font().pointSizeF()
    axis = window.tokens_plot.plot_item.getAxis("left")
    font_before = axis.style["tickFont"]
    pen_before = window.time_plot.plot_item.listDataItems()[0].opts["pen"]
    extras.lecture_action.trigger()
    assert extras.lecture.enabled
    assert app.font().pointSizeF() == pytest.approx(size_before * 1.6)
    assert axis.style["tickFont"].pixelSize() >= 18
    window.controller.step()  # the run is over: nothing breaks while big
    extras.lecture_action.trigger()
    assert not extras.lecture.enabled
    assert app.font().pointSizeF() == pytest.approx(size_before)
    assert axis.style["tickFont"] == font_before
    assert window.time_plot.plot_item.listDataItems()[0].opts["pen"] == pen_before


def test_lecture_keys_drive_the_run(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    extras.lecture.set_enabled(True)
    window.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_PageDown)  # a presenter's clicker
    qtbot.waitUntil(
        lambda: (
            window.controller.store.current is not None
            and len(window.controller.store.current.records) == 1
        ),
        timeout=TIMEOUT,
    )
    qtbot.keyClick(window, Qt.Key.Key_P)
    qtbot.waitUntil(lambda: window.controller.store.current.finished, timeout=TIMEOUT)
    extras.lecture.set_enabled(False)
    qtbot.keyClick(window, Qt.Key.Key_Home)  # lecture keys are gone: nothing resets
    assert len(window.controller.store.current.records) == 6


def test_saved_run_replays_to_the_same_charts(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute", timeout=TIMEOUT)
    _run_to_end(qtbot, window, 6)
    bars = {m: window.tokens_plot.bar_heights(m) for m in ("cached", "recompute")}
    times = window.time_plot.per_step_ms("recompute")
    path = tmp_path / "lecture.kvrun.json"
    assert extras.save_run(str(path))
    assert [r.mode for r in load_runs(path)] == ["cached", "recompute"]

    window.controller.reset()
    window.controller.pacer.flush()
    assert window.tokens_plot.bar_heights("cached") == []
    assert extras.open_run(str(path))
    assert extras.replay.active and extras.replay.position() == (0, 6)
    extras.step()  # routed to the replay, not the model
    window.controller.pacer.flush()
    assert window.tokens_plot.bar_heights("cached") == bars["cached"][:1]
    extras.replay.run_to_end()
    window.controller.pacer.flush()
    assert window.tokens_plot.bar_heights("cached") == bars["cached"]
    assert window.tokens_plot.bar_heights("recompute") == bars["recompute"]
    assert window.time_plot.per_step_ms("recompute") == pytest.approx(times)
    assert not extras.replay.active

    bad = tmp_path / "broken.kvrun.json"
    bad.write_text(path.read_text()[:100])
    assert not extras.open_run(str(bad))
    assert "cut short" in extras.last_warning


def _sample(qtbot, window, samples: int = 6, temperatures: str = "0.5, 1.5") -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=TIMEOUT):
        window.controller.sample(samples, temperatures, 3)


def test_saved_run_with_samples_replays_its_histogram(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    _sample(qtbot, window)
    histogram = window.answers.plot
    totals, counts = histogram.bar_totals(), histogram.counts
    assert counts is not None and sum(totals) == 12
    lines = window.answers.answer_lines()
    path = tmp_path / "with-samples.kvrun.json"
    assert extras.save_run(str(path))
    saved = load_run_file(path)
    assert len(saved.samples) == 1 and saved.samples[0].temperatures == (0.5, 1.5)
    assert saved.samples[0].counts == counts.counts

    histogram.clear_counts()
    window.answers.show_counts(None)  # as after a cancel: nothing drawn
    assert histogram.bar_totals() == []
    assert extras.open_run(str(path))
    assert histogram.bar_totals() == totals  # the histogram is back, from the file
    assert window.answers.answer_lines() == lines
    assert histogram.counts is not None and histogram.counts.prompt == counts.prompt


def test_slide_pack_has_every_live_chart_and_lab(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    _sample(qtbot, window)
    lab = extras.labs.cache_kinds
    lab.prompt_tokens.setValue(8)
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.result_ready, timeout=TIMEOUT):
        lab.run()
    assert extras.export_slide_pack()
    names = {p.name for p in (tmp_path / "pack").iterdir()}
    for key in window.plots():
        assert {f"{key}.png", f"{key}.svg", f"{key}.pdf", f"{key}.csv"} <= names
    assert {"lab-cache-kinds.png", "all-charts.pdf", "numbers.json", "cached-steps.csv",
            "sample-answers.csv"} <= names
    answers = read_csv_tables((tmp_path / "pack" / "sample-answers.csv").read_bytes())[0]
    assert answers[0] == ["rank", "answer", "count at T = 0.5 (of 6)", "count at T = 1.5 (of 6)"]
    assert sum(int(r[2]) + int(r[3]) for r in answers[1:]) == 12
    histogram, per_t = read_csv_tables((tmp_path / "pack" / "answers.csv").read_bytes())
    assert histogram[0] == ["answer rank (1 = most common)", "answer (text)",
                            "T = 0.5: count (samples)", "T = 1.5: count (samples)"]
    assert sum(int(r[2]) + int(r[3]) for r in histogram[1:]) == 12
    assert per_t[0] == ["temperature", "distinct answers", "samples"]
    assert [r[0] for r in per_t[1:]] == ["0.5", "1.5"]  # temperatures as x, not 0..n
    document = json.loads((tmp_path / "pack" / "numbers.json").read_text())
    assert document["samples"]["samples_per_temperature"] == 6


def test_closing_mid_lab_stops_the_lab_thread(  # type: ignore[no-untyped-def]
    qtbot, make_window, tmp_path: Path, no_thread_left_running: list[QThread]
) -> None:
    window, extras = _window(make_window, tmp_path)
    lab = extras.labs.temperature
    lab.samples.setValue(64)
    lab.new_tokens.setValue(64)
    assert lab.run()
    qtbot.waitUntil(lambda: lab.progress.maximum() > 0, timeout=TIMEOUT)
    window.close()
    assert not any(t.isRunning() for t in no_thread_left_running)


def test_live_ttft_is_measured_k_times_and_drawn_as_median_and_range(  # type: ignore[no-untyped-def]
    qtbot, make_window, tmp_path: Path
) -> None:
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    assert extras.ttft_repeats == 5  # the default
    extras.ttft_repeats = 3
    with qtbot.waitSignal(extras.ttft_runner.finished, timeout=TIMEOUT) as done:
        assert extras.measure_ttft()
    times = done.args[0]
    assert [len(times.ms[m]) for m in ("cached", "recompute")] == [3, 3]
    plot = window.time_plot
    for mode, x in (("cached", -0.25), ("recompute", 0.25)):
        spread = times.ttft_ms(mode)
        assert spread.median == sorted(times.ms[mode])[1]
        xs, ys = plot._repeat_median[mode].getData()
        assert list(xs) == [x] and list(ys) == [spread.median]
        bars = plot._repeat_bars[mode].opts
        assert bars["top"][0] == pytest.approx(spread.high - spread.median)
        assert bars["bottom"][0] == pytest.approx(spread.median - spread.low)
    assert "median of 3 rounds" in plot.headline()
    repeated = plot.data_tables()[-1]
    assert repeated.x_header == "round" and repeated.column("Cached: TTFT (ms)") == list(
        times.ms["cached"])
