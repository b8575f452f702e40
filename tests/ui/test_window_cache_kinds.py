"""Cache kinds on the cache plot, and the chips' hover text (UI → core → UI)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvstudio.engine.cache.kv_cache import CacheSpec
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def _run(qtbot, window, steps: int) -> None:  # type: ignore[no-untyped-def]
    for n in range(1, steps + 1):
        window.controls.step_button.click()
        qtbot.waitUntil(lambda n=n: window.controller.store.current is not None
                        and len(window.controller.store.current.records) >= n,
                        timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()


def test_static_cache_draws_allocated_and_used(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    rs = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(rs, cache=CacheSpec("static", max_length=128)))
    _run(qtbot, window, 3)
    record = window.controller.store.current.last
    assert record.cache_allocated_bytes > record.cache_used_bytes
    allocated = window.cache_plot.allocated_bars.opts["height"]
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
    assert record.cache_length == 3  # W = 4 keys per query, itself included: 3 kept
    assert window.cache_plot.window_cap_line.isVisible()
    k_cap = window.cache_plot.window_cap_line.value()
    assert all(k == k_cap for k, _ in window.cache_plot.drawn_layer_bytes())  # at the cap
    assert "keeps 3 tokens" in window.cache_plot.window_cap_line.label.format


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


def test_a_hybrid_models_layers_carry_their_kind(qtbot) -> None:  # type: ignore[no-untyped-def]
    """3 sliding layers (W = 8, 7 tokens kept) and one full layer, at T = 20 positions."""
    from kvstudio.engine import formulas
    from kvstudio.engine.cache.layout import CachePlan, LayerPlan
    from kvstudio.engine.records import SamplingSettings, StepRecord
    from kvstudio.ui.plots.cache_bytes import CacheBytesPlot
    from kvstudio.ui.run.engine_adapter import RunInfo, RunRequest, RunSettings

    plot = CacheBytesPlot()
    qtbot.addWidget(plot)
    plan = CachePlan((LayerPlan("sliding", 8, 7),) * 3 + (LayerPlan("full"),), 2, 12, 4)
    settings = RunSettings("cached", SamplingSettings(), 12, CacheSpec())
    info = RunInfo(1, RunRequest("x", False, settings), (1,) * 10, ("",) * 10, 4, 2, 12, 4,
                   plan=plan)
    per_layer = [formulas.cache_bytes(1, t, 2, 12, 4) // 2 for t in (7, 7, 7, 20)]
    record = StepRecord(
        step=10, phase="decode", mode="cached", token_ids=(1,), token_texts=("",), tokens_fed=1,
        elapsed_s=0.001, cache_layer_bytes=tuple((b, b) for b in per_layer),
        cache_allocated_bytes=2 * sum(per_layer), cache_used_bytes=2 * sum(per_layer),
        cache_length=20, attention_mask_shape=(1, 21), survivors_top_k=(1,),
        survivors_top_p=(1,), chosen_probability=(1.0,), top_candidates=((),), finished=(False,),
    )
    plot._draw(info, record)
    assert plot._tick_labels == ["0 W=8", "1 W=8", "2 W=8", "3 full"]
    assert not plot.window_cap_line.isVisible()  # the cap belongs to a uniform sliding cache
    assert "Σ" in plot.summary
    assert info.formula_used_bytes(20) == record.cache_used_bytes  # 2·(7+7+7+20)·2·12·4
