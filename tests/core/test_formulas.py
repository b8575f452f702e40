"""The course formulas, with the numbers the lecture quotes."""

from __future__ import annotations

import pytest

from kvstudio.engine import formulas


def test_tokens_fed_lab_numbers() -> None:
    assert formulas.tokens_fed_cached(183, 64) == 246
    assert formulas.tokens_fed_recompute(183, 64) == 13_728
    assert formulas.tokens_fed("cached", 1, 1) == 1
    assert formulas.tokens_fed("recompute", 1, 1) == 1


def test_per_step_sums_to_total() -> None:
    for mode in ("cached", "recompute"):
        per_step = formulas.tokens_fed_per_step(mode, 183, 64)
        assert sum(per_step) == formulas.tokens_fed(mode, 183, 64)
        assert formulas.tokens_fed_cumulative(mode, 183, 64)[-1] == sum(per_step)
    assert formulas.tokens_fed_per_step("cached", 5, 3) == [5, 1, 1]
    assert formulas.tokens_fed_per_step("recompute", 5, 3) == [5, 6, 7]


def test_cache_bytes_course_model() -> None:
    # 2 · 4 layers · 100 tokens · 2 KV heads · 32 dims · 4 bytes
    assert formulas.cache_bytes(4, 100, 2, 32, 4) == 204_800
    assert formulas.bytes_per_token(4, 2, 32, 4) == 2_048
    assert formulas.cache_bytes(4, 100, 2, 32, 4, batch_size=3) == 3 * 204_800


def test_cache_bytes_per_step_caps_at_window() -> None:
    sizes = formulas.cache_bytes_per_step(4, 2, 32, 4, prompt_tokens=6, new_tokens=6, window=8)
    assert sizes == [2048 * t for t in (6, 7, 7, 7, 7, 7)]  # a window of 8 keeps 7


def test_layer_tokens_per_kind_and_hybrid_bytes() -> None:
    assert formulas.layer_tokens(20, [8, 8, None, 1]) == [7, 7, 20, 0]
    assert formulas.layer_tokens(5, [8, None]) == [5, 5]
    # 3 sliding layers of W = 8 and one full layer at T = 20: 2·(7+7+7+20)·2·32·4
    assert formulas.cache_bytes_layers([7, 7, 7, 20], 2, 32, 4) == 2 * 41 * 2 * 32 * 4
    assert formulas.cache_bytes_layers([20] * 4, 2, 32, 4) == formulas.cache_bytes(4, 20, 2, 32, 4)
    with pytest.raises(ValueError):
        formulas.window_keeps(0)


@pytest.mark.parametrize("p, n", [(0, 1), (1, 0), (-1, 5)])
def test_bad_lengths_raise(p: int, n: int) -> None:
    with pytest.raises(ValueError):
        formulas.tokens_fed_cached(p, n)
