"""The lab experiments, consumed as plain lists of what their generators yield."""

from __future__ import annotations

import pytest

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.cache.compare import CompareResult, compare_modes
from kvstudio.labs.cache.sweep import SweepResult, length_sweep
from kvstudio.labs.common import Progress, finish, lab_prompt_ids
from kvstudio.labs.sampling.sample import SamplingResult, repeated_sampling

# Compares computations of different shapes (cached vs recompute): rerun under other CPU kernels
# by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric


def test_lab_prompt_has_exactly_p_tokens(tokenizer: TextTokenizer) -> None:
    for p in (1, 17, 183, 700):
        assert len(lab_prompt_ids(tokenizer, p)) == p
    with pytest.raises(ValueError):
        lab_prompt_ids(tokenizer, 0)


def test_compare_modes_lab_table(tiny_backend: MiniMindBackend, tokenizer: TextTokenizer) -> None:
    items = list(compare_modes(tiny_backend, tokenizer, lab_prompt_ids(tokenizer, 183), 64))
    *progress, result = items
    assert all(isinstance(p, Progress) for p in progress)
    assert isinstance(result, CompareResult)
    assert progress[-1].done == progress[-1].total == len(progress)
    assert result.identical and result.first_divergent_step is None
    assert result.max_logit_diff < 1e-4 and len(result.max_abs_logit_diff) == 64
    assert (result.cached.tokens_fed, result.cached.tokens_fed_formula) == (246, 246)
    assert (result.recompute.tokens_fed, result.recompute.tokens_fed_formula) == (13_728, 13_728)
    per_token = formulas.bytes_per_token(2, 2, 16, 4)
    assert result.cached.cache_bytes == result.cached.cache_bytes_formula == per_token * 246
    assert result.recompute.cache_bytes == 0
    assert len(result.cached.token_ids) == 64
    assert result.speed_ratio > 0 and result.cached.ttft_seconds > 0


def test_compare_modes_with_sliding_window(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    spec = CacheSpec("sliding", window=16)
    result = finish(
        compare_modes(tiny_backend, tokenizer, lab_prompt_ids(tokenizer, 10), 20, cache=spec),
        CompareResult,
    )
    assert result.identical
    assert result.cached.cache_bytes == result.cached.cache_bytes_formula
    assert result.cached.records[-1].cache_length == 15  # W − 1 = 15 kept


def test_repeated_sampling_batches_and_counts(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = tokenizer.chat_ids("안녕하세요?")
    result = finish(
        repeated_sampling(tiny_backend, tokenizer, prompt, [0.0, 1.5], samples=6, new_tokens=8),
        SamplingResult,
    )
    greedy, hot = result.temperatures
    assert greedy.distinct == 1 and greedy.answers == (greedy.answers[0],) * 6
    assert hot.distinct > 1
    for t in result.temperatures:
        assert len(t.answers) == 6 and sum(n for _, n in t.counts) == 6
        assert t.steps <= 8
    assert result.total_seconds > 0


def test_repeated_sampling_is_reproducible(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    def answers() -> tuple[str, ...]:
        res = finish(
            repeated_sampling(tiny_backend, tokenizer, [5, 6, 7], [1.0], samples=4, new_tokens=6),
            SamplingResult,
        )
        return res.temperatures[0].answers

    assert answers() == answers()


def test_length_sweep(tiny_backend: MiniMindBackend, tokenizer: TextTokenizer) -> None:
    items = list(length_sweep(tiny_backend, tokenizer, vary="new", values=(1, 4, 9), fixed=12))
    result = items[-1]
    assert isinstance(result, SweepResult)
    assert len(result.points) == 6 and len(result.series("cached")) == 3
    for point in result.points:
        assert point.tokens_fed == point.tokens_fed_formula
    prompt_sweep = finish(
        length_sweep(tiny_backend, tokenizer, vary="prompt", values=(3, 30), fixed=5),
        SweepResult,
    )
    assert [p.prompt_tokens for p in prompt_sweep.series("recompute")] == [3, 30]


def test_bad_experiment_arguments(tiny_backend: MiniMindBackend, tokenizer: TextTokenizer) -> None:
    with pytest.raises(ValueError, match="temperature"):
        list(repeated_sampling(tiny_backend, tokenizer, [1], [], samples=2, new_tokens=2))
    with pytest.raises(ValueError, match="vary"):
        list(length_sweep(tiny_backend, tokenizer, vary="both"))  # type: ignore[arg-type]


def test_warm_up_runs_both_feeds_before_any_timed_run(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Both modes' first forwards (kernel choice, allocator growth) happen before timing."""
    from kvstudio.labs.common import warm_up

    with_cache: list[bool] = []
    hook = tiny_backend.model.register_forward_pre_hook(
        lambda _module, args: with_cache.append(args[1] is not None)  # forward(ids, cache)
    )
    try:
        warm_up(tiny_backend, tokenizer)
    finally:
        hook.remove()
    assert True in with_cache and False in with_cache  # cached and recompute feeds
