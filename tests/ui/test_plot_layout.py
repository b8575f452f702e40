"""The live plots' ranges and axes are settled when a run's data arrives, not while painting.

A range change must lay the y axes out for their new tick labels before the
plot paints: pyqtgraph otherwise resizes an axis from inside paint, which lays
the plot out again and paints it a second time in the same event-loop turn.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import replace

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QPainter, QPicture

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.plots.end_values import label_rect
from kvstudio.charts.render import _prepared
from kvstudio.charts.style import SLIDE_STYLE
from kvstudio.engine import formulas
from kvstudio.engine.records import SamplingSettings
from kvstudio.ui.plots.base import LivePlot, tick_text_width
from kvstudio.ui.plots.extent import FIRST_SPAN
from kvstudio.ui.plots.step_time import StepTimePlot
from kvstudio.ui.run.engine_adapter import RunInfo, RunRequest, RunSettings
from kvstudio.ui.run.store import RunStore
from tests.core.saved_runs import step_record
from tests.ui.drawn_ticks import drawn_tick_labels
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def _step_and_refresh(qtbot, window, mode: str, expected: int) -> None:  # type: ignore[no-untyped-def]
    """Step `mode` once and redraw every view, with no event processing after the redraw."""
    pacer = window.controller.pacer
    pacer.draw_on_request = False  # only the flush below draws the record: not its arrival,
    pacer.may_draw = lambda: False  # nor a tick that falls due before a late poll sees it
    window.controls.set_mode(mode)
    qtbot.waitUntil(lambda: window.controller.store.current_mode == mode
                    or window.controller.store.current is None, timeout=HANG_GUARD_MS)
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and window.controller.store.current.mode == mode
                    and len(window.controller.store.current.records) == expected,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()


def _paint_would_resize(axis) -> bool:  # type: ignore[no-untyped-def]
    """Generate the axis' draw specs as its paint() does; True if that changed its width."""
    before = (axis.textWidth, axis.maximumWidth(), axis.minimumWidth())
    picture = QPicture()
    painter = QPainter(picture)
    try:
        font = axis.style["tickFont"]
        if font is not None:
            painter.setFont(font)
        axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return (axis.textWidth, axis.maximumWidth(), axis.minimumWidth()) != before


def _y_axes(plot: LivePlot) -> list:  # type: ignore[type-arg]
    axes = [plot.plot_item.getAxis(side) for side in ("left", "right")]
    return [axis for axis in axes if axis.isVisible()]


def test_tokens_fed_ranges_come_from_the_formulas_at_run_start(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=16)
    _step_and_refresh(qtbot, window, "cached", 1)
    info = window.controller.store.current.info
    p, n = info.prompt_len, FIRST_SPAN  # the axes span the first 8 steps, not the budget of 16
    plot = window.tokens_plot
    (x0, x1), (y0, y1) = plot.plot_item.vb.viewRange()
    assert (x0, x1) == pytest.approx((-0.6, n - 0.4))  # room for the next steps from step 0
    assert (y0, y1) == pytest.approx((0, p * 1.5))  # a cached run's tallest bar is the prompt
    assert plot.right_view is not None
    right_top = plot.right_view.viewRange()[1][1]
    assert right_top == pytest.approx(formulas.tokens_fed_cached(p, n) * 1.3)

    _step_and_refresh(qtbot, window, "recompute", 1)
    assert plot.plot_item.vb.viewRange()[1][1] == pytest.approx((p + n - 1) * 1.5)
    assert plot.right_view.viewRange()[1][1] == pytest.approx(
        formulas.tokens_fed_recompute(p, n) * 1.3)


def test_y_axes_are_laid_out_for_their_labels_before_painting(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=16)
    plots = (window.tokens_plot, window.time_plot, window.cache_plot)
    for mode in ("cached", "recompute"):  # both change ranges: a new budget, then taller bars
        _step_and_refresh(qtbot, window, mode, 1)
        for plot in plots:
            for axis in _y_axes(plot):
                assert axis.textWidth == tick_text_width(axis), (type(plot).__name__,
                                                                 axis.orientation)
                assert not _paint_would_resize(axis), (type(plot).__name__, axis.orientation)


