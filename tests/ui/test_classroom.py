"""The classroom extras in the real window: labs tab, export on every plot, presenter view,
save → reopen → replay to the same charts, and the slide pack of the live run and labs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThread
from PySide6.QtGui import QAction, QFont, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.files.runfile import load_run_file, load_runs
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.slides.export_menu import ExportButton
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


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
            and window.controller.store.current.finished  # its end re-labels the state bar
        ),
        timeout=HANG_GUARD_MS,
    )
    window.controller.pacer.flush()
    QApplication.processEvents()  # what the finish posted (labels, the slider's range)


def test_install_adds_labs_export_and_menu(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "Labs" in titles
    # the loaded model reached the labs
    assert extras.labs.panels["compare"].model is window.controller.model
    for plot in window.plots().values():
        assert plot.findChildren(ExportButton)
    menus = [a.text() for a in window.menuBar().actions()]
    assert "Lec&ture" in menus


def _presenter_action(window) -> QAction:  # type: ignore[no-untyped-def]
    """The Lecture menu's Ctrl+L entry (the presenter view)."""
    for action in window.findChildren(QAction):
        if QKeySequence("Ctrl+L") in action.shortcuts():
            return action
    raise AssertionError("no Ctrl+L action")


def _geometries(window) -> dict[str, tuple[object, ...]]:  # type: ignore[no-untyped-def]
    """Every widget of the window: geometry, visibility and font size, by its path."""
    out: dict[str, tuple[object, ...]] = {}
    for index, widget in enumerate([window, *window.findChildren(QWidget)]):
        if widget.window() is not window:
            continue  # another top-level window (the presenter view itself, dialogs)
        key = f"{index}:{type(widget).__name__}:{widget.objectName()}"
        out[key] = (widget.geometry().getRect(), widget.isVisible(), widget.font().pointSizeF(),
                    widget.font().pixelSize())
    return out


