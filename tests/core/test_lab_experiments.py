"""The labs' core generators agree with the engine's experiments on the same seed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import DType, Mode, SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.cache.compare import (
    CompareResult,
    ModeRun,
    RepeatedCompare,
    backend_in_dtype,
    cache_vs_recompute,
    compare_modes,
    repeated_cache_vs_recompute,
)
from kvstudio.labs.cache.kinds import CacheKindsResult, cache_kinds
from kvstudio.labs.cache.sweep import ModeFits, SweepLabResult, fit_polynomial, sweep_with_fits
from kvstudio.labs.common import Progress, Spread, finish, lab_prompt_ids, spread
from kvstudio.labs.course import COURSE
from kvstudio.labs.sampling.cutoff import DistributionRun, DistributionStep, distribution_steps
from kvstudio.labs.sampling.sample import SamplingResult, repeated_sampling
from kvstudio.labs.sampling.temperature import TemperatureLabResult, temperature_lab

# Compares computations of different shapes (cached vs recompute, cache kinds against dynamic):
# rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric


@pytest.fixture(scope="module")
def prompt(tokenizer: TextTokenizer) -> list[int]:
    return lab_prompt_ids(tokenizer, 12)


def test_cache_vs_recompute_is_compare_modes(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    lab = finish(
        cache_vs_recompute(tiny_backend, tokenizer, prompt_tokens=12, new_tokens=6),
        CompareResult,
    )
    ids = lab_prompt_ids(tokenizer, 12)
    ref = finish(compare_modes(tiny_backend, tokenizer, ids, 6), CompareResult)
    assert lab.cached.token_ids == ref.cached.token_ids
    assert lab.recompute.tokens_fed_per_step == ref.recompute.tokens_fed_per_step
    assert lab.cached.tokens_fed == formulas.tokens_fed("cached", 12, 6) == 12 + 5
    assert lab.identical and lab.first_divergent_step is None
    assert lab.max_logit_diff < 1e-4


@pytest.mark.parametrize("mode", ["cached", "recompute"])
def test_the_labs_one_mode_run_is_that_mode_of_the_comparison(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, mode: Mode
) -> None:
    """``kvstudio compare --mode M``: the lab's run, M alone, one round; the same tokens,
    tokens fed and bytes as M in the two-mode comparison."""
    from kvstudio.files.loaded import from_minimind
    from kvstudio.labs.registry import COMPARE

    loaded = from_minimind(tiny_model, tokenizer, "tiny")
    params = {"prompt_tokens": 12, "new_tokens": 6, "repeats": 1}
    items = list(COMPARE.run(loaded, params, mode=mode))
    alone = items[-1]
    assert isinstance(alone, ModeRun) and alone.mode == mode
    stages = {item.stage for item in items[:-1] if isinstance(item, Progress)}
    assert stages == {"warm-up", mode}  # one mode only, after its warm-up
    both = finish(COMPARE.run(loaded, params), RepeatedCompare).run(mode)
    assert alone.token_ids == both.token_ids and alone.text == both.text
    assert alone.tokens_fed_per_step == both.tokens_fed_per_step
    assert alone.tokens_fed == alone.tokens_fed_formula == formulas.tokens_fed(mode, 12, 6)
    assert (alone.cache_bytes, alone.cache_used_bytes) == (both.cache_bytes,
                                                            both.cache_used_bytes)
    with pytest.raises(ValueError, match="mode must be both, cached or recompute"):
        COMPARE.run(loaded, params, mode="turbo")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_runs_and_drifts_more(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, dtype: DType
) -> None:
    half = backend_in_dtype(tiny_backend, dtype)
    assert half.dtype_bytes == 2 and tiny_backend.dtype_bytes == 4  # the original is untouched
    result = finish(
        cache_vs_recompute(
            tiny_backend, tokenizer, prompt_tokens=12, new_tokens=4, dtype=dtype
        ),
        CompareResult,
    )
    assert result.cached.cache_bytes == formulas.cache_bytes(
        half.num_layers, 12 + 3, half.num_kv_heads, half.head_dim, 2
    )
    assert len(result.max_abs_logit_diff) == 4
    assert backend_in_dtype(tiny_backend, "float32") is tiny_backend


def test_temperature_lab_matches_repeated_sampling_and_both_modes_agree(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, prompt: list[int]
) -> None:
    temps = (0.5, 1.5)
    items = list(
        temperature_lab(tiny_backend, tokenizer, prompt, temps, samples=6, new_tokens=4)
    )
    progress = [i for i in items if isinstance(i, Progress)]
    assert [p.done for p in progress] == sorted(p.done for p in progress)
    assert progress[-1].done <= progress[-1].total == 2 * len(temps) * 4
    result = items[-1]
    assert isinstance(result, TemperatureLabResult)
    ref = finish(
        repeated_sampling(
            tiny_backend,
            tokenizer,
            prompt,
            temps,
            6,
            4,
            settings=COURSE.sampling,  # the lab's knobs are the course preset's (top-p 0.85)
        ),
        SamplingResult,
    )
    assert [t.counts for t in result.cached.temperatures] == [t.counts for t in ref.temperatures]
    assert result.cached.settings.top_p == COURSE.top_p == 0.85
    assert result.changes == ()  # nothing changed from the course preset but T
    assert result.same_in_both_modes is True
    assert result.same_answers_count == (12, 12)
    # One answer tipped the other way in recompute mode: counted, not hidden.
    first, *rest = result.recompute.temperatures
    tipped = replace(first, answers=(first.answers[0] + "!", *first.answers[1:]))
    one_off = TemperatureLabResult(
        result.cached, replace(result.recompute, temperatures=(tipped, *rest))
    )
    assert one_off.same_in_both_modes is False and one_off.same_answers_count == (11, 12)
    only_cached = finish(
        temperature_lab(
            tiny_backend, tokenizer, prompt, temps, samples=3, new_tokens=2, check_both_modes=False
        ),
        TemperatureLabResult,
    )
    assert only_cached.recompute is None and only_cached.same_in_both_modes is None
    assert only_cached.same_answers_count is None


def test_distribution_steps_follow_the_stepper(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, prompt: list[int]
) -> None:
    settings = SamplingSettings(temperature=1.2, top_k=8, top_p=0.6, seed=3)
    items = list(distribution_steps(tiny_backend, tokenizer, prompt, settings, new_tokens=5))
    steps = [i for i in items if isinstance(i, DistributionStep)]
    run = items[-1]
    assert isinstance(run, DistributionRun)
    ref = list(Stepper(tiny_backend, tokenizer, prompt, sampling=settings, max_new_tokens=5))
    assert [s.record.token_ids for s in steps] == [r.token_ids for r in ref]
    for s in steps:
        assert len(s.probabilities) == 20
        assert list(s.probabilities) == sorted(s.probabilities, reverse=True)
        assert s.top_k_cut == 8 and 1 <= s.top_p_cut <= 8
        assert s.chosen_rank is not None and s.chosen_rank < s.top_p_cut  # chosen survived
    assert run.survivors_top_k == tuple(r.survivors_top_k[0] for r in ref)
    assert run.survivors_top_p == tuple(r.survivors_top_p[0] for r in ref)


def test_cache_kinds_memory_masks_and_identity(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, prompt: list[int]
) -> None:
    b = tiny_backend
    per_token = formulas.bytes_per_token(b.num_layers, b.num_kv_heads, b.head_dim, 4)
    wide = finish(
        cache_kinds(b, tokenizer, prompt, new_tokens=6, window=64), CacheKindsResult
    )
    assert wide.window_covers_context
    assert wide.identical_to_dynamic("static") and wide.identical_to_dynamic("sliding")
    dyn = wide.run("dynamic")
    assert dyn.allocated_bytes == tuple(per_token * (12 + s) for s in range(6))
    assert dyn.mask_shapes == tuple((1, 12 + s) for s in range(6))
    static = wide.run("static")
    assert set(static.allocated_bytes) == {per_token * (12 + 6)}  # preallocated once
    assert static.used_bytes == dyn.allocated_bytes
    narrow = finish(
        cache_kinds(b, tokenizer, prompt, new_tokens=6, window=8), CacheKindsResult
    )
    sliding = narrow.run("sliding")
    assert not narrow.window_covers_context
    assert max(sliding.allocated_bytes) == per_token * 7  # stops growing at W − 1
    assert max(shape[1] for shape in sliding.mask_shapes[1:]) == 8  # W keys, itself included
    assert sliding.mask_shapes[0][1] == 12  # the prefill's mask spans the prompt…
    assert sliding.newest_keys == (8,) * 6  # …but its newest query sees W keys, as every step
    assert dyn.newest_keys == tuple(12 + s for s in range(6))  # no window: the whole mask


def test_fit_polynomial_recovers_known_curves() -> None:
    x = np.array([10, 20, 40, 80, 160], dtype=float)
    quad = fit_polynomial(x, 0.001 * x**2 + 0.5 * x + 3, 2)
    assert np.allclose(quad.coefficients, (0.001, 0.5, 3.0)) and quad.r_squared == pytest.approx(1)
    line = fit_polynomial(x, 2 * x + 1, 1)
    assert np.allclose(line(np.array([5.0])), 11.0)
    few = fit_polynomial([4.0, 8.0], [1.0, 2.0], 2)  # two points: a line, padded
    assert len(few.coefficients) == 3 and few.coefficients[0] == 0.0


def test_sweep_with_fits(tiny_backend: MiniMindBackend, tokenizer: TextTokenizer) -> None:
    result = finish(
        sweep_with_fits(tiny_backend, tokenizer, values=(4, 8, 16), fixed=3),
        SweepLabResult,
    )
    rec = result.fits_for("recompute")
    assert rec.context == (7, 11, 19)
    assert len(rec.linear.coefficients) == 2 and len(rec.quadratic.coefficients) == 3
    point = result.sweep.series("recompute")[0]
    assert rec.ms_per_token[0] == pytest.approx(point.ms_per_token)  # the median decode step
    assert point.ms_per_token > 0 and point.decode_seconds < point.seconds


def test_top_p_sees_the_top_k_survivors_renormalised(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, prompt: list[int]
) -> None:
    settings = SamplingSettings(temperature=1.3, top_k=10, top_p=0.85, seed=5)
    steps = [i for i in distribution_steps(tiny_backend, tokenizer, prompt, settings,
                                                new_tokens=4)
             if isinstance(i, DistributionStep)]
    for s in steps:
        shown = s.after_top_k()
        assert sum(shown) == pytest.approx(1.0)  # the 10 survivors renormalised
        assert s.top_k_mass == pytest.approx(sum(s.probabilities[:10]))
        assert all(v == 0 for v in shown[10:])
        assert s.kept_mass() >= 0.85  # what top-p keeps reaches p…
        if s.top_p_cut > 1:
            assert sum(shown[: s.top_p_cut - 1]) < 0.85  # …and one token fewer would not
        # the chosen token's probability after both filters is its share of the kept mass
        assert s.chosen_rank is not None
        assert s.record.chosen_probability[0] == pytest.approx(
            shown[s.chosen_rank] / s.kept_mass(), rel=1e-4)


def test_spread_and_repeated_compare_use_medians(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    assert spread([5.0, 1.0, 3.0, 100.0, 4.0]) == Spread(4.0, 1.0, 100.0, 5)
    result = finish(
        repeated_cache_vs_recompute(tiny_backend, tokenizer, repeats=3, prompt_tokens=12,
                                         new_tokens=4),
        RepeatedCompare,
    )
    assert len(result.rounds) == 3
    assert {r.cached.token_ids for r in result.rounds} == {result.run("cached").token_ids}
    cached_totals = sorted(1000 * r.cached.total_seconds for r in result.rounds)
    recompute_totals = sorted(1000 * r.recompute.total_seconds for r in result.rounds)
    assert result.total_ms("cached").median == pytest.approx(cached_totals[1])
    assert result.speed_ratio == pytest.approx(recompute_totals[1] / cached_totals[1])
    first_steps = [1000 * r.recompute.step_seconds[0] for r in result.rounds]
    ttft = result.step_ms("recompute")[0]
    assert (ttft.low, ttft.median, ttft.high) == pytest.approx(tuple(sorted(first_steps)))
    with pytest.raises(ValueError, match="at least once"):
        list(repeated_cache_vs_recompute(tiny_backend, tokenizer, repeats=0))


def test_meaningless_fits_are_not_usable() -> None:
    x = (10.0, 20.0, 40.0, 80.0, 160.0)
    flat = (2.0, 2.3, 1.9, 2.2, 2.0)  # the cached mode: flat and noisy
    bends_down = tuple(0.1 * v - 0.00005 * v * v for v in x)  # nearly straight, bends down
    for ys, usable_linear, usable_quadratic in ((flat, False, False),
                                                 (bends_down, True, False),
                                                 (tuple(0.01 * v * v + 1 for v in x), True,
                                                  True)):
        fits = ModeFits("recompute", tuple(int(v) for v in x), ys,
                             fit_polynomial(x, ys, 1), fit_polynomial(x, ys, 2))
        assert fits.usable(fits.linear) is usable_linear
        assert fits.usable(fits.quadratic) is usable_quadratic


def test_sweep_rounds_give_medians_and_ranges(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    result = finish(
        sweep_with_fits(tiny_backend, tokenizer, values=(4, 8), fixed=3, repeats=3),
        SweepLabResult,
    )
    assert result.repeats == 3
    for fits in result.fits:
        assert len(fits.ms_low) == len(fits.ms_high) == len(fits.ms_per_token) == 2
        assert all(lo <= m <= hi for lo, m, hi in
                   zip(fits.ms_low, fits.ms_per_token, fits.ms_high, strict=True))


def test_sampling_progress_reaches_the_whole_when_answers_end_early() -> None:
    """ko-chat's answers end (eos) before the budget: the steps a batch skips still count, so
    the last progress is the whole (it stopped at 96 % in the window, #33)."""
    from kvstudio.files.loaded import load_model

    chat = load_model("ko-chat")
    ids = chat.tokenizer.chat_ids(COURSE.question)
    items = list(repeated_sampling(chat.backend, chat.tokenizer, ids, (0.3, 0.3), 4, 96))
    progress = [i for i in items if isinstance(i, Progress)]
    stepped = [p for p in progress if p.record is not None]
    assert stepped[-1].done < progress[-1].done  # a batch ended early: its steps were skipped
    assert progress[-1].done == progress[-1].total == 2 * 96 and progress[-1].fraction == 1.0
    assert [p.done for p in progress] == sorted(p.done for p in progress)  # never backwards
    assert isinstance(items[-1], SamplingResult)
