"""Cache kinds on the cache plot, and the chips' hover text (UI → core → UI)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvstudio.core.kv_cache import CacheSpec

pytestmark = pytest.mark.usefixtures("qapp")


def _run(qtbot, window, steps: int) -> None:  # type: ignore[no-untyped-def]
    for n in range(1, steps + 1):
        window.controls._step.click()
        qtbot.waitUntil(lambda n=n: window.controller.store.current is not None
                        and len(window.controller.store.current.records) >= n)
    window.controller.pacer.flush()


def test_static_cache_draws_allocated_and_used(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    rs = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(rs, cache=CacheSpec("static", max_length=128)))
    _run(qtbot, window, 3)
    record = window.controller.store.current.last
    assert record.cache_allocated_bytes > record.cache_used_bytes
    allocated = window.cache_plot._allocated.opts["height"]
    assert sum(allocated) == record.cache_allocated_bytes
    assert sum(k + v for k, v in window.cache_plot.drawn_layer_bytes()) == pytest.approx(
        record.cache_used_bytes)


def test_sliding_window_shows_its_cap(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=12)
    rs = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(rs, cache=CacheSpec("sliding", window=4)))
    window.generation.set_prompt("가나다라마바사 아자차카타파하")
    _run(qtbot, window, 2)
    record = window.controller.store.current.last
    assert record.cache_length == 4
    assert window.cache_plot._cap.isVisible()
    k_cap = window.cache_plot._cap.value()
    assert all(k <= k_cap for k, _ in window.cache_plot.drawn_layer_bytes())


def test_chip_tooltip_shows_the_records_numbers(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    _run(qtbot, window, 2)
    record = window.controller.store.current.last
    chips = window.generation.chips
    rect = chips.last_rect()
    tip = chips.tooltip_at(rect.center().x(), rect.center().y())
    assert f"Token id {record.token_ids[0]}" in tip
    assert f"tokens fed this step: {record.tokens_fed}" in tip
    first = chips.tooltip_at(6, 6)
    assert first.startswith("Prompt token id")