def test_presenter_view_leaves_the_window_exactly_as_it_was(qtbot, make_window,
                                                            tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, _extras = _window(make_window, tmp_path)
    window.resize(1366, 768)
    _run_to_end(qtbot, window, 6)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    QApplication.processEvents()
    before = _geometries(window)
    font, palette = QFont(app.font()), QPalette(app.palette())
    axis_font = window.tokens_plot.plot_item.getAxis("left").style["tickFont"]
    pen = window.time_plot.plot_item.listDataItems()[0].opts["pen"]
    action = _presenter_action(window)
    for _ in range(20):
        action.trigger()
        QApplication.processEvents()
        action.trigger()
        QApplication.processEvents()
    after = _geometries(window)
    changed = {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
    assert not changed
    assert app.font() == font and app.palette() == palette
    assert window.tokens_plot.plot_item.getAxis("left").style["tickFont"] == axis_font
    assert window.time_plot.plot_item.listDataItems()[0].opts["pen"] == pen


def test_the_presenter_opens_on_the_lab_chart_on_screen(
        qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """F5 over a lab opened the presenter on chart 1, the live tokens (#33); it opens on the
    lab's chart when the lab has a result, and on the live charts from the Live tab."""
    from tests.ui.lab_helpers import run_lab

    window, extras = _window(make_window, tmp_path)
    kinds = extras.labs.panels["cache_kinds"]
    kinds.prompt_tokens.setValue(8)
    kinds.new_tokens.setValue(3)
    window.tabs.setCurrentWidget(extras.labs)
    extras.labs.tabs.setCurrentWidget(kinds)
    assert extras.chart_on_screen() is None  # no result yet: nothing of it to show
    run_lab(qtbot, kinds)
    assert extras.chart_on_screen() == "lab cache-kinds"
    action = _presenter_action(window)
    action.trigger()
    assert extras.presenter.current_chart().key == "lab cache-kinds"
    action.trigger()
    window.tabs.setCurrentIndex(0)  # the Live tab: the presenter keeps the chart it had
    assert extras.chart_on_screen() is None
    kinds.shutdown()


def test_presenter_shows_one_chart_with_its_numbers_and_the_clicker_drives(
        qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    presenter = extras.presenter
    _presenter_action(window).trigger()
    qtbot.waitUntil(presenter.isActiveWindow, timeout=HANG_GUARD_MS)
    assert presenter.isFullScreen() and not window.isHidden()
    assert presenter.font().pixelSize() >= 18  # big type, whatever the app font is
    store = window.controller.store
    qtbot.keyClick(presenter, Qt.Key.Key_PageDown)  # a presenter's clicker
    qtbot.waitUntil(lambda: store.current is not None and len(store.current.records) == 1,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert presenter.tokens_plot.bar_heights("cached") == [float(store.current.info.prompt_len)]
    assert presenter.chips_view.isVisible() and presenter.chips_view.chip_texts()
    qtbot.keyClick(presenter, Qt.Key.Key_Down)
    assert presenter.current_chart().key == "step_time"
    qtbot.keyClick(presenter, Qt.Key.Key_Up)
    qtbot.keyClick(presenter, Qt.Key.Key_Up)
    assert presenter.current_chart().key == "answers"  # wraps around
    assert not presenter.chips_view.isVisible()
    qtbot.keyClick(presenter, Qt.Key.Key_3)
    assert presenter.current_chart().key == "cache_bytes"
    qtbot.keyClick(presenter, Qt.Key.Key_P)
    qtbot.waitUntil(lambda: store.current.finished, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert presenter.cache_plot.drawn_layer_bytes() == window.cache_plot.drawn_layer_bytes()
    qtbot.keyClick(presenter, Qt.Key.Key_Escape)
    assert not presenter.isVisible() and not _presenter_action(window).isChecked()
    qtbot.keyClick(presenter, Qt.Key.Key_Down)  # hidden: its keys do nothing any more
    assert presenter.current_chart().key == "cache_bytes"


def test_presenter_numbers_come_from_the_runs(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    _run_to_end(qtbot, window, 6)
    window.answers.samples_box.setValue(5)
    window.answers.length_box.setValue(2)
    window.answers.temperatures_edit.setText("0.1, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        window.answers.go_button.click()
    presenter = extras.presenter
    presenter.set_enabled(True)
    store = window.controller.store
    info = store.trace("cached").info
    p = info.prompt_len
    cached, recompute = p + 5, p * 6 + 6 * 5 // 2  # P+(N−1), P·N+N(N−1)/2 for N = 6
    assert sum(store.trace("recompute").tokens_fed) == recompute
    assert presenter.headline().big == f"{cached:,} vs {recompute:,} tokens fed"
    presenter.show_chart(2)
    per_token = 2 * info.num_layers * info.num_kv_heads * info.head_dim * info.dtype_bytes
    assert presenter.headline().big == (f"{per_token:,} B per token · {per_token * 100:,} B "
                                        "per 100 tokens")
    presenter.show_chart(3)
    counts = window.answers.plot.counts
    assert counts is not None
    assert presenter.headline().big == (f"distinct answers {counts.distinct(0)} / "
                                        f"{counts.distinct(1)}")
    assert presenter.answers_plot.bar_totals() == window.answers.plot.bar_totals()
    # What the screen shows: the same text, spaces that must not break made non-breaking.
    assert presenter.big_label.text().replace("\u00a0", " ") == presenter.headline().big
    presenter.set_enabled(False)


def test_chart_and_presenter_headlines_share_numbers(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each live chart's export headline and the presenter's panel read the same numbers
    (`RunTrace` / `RunStore`): the full texts, with every number taken from the records."""
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    _run_to_end(qtbot, window, 6)
    presenter = extras.presenter
    presenter.set_enabled(True)
    store = window.controller.store
    cached, recompute = store.trace("cached"), store.trace("recompute")
    info, p = cached.info, cached.info.prompt_len
    fed_c, fed_r = sum(cached.tokens_fed), sum(recompute.tokens_fed)
    assert (fed_c, fed_r) == (p + 5, p * 6 + 15)  # the formulas, for N = 6
    assert window.tokens_plot.headline() == (
        f"Cached: {fed_c:,} tokens fed (formula {fed_c:,}) · "
        f"Recompute: {fed_r:,} tokens fed (formula {fed_r:,})\n"
        f"P = {p} prompt tokens, N = 6 steps · cached P+(N−1), recompute P·N+N(N−1)/2")
    assert presenter.headline().lines == [
        f"Cached: P = {p}, N = 6 → P+(N−1) = {fed_c:,}",
        f"Recompute: P = {p}, N = 6 → P·N+N(N−1)/2 = {fed_r:,}",
        f"recompute fed {fed_r / fed_c:.1f}× as many"]
    ms = {t.mode: t.records[0].elapsed_s * 1000 for t in (cached, recompute)}
    # ms/token: the median decode step, with the fastest and slowest of the 5 steps
    per_token = {t.mode: 1000 * statistics.median(r.elapsed_s for r in t.records[1:])
                 for t in (cached, recompute)}
    span = {t.mode: (1000 * min(r.elapsed_s for r in t.records[1:]),
                     1000 * max(r.elapsed_s for r in t.records[1:])) for t in (cached, recompute)}
    assert window.time_plot.headline() == (
        f"Cached: {per_token['cached']:.2f} ms per generated token (median of 5 decode steps, "
        f"{span['cached'][0]:.2f}–{span['cached'][1]:.2f}) · Recompute: "
        f"{per_token['recompute']:.2f} ms per generated token (median of 5 decode steps, "
        f"{span['recompute'][0]:.2f}–{span['recompute'][1]:.2f})\n"
        f"TTFT, single measurement: Cached {ms['cached']:.1f} ms · Recompute "
        f"{ms['recompute']:.1f} ms (Lecture → Measure TTFT repeats it)")
    presenter.show_chart(1)
    assert presenter.headline().big == (f"Cached: {per_token['cached']:.1f} ms/token · "
                                        f"Recompute: {per_token['recompute']:.1f} ms/token")
    assert presenter.headline().lines == [
        f"Cached: time to first token {ms['cached']:.1f} ms, 6 steps",
        f"Recompute: time to first token {ms['recompute']:.1f} ms, 6 steps"]
    # Recompute is current and keeps no cache: the chart and the panel show the cached run's.
    last = cached.records[-1]
    shape = (info.num_layers, info.num_kv_heads, info.head_dim, info.dtype_bytes)
    one = 2 * shape[0] * shape[1] * shape[2] * shape[3]
    assert window.cache_plot.headline() == (
        f"KV cache measured {last.cache_used_bytes:,} B = formula 2·L·T·H_kv·d·bytes "
        f"{one * (p + 5):,} B (T = {last.cache_length} tokens)\n"
        f"{one:,} B per token · L = {shape[0]}, H_kv = {shape[1]}, d = {shape[2]}, "
        f"{shape[3]} bytes per number")
    presenter.show_chart(2)
    assert presenter.headline().lines == [
        "2·L·H_kv·d·bytes = 2·{}·{}·{}·{}".format(*shape),
        f"measured now: {last.cache_used_bytes:,} B for T = {last.cache_length} tokens"]
    presenter.set_enabled(False)


def test_saved_run_replays_to_the_same_charts(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
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
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
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
    lab = extras.labs.panels["cache_kinds"]
    lab.prompt_tokens.setValue(8)
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.result_ready, timeout=HANG_GUARD_MS):
        lab.run()
    assert extras.export_slide_pack()
    names = {p.name for p in (tmp_path / "pack").iterdir()}
    for key in window.plots():
        assert {f"{key}.png", f"{key}.svg", f"{key}.pdf", f"{key}.csv"} <= names
    assert {"lab-cache-kinds.png", "all-charts.pdf", "numbers.json", "cached-steps.csv",
            "sample-answers.csv"} <= names
    answers = read_csv_tables((tmp_path / "pack" / "sample-answers.csv").read_bytes())[0]
    assert answers[0] == ["answer no.", "answer", "count at T = 0.5 (of 6)",
                          "count at T = 1.5 (of 6)"]
    assert sum(int(r[2]) + int(r[3]) for r in answers[1:]) == 12
    histogram, per_t = read_csv_tables((tmp_path / "pack" / "answers.csv").read_bytes())
    assert histogram[0] == ["answer no. (1 = the most common over all temperatures)",
                            "answer (text)",
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
    lab = extras.labs.panels["sample"]
    lab.samples.setValue(64)
    lab.new_tokens.setValue(64)
    assert lab.run()
    qtbot.waitUntil(lambda: lab.progress.maximum() > 0, timeout=HANG_GUARD_MS)
    window.close()
    assert not any(t.isRunning() for t in no_thread_left_running)


def test_live_ttft_is_measured_k_times_and_drawn_as_median_and_range(  # type: ignore[no-untyped-def]
    qtbot, make_window, tmp_path: Path
) -> None:
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    assert extras.ttft_repeats == 5  # the default
    extras.ttft_repeats = 3
    with qtbot.waitSignal(extras.ttft_runner.finished, timeout=HANG_GUARD_MS) as done:
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


def test_presenter_numbers_are_in_the_window_language(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language="ko", max_new_tokens=3)
    presenter = window.classroom.presenter
    _run_to_end(qtbot, window, 3)
    presenter.set_enabled(True)
    fed = sum(window.controller.store.current.tokens_fed)
    assert presenter.headline().big == f"입력 토큰 {fed:,} (캐시)"
    presenter.show_chart(3)
    assert presenter.headline().big == "N번 샘플링으로 답을 세어 보세요"
    presenter.set_enabled(False)
