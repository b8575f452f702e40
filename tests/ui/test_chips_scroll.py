"""The chips row never shows half a line at its top: once an answer wraps past the row's
height, it scrolls by whole lines, so the first visible line reads whole and the newest
chip is shown."""

from __future__ import annotations

import pytest

from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_a_wrapped_answer_scrolls_by_whole_lines(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=60)
    window.resize(1000, 640)
    store = window.controller.store
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: store.current is not None and store.current.finished,
                    timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    settle(qtbot)
    _assert_whole_lines_to_the_newest_chip(window)
    # The chips re-flow when the row's width changes after the run (a dock refitting, the
    # window resized): the view follows the newest chip to its new line.
    for width in (1240, 900):
        window.resize(width, 640)
        settle(qtbot)
        _assert_whole_lines_to_the_newest_chip(window)


def _assert_whole_lines_to_the_newest_chip(window) -> None:  # type: ignore[no-untyped-def]
    view = window.generation
    scroll, chips = view._scroll, view.chips
    top = scroll.verticalScrollBar().value()
    height = scroll.viewport().height()
    rects = [c.rect for c in chips._chips if c.rect is not None]
    assert rects[-1].bottom() > height  # the answer wrapped past the row: it scrolled
    assert top > 0
    shown = [r for r in rects if r.bottom() > top and r.top() < top + height]
    assert all(r.top() >= top for r in shown), top  # no line cut at the top
    last = rects[-1]
    assert top <= last.top() and last.bottom() <= top + height  # the newest chip is whole


def test_a_chips_tooltip_says_what_its_probability_is(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    """A greedy chip said "probability 1.000" (#33): greedy draws nothing, so its tooltip now
    says argmax; a sampled chip's probability is said to be after the filters it was drawn
    from."""
    from dataclasses import replace

    from tests.ui.waits import HANG_GUARD_MS

    window = make_window(max_new_tokens=2)
    chips = window.generation.chips

    def step_once() -> list[str]:
        window.controller.reset()
        window.controller.step()
        qtbot.waitUntil(lambda: window.generation.generated_chip_count() >= 1,
                        timeout=HANG_GUARD_MS)
        return [t for t, k in zip(chips.tooltips(), chips.kinds(), strict=True)
                if k in ("generated", "pending", "eos")]

    settings = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(settings, sampling=replace(
        settings.sampling, temperature=0.0)))
    tip = step_once()[0]
    assert "greedy: the most likely token (argmax, nothing drawn)" in tip
    assert "probability" not in tip
    window.sampling.set_run_settings(replace(settings, sampling=replace(
        settings.sampling, temperature=0.85)))
    tip = step_once()[0]
    assert "after temperature, penalty, top-k and top-p (drawn from these)" in tip
    assert "argmax" not in tip
