"""The presenter view shows any chart (labs included), keys mean what they mean in the window,
headlines never pair runs of different N, and never break inside a number and its unit."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.korean import attach_particles
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.slides.headlines import NBSP, keep_together, plain
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def _window(make_window, tmp_path: Path):  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=6)
    extras = getattr(window, "classroom", None)
    if not isinstance(extras, ClassroomExtras):
        extras = install(window)
    extras.exporter.folder = tmp_path
    extras.exporter.canvas = canvas_named("16:9 small")
    return window, extras


def _steps(qtbot, window, mode: str, steps: int) -> None:  # type: ignore[no-untyped-def]
    store = window.controller.store
    for _ in range(steps):
        before = len(store.current.records) if store.current is not None else 0
        window.controller.step()
        qtbot.waitUntil(lambda b=before: store.current is not None
                        and store.current.mode == mode and len(store.current.records) > b,
                        timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()


def _plain(text: str) -> str:
    return plain(text)


def test_presenter_shows_a_lab_chart_with_the_labs_headline(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    _, extras = _window(make_window, tmp_path)
    lab = extras.labs.panels["cache_kinds"]
    lab.prompt_tokens.setValue(8)
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.result_ready, timeout=HANG_GUARD_MS):
        lab.run()
    presenter = extras.presenter
    presenter.set_enabled(True)
    qtbot.waitUntil(presenter.isActiveWindow, timeout=HANG_GUARD_MS)
    assert "lab cache-kinds" in presenter.chart_keys()
    for _ in range(4):  # ↓ past the four live charts reaches the lab's
        qtbot.keyClick(presenter, Qt.Key.Key_Down)
    assert presenter.current_chart().key == "lab cache-kinds"
    image = presenter.lab_image
    assert not image.isNull() and image.width() >= 320 and image.height() >= 240
    # Drawn at the room the chart has once the chips are hidden and the headline is set
    # (it was drawn at the room it had before, a third of a 1280×720 screen).
    view = presenter.findChild(QLabel, "presenter_lab_chart")
    assert view is not None
    qtbot.waitUntil(lambda: abs(presenter.lab_image.width() - view.width()) <= 2
                    and abs(presenter.lab_image.height() - view.height()) <= 2,
                    timeout=HANG_GUARD_MS)
    first, *rest = [line for line in lab.headline().splitlines() if line.strip()]
    assert _plain(presenter.big_label.text()) == attach_particles(first.strip())
    assert _plain(presenter.details_label.text()).splitlines() == [
        attach_particles(line.strip()) for line in rest]
    assert lab.title() in presenter.windowTitle() or presenter.current_chart().title().startswith(
        lab.title())
    # The lab's own chart stayed where it was, at its size, in its lab.
    assert lab.isAncestorOf(next(iter(lab.charts().values())))
    presenter.set_enabled(False)


def test_presenter_headline_never_pairs_runs_of_different_n(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    window, extras = _window(make_window, tmp_path)
    _steps(qtbot, window, "cached", 6)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    _steps(qtbot, window, "recompute", 2)
    store = window.controller.store
    cached, recompute = store.trace("cached"), store.trace("recompute")
    assert (len(cached.records), len(recompute.records)) == (6, 2)
    presenter = extras.presenter
    presenter.set_enabled(True)
    presenter.show_chart(0)
    big = presenter.headline().big
    total_c, total_r = sum(cached.tokens_fed), sum(recompute.tokens_fed)
    assert f"{total_c:,} vs {total_r:,}" not in big  # N = 6 against N = 2: not one comparison
    at_2 = sum(cached.tokens_fed[:2])
    assert big == f"{at_2:,} vs {total_r:,} tokens fed in N = 2 steps"
    assert "runs of different length: Cached N = 6, Recompute N = 2" in presenter.headline().lines
    presenter.show_chart(1)
    assert "runs of different length: Cached N = 6, Recompute N = 2" in presenter.headline().lines
    presenter.set_enabled(False)


def test_presenter_keys_mean_what_they_mean_in_the_window(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    window, extras = _window(make_window, tmp_path)
    _steps(qtbot, window, "cached", 4)
    state = window.controller.state
    presenter = extras.presenter
    presenter.set_enabled(True)
    qtbot.waitUntil(presenter.isActiveWindow, timeout=HANG_GUARD_MS)
    qtbot.keyClick(presenter, Qt.Key.Key_Left)  # ← steps back, as in the window
    assert state.viewing == 2
    qtbot.keyClick(presenter, Qt.Key.Key_PageUp)  # the clicker's back key too
    assert state.viewing == 1
    assert presenter.current_chart().key == "tokens_fed"  # the chart did not change
    assert presenter.tokens_plot.bar_heights("cached")[-1] == 1.0  # drawn at the step looked at
    hint = _plain(presenter.keys_label.text())
    assert "Page Up / ←: one step back (as in the window)" in hint
    assert "↓ / ↑: next / previous chart" in hint
    presenter.set_enabled(False)
    window.controller.view_latest()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=HANG_GUARD_MS)
    qtbot.keyClick(window, Qt.Key.Key_PageUp)  # and in the window, Page Up is ← too
    assert state.viewing == 2


def test_presenter_labels_the_cumulative_lines_ends(  # type: ignore[no-untyped-def]
        qtbot, make_window, tmp_path: Path) -> None:
    window, extras = _window(make_window, tmp_path)
    _steps(qtbot, window, "cached", 3)
    presenter = extras.presenter
    presenter.set_enabled(True)
    presenter.show_chart(0)
    total = sum(window.controller.store.trace("cached").tokens_fed)
    assert presenter.end_label_texts() == {"cached": f"{total:,}", "recompute": ""}
    presenter.set_enabled(False)


def test_headlines_break_between_parts_never_inside_a_number_and_its_unit() -> None:
    text = keep_together("2,048 B per token · 204,800 B per 100 tokens")
    first, second = text.split(f"{NBSP}· ")
    assert " " not in first and " " not in second  # each part stays on one line
    long = keep_together("measured now: 204,800 B for T = 100 tokens, over the whole prompt")
    assert f"204,800{NBSP}B" in long and f"T{NBSP}={NBSP}100{NBSP}tokens" in long


@pytest.mark.parametrize(("marked", "fitted"), [
    ("top-k = 0이(가) 남긴 토큰", "top-k = 0이 남긴 토큰"),
    ("6,400개을(를) 남김", "6,400개를 남김"),
    ("토큰 2이(가) 남음", "토큰 2가 남음"),
    ("100을(를)", "100을"),
    ("서울(으)로", "서울로"),
    ("캐시(으)로", "캐시로"),
    ("값(으)로", "값으로"),
    ("\"사과\"은(는)", "\"사과\"는"),
    ("top-k은(는)", "top-k는"),
])
def test_korean_particles_fit_the_word_before_them(marked: str, fitted: str) -> None:
    assert attach_particles(marked) == fitted