def test_a_wider_range_widens_the_axis_at_once(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    plot = window.tokens_plot
    plot.show_empty(False)  # tick values, as once a run has a step (empty: none to measure)
    axis = plot.plot_item.getAxis("right")
    plot.set_ranges((0.0, 10.0), (0.0, 10.0), (0.0, 10.0))
    narrow = axis.width()
    plot.set_ranges((0.0, 10.0), (0.0, 10.0), (0.0, 123456.0))
    assert axis.textWidth == tick_text_width(axis)
    assert axis.width() > narrow  # laid out now, not at the next paint
    assert not _paint_would_resize(axis)
    plot.set_ranges((0.0, 10.0), (0.0, 10.0), (0.0, 10.0))
    assert axis.width() == narrow  # and narrow again when the labels are


def test_a_new_range_is_painted_in_the_next_turn_and_data_at_once(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=16)
    plot = window.tokens_plot
    qtbot.waitUntil(plot.updatesEnabled, timeout=HANG_GUARD_MS)
    _step_and_refresh(qtbot, window, "cached", 1)  # the first run: new ranges
    assert not plot.updatesEnabled()  # laid out now, painted one event-loop turn later
    assert plot.bar_heights("cached") == [float(window.controller.store.current.info.prompt_len)]
    qtbot.waitUntil(plot.updatesEnabled, timeout=HANG_GUARD_MS)

    window.controls.step_button.click()  # same run, same ranges: nothing is held back
    qtbot.waitUntil(lambda: len(window.controller.store.current.records) == 2,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert plot.updatesEnabled()
    assert len(plot.bar_heights("cached")) == 2


def test_ttft_labels_of_both_modes_do_not_cover_each_other(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """The prefill costs the same in both modes, so the two stars sit at one height."""
    window = make_window(max_new_tokens=16)
    _step_and_refresh(qtbot, window, "cached", 1)
    _step_and_refresh(qtbot, window, "recompute", 1)
    plot = window.time_plot
    store = window.controller.store
    cached, recompute = store.trace("cached"), store.trace("recompute")
    prefill_s = recompute.records[0].elapsed_s
    for seconds in (prefill_s, prefill_s * 1.02, prefill_s * 0.98):  # equal, a hair apart
        cached.records[0] = replace(cached.records[0], elapsed_s=seconds)
        plot.refresh(store)
        labels = plot.ttft_labels()
        texts = " | ".join(text for text, _ in labels)
        # Both numbers are readable, each once, and no two labels overlap.
        assert f"{seconds * 1000:.1f} ms" in texts and f"{prefill_s * 1000:.1f} ms" in texts
        assert "Cached" in texts and "Recompute" in texts
        rects = [rect for _, rect in labels]
        assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def _cached_then_recompute(qtbot, make_window, max_new_tokens: int, recompute_steps: int):  # type: ignore[no-untyped-def]
    """A window whose cached run went to its end, then a recompute run stepped to
    `recompute_steps` records: (window, its store, the cached trace, the recompute trace)."""
    window = make_window(max_new_tokens=max_new_tokens)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    for step in range(1, recompute_steps + 1):
        _step_and_refresh(qtbot, window, "recompute", step)
    return window, store, store.trace("cached"), store.trace("recompute")


def test_end_labels_cover_no_other_label(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """The cumulative lines' end values ("Σ 197 ms") never sit on the TTFT label or on each
    other, and stay inside the plot, however the times fall (a recompute run stopped part-way
    ends its line in the middle of the plot, at the TTFT label's height at 1366×768)."""
    window, store, cached, recompute = _cached_then_recompute(qtbot, make_window, 12, 7)
    plot = window.time_plot
    checked = 0
    for size in ((1350, 680), (1264, 632)):  # the window on 1366×768 and 1280×720 screens
        window.resize(*size)
        settle(qtbot)  # laid out at that size, however many passes it takes
        for ttft_ms in (5.0, 20.0, 40.0):  # the TTFT label's height
            for step_ms in (2.0, 4.0, 6.0, 9.0, 14.0, 20.0):  # where recompute's total ends
                cached.records[:] = [replace(r, elapsed_s=(ttft_ms if r.step == 0 else 3.0)
                                             / 1000) for r in cached.records]
                recompute.records[:] = [replace(r, elapsed_s=(ttft_ms if r.step == 0
                                                              else step_ms) / 1000)
                                        for r in recompute.records]
                plot.refresh(store)
                # (after the refresh: new tick labels may widen or narrow the y axes)
                view = plot.plot_item.vb.sceneBoundingRect()
                labels = plot.ttft_labels() + plot.end_label_rects()
                assert len(plot.end_label_rects()) == 2
                for index, (text, rect) in enumerate(labels):
                    assert view.adjusted(-1, -1, 1, 1).contains(rect), (text, rect, view)
                    for other_text, other in labels[index + 1:]:
                        assert not rect.intersects(other), (size, text, other_text, ttft_ms,
                                                            step_ms)
                checked += 1
    assert checked == 36


def _drawn_points(plot) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Every pixel the time plot's lines pass through, and its markers' centres, in scene
    coordinates: each curve's points mapped by Qt, each segment sampled every pixel."""
    points: list[tuple[float, float]] = []
    for curve in (*plot._per_step.values(), *plot._cumulative.values(), *plot._ttft.values()):
        x, y = curve.getData()
        if x is None:
            continue
        mapped = [curve.mapToScene(QPointF(float(a), float(b))) for a, b in zip(x, y, strict=True)]
        for start, end in itertools.pairwise(mapped):
            steps = max(int(abs(end.x() - start.x()) + abs(end.y() - start.y())), 1)
            points += [(start.x() + (end.x() - start.x()) * i / steps,
                        start.y() + (end.y() - start.y()) * i / steps) for i in range(steps)]
        points += [(p.x(), p.y()) for p in mapped]
    return points


def test_value_labels_cross_no_line_or_marker(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """The TTFT and cumulative labels sit where no line passes: written at their values they
    covered the first steps' noisy line ("TTFT: Cached 23.6 ms · Recompute 17.0 ms" at
    1366×768) and the recompute spike ("누적 662 ms" at 1920×1080)."""
    window, store, cached, recompute = _cached_then_recompute(qtbot, make_window, 24, 10)
    plot = window.time_plot
    # As measured on a laptop: cached decode steps as noisy as its prefill, recompute growing
    # with the context, with one spike (a garbage collection) near the end.
    noise = [10.0 + 25.0 * ((7 * i) % 11) / 10 for i in range(len(cached.records))]
    cached.records[:] = [replace(r, elapsed_s=(23.6 if r.step == 0 else noise[i]) / 1000)
                         for i, r in enumerate(cached.records)]
    recompute.records[:] = [replace(r, elapsed_s=(17.0 if r.step == 0 else 8.0 + 1.5 * r.step
                                                  + (25.0 if r.step == 8 else 0.0)) / 1000)
                            for r in recompute.records]
    checked = 0
    for size in ((1350, 680), (1264, 632), (1900, 1000)):  # 1366×768, 1280×720, 1920×1080
        window.resize(*size)
        settle(qtbot)
        plot.refresh(store)
        view = plot.plot_item.vb.sceneBoundingRect()
        points = _drawn_points(plot)
        labels = plot.ttft_labels() + plot.end_label_rects()
        assert [text for text, _ in labels] == [
            "TTFT: Cached 23.6 ms · Recompute 17.0 ms",
            f"Σ {sum(cached.step_ms):,.0f} ms", f"Σ {sum(recompute.step_ms):,.0f} ms"]
        for text, rect in labels:
            assert view.adjusted(-1, -1, 1, 1).contains(rect), (size, text, rect, view)
            crossing = [p for p in points if rect.adjusted(-1, -1, 1, 1).contains(*p)]
            assert not crossing, (size, text, rect, crossing[:3])
            checked += 1
    assert checked == 9


# ---- the time plot on its own, drawing runs written here (no model) ----------------------
def _time_plot(qtbot, size: tuple[int, int]) -> StepTimePlot:  # type: ignore[no-untyped-def]
    plot = StepTimePlot()
    qtbot.addWidget(plot)
    plot.resize(*size)
    plot.show()
    return plot


def _begin(store: RunStore, run_id: int, mode: str, budget: int) -> None:
    settings = RunSettings(mode, SamplingSettings.greedy_settings(), budget)  # type: ignore[arg-type]
    store.begin(RunInfo(run_id, RunRequest("abc", False, settings), (1, 2, 3), ("a", "b", "c"),
                        2, 1, 32, 4))


def _add(store: RunStore, run_id: int, mode: str, step: int, ms: float) -> None:
    assert store.add(run_id, replace(step_record(step), mode=mode, elapsed_s=ms / 1000))


def _finished_run(store: RunStore, run_id: int, mode: str, ms: Sequence[float]) -> None:
    _begin(store, run_id, mode, len(ms))
    for step, value in enumerate(ms):
        _add(store, run_id, mode, step, value)
    store.finish(run_id)


def _assert_labels_clear(plot: StepTimePlot, context: object) -> None:
    """Every value label inside the plot, on no other label and on no drawn line or marker."""
    view = plot.plot_item.vb.sceneBoundingRect()
    points = _drawn_points(plot)
    labels = plot.ttft_labels() + plot.end_label_rects()
    for index, (text, rect) in enumerate(labels):
        assert view.adjusted(-1, -1, 1, 1).contains(rect), (context, text, rect, view)
        crossing = [p for p in points if rect.adjusted(-1, -1, 1, 1).contains(*p)]
        assert not crossing, (context, text, rect, crossing[:3])
        for other_text, other in labels[index + 1:]:
            assert not rect.intersects(other), (context, text, other_text)


def test_value_labels_are_placed_again_only_when_they_must(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Placing the labels maps every drawn point to the scene (about a millisecond a redraw
    on the UI thread): a redraw with nothing new keeps them where they are, a run's new
    steps only when they cross no label. Steps aimed at a label's place still find it
    clear after the redraw, at every step of the run and at its end."""
    plot = _time_plot(qtbot, (900, 450))  # (room for every label: always a clear place)
    store = RunStore()
    _finished_run(store, 1, "cached", [20.0] + [10.0 + (7 * i) % 11 / 3 for i in range(1, 40)])
    plot.refresh(store)
    settle(qtbot)
    placed: list[int] = []
    place = plot._place_labels
    monkeypatch.setattr(plot, "_place_labels", lambda: (placed.append(1), place())[-1])
    for _ in range(3):
        plot.refresh(store)
    assert placed == []  # nothing changed: not placed again

    _begin(store, 2, "recompute", 40)  # a live run, drawn at each step
    vb, aimed = plot.plot_item.vb, 0
    for step in range(40):
        ms = 18.0 if step == 0 else 8.0 + 0.3 * step
        ceiling = vb.viewRange()[1][1] / 1.5  # (higher steps grow the axis: all placed anew)
        x = vb.mapViewToScene(QPointF(step, 0.0)).x()
        for _, rect in plot.ttft_labels() + plot.end_label_rects():
            at = vb.mapSceneToView(rect.center()).y()  # the label's middle, in ms per step
            if step % 4 == 2 and rect.left() <= x <= rect.right() and 0 < at < ceiling:
                ms, aimed = at, aimed + 1  # this step's line runs through the label
                break
        _add(store, 2, "recompute", step, ms)
        plot.refresh(store)
        _assert_labels_clear(plot, step)
    assert aimed >= 3  # (the test's premise: steps ran into labels, every fourth step)
    assert 0 < len(placed) < 30  # placed anew where they must (17 here), not at all 40 steps
    store.finish(2)
    plot.refresh(store)
    _assert_labels_clear(plot, "finished")


def _marks_inside(plot: StepTimePlot, marks: Iterable[pg.ScatterPlotItem]) -> bool:
    """True if each marker's whole rect (pyqtgraph's, pen included) is inside the view box
    across (left of the first step and right of the last), under no label."""
    vb = plot.plot_item.vb
    vb.updateMatrix()
    view = vb.sceneBoundingRect()
    rects = [mark.sceneBoundingRect() for mark in marks]
    assert rects and all(rect.width() > 0 for rect in rects)
    # (an empty label, shown, painted its white box at step 0, 0 ms: over half the stars)
    boxes = [label_rect(label) for label in plot._value_labels() if label.isVisible()]
    return all(view.left() <= rect.left() and rect.right() <= view.right()
               and not any(rect.intersects(box) for box in boxes) for rect in rects)


def test_marks_at_step_0_stand_whole_on_a_long_run(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The TTFT stars and the repeated TTFT's medians beside step 0 are whole: on a long run
    0.6 steps left of step 0 is a pixel or two, and the plot's left edge cut the stars in
    half (the room is in pixels now, at every size and on a slide; no tick labels a step
    before 0); the empty per-mode TTFT labels' white boxes covered their right halves."""
    from kvstudio.labs.cache.compare import PrefillTimes  # (torch)

    plot = _time_plot(qtbot, (489, 250))
    bottom = plot.plot_item.getAxis("bottom")
    for steps in (240, 1000):
        store = RunStore()
        _finished_run(store, 1, "cached", [20.0] + [10.0] * (steps - 1))
        _finished_run(store, 2, "recompute", [19.0] + [12.0] * (steps - 1))
        plot.refresh(store)
        for size in ((420, 215), (489, 250), (700, 330)):  # in 1280×720 to 1920×1080 windows
            plot.resize(*size)
            settle(qtbot)
            assert _marks_inside(plot, plot._ttft.values()), (steps, size)
            assert not [t for t in drawn_tick_labels(bottom) if t[0] in "-−"], (steps, size)
    for key in ("16:9", "16:9 small"):  # laid out on the slides, as an export does
        with _prepared(plot, canvas_named(key), SLIDE_STYLE, None):
            assert _marks_inside(plot, plot._ttft.values()), key
    plot.show_ttft_repeats(PrefillTimes(3, {"cached": (20.0, 21.0, 19.5),
                                            "recompute": (19.0, 22.0, 18.5)}))
    settle(qtbot)
    assert _marks_inside(plot, plot._repeat_median.values())
    with _prepared(plot, canvas_named("16:9 small"), SLIDE_STYLE, None):
        assert _marks_inside(plot, plot._repeat_median.values())
