"""The live plots' ranges and axes are settled when a run's data arrives, not while painting.

A range change must lay the y axes out for their new tick labels before the
plot paints: pyqtgraph otherwise resizes an axis from inside paint, which lays
the plot out again and paints it a second time in the same event-loop turn.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from PySide6.QtGui import QPainter, QPicture

from kvstudio.engine import formulas
from kvstudio.ui.plots.base import LivePlot, tick_text_width
from kvstudio.ui.plots.extent import FIRST_SPAN
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


def test_end_labels_cover_no_other_label(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """The cumulative lines' end values ("Σ 197 ms") never sit on the TTFT label or on each
    other, and stay inside the plot, however the times fall (a recompute run stopped part-way
    ends its line in the middle of the plot, at the TTFT label's height at 1366×768)."""
    window = make_window(max_new_tokens=12)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    for step in range(1, 8):
        _step_and_refresh(qtbot, window, "recompute", step)
    plot = window.time_plot
    cached, recompute = store.trace("cached"), store.trace("recompute")
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
    from PySide6.QtCore import QPointF

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
    window = make_window(max_new_tokens=24)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    for step in range(1, 11):
        _step_and_refresh(qtbot, window, "recompute", step)
    plot = window.time_plot
    cached, recompute = store.trace("cached"), store.trace("recompute")
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
