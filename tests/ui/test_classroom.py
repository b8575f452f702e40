"""The classroom extras in the real window: labs tab, export on every plot, presenter view,
save → reopen → replay to the same charts, and the slide pack of the live run and labs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThread
from PySide6.QtGui import QAction, QFont, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from kvstudio.core.runfile import load_runs
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.slides.export_menu import ExportButton

pytestmark = pytest.mark.usefixtures("qapp")
TIMEOUT = 20_000


def _window(make_window, tmp_path: Path):  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=6)
    extras = getattr(window, "classroom", None)
    if not isinstance(extras, ClassroomExtras):
        extras = install(window)  # until the window installs it itself
    extras.exporter.folder = tmp_path
    extras.exporter.width = 960  # half the default: the same code path, faster
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


def test_presenter_shows_one_chart_with_its_numbers_and_the_clicker_drives(
        qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    presenter = extras.presenter
    _presenter_action(window).trigger()
    qtbot.waitUntil(presenter.isActiveWindow)
    assert presenter.isFullScreen() and not window.isHidden()
    assert presenter.font().pixelSize() >= 18  # big type, whatever the app font is
    store = window.controller.store
    qtbot.keyClick(presenter, Qt.Key.Key_PageDown)  # a presenter's clicker
    qtbot.waitUntil(lambda: store.current is not None and len(store.current.records) == 1,
                    timeout=TIMEOUT)
    window.controller.pacer.flush()
    assert presenter.tokens_plot.bar_heights("cached") == [float(store.current.info.prompt_len)]
    assert presenter._chips.isVisible() and presenter._chips.chip_texts()
    qtbot.keyClick(presenter, Qt.Key.Key_Down)
    assert presenter.current_chart().key == "step_time"
    qtbot.keyClick(presenter, Qt.Key.Key_PageUp)
    qtbot.keyClick(presenter, Qt.Key.Key_PageUp)
    assert presenter.current_chart().key == "answers"  # wraps around
    assert not presenter._chips.isVisible()
    qtbot.keyClick(presenter, Qt.Key.Key_3)
    assert presenter.current_chart().key == "cache_bytes"
    qtbot.keyClick(presenter, Qt.Key.Key_P)
    qtbot.waitUntil(lambda: store.current.finished, timeout=TIMEOUT)
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
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute", timeout=TIMEOUT)
    _run_to_end(qtbot, window, 6)
    window.answers._samples.setValue(5)
    window.answers._length.setValue(2)
    window.answers._temps.setText("0.1, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=TIMEOUT):
        window.answers._go.click()
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
    assert presenter._big.text() == presenter.headline().big  # what the screen shows
    presenter.set_enabled(False)


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


def test_slide_pack_has_every_live_chart_and_lab(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window, extras = _window(make_window, tmp_path)
    _run_to_end(qtbot, window, 6)
    lab = extras.labs.cache_kinds
    lab.prompt_tokens.setValue(8)
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.result_ready, timeout=TIMEOUT):
        lab.run()
    assert extras.export_slide_pack()
    names = {p.name for p in (tmp_path / "pack").iterdir()}
    for key in window.plots():
        assert {f"{key}.png", f"{key}.svg", f"{key}.pdf", f"{key}.csv"} <= names
    assert {"lab-cache-kinds.png", "all-charts.pdf", "numbers.json", "cached-steps.csv"} <= names


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
