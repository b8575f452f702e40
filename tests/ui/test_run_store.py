"""The run store keeps the latest run per mode and drops records of replaced runs (no Qt)."""

from __future__ import annotations

from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    RunRequest,
    RunSettings,
    encode_prompt,
    parse_temperatures,
    run_info,
    wrap_model,
)
from kvstudio.ui.run.store import RunStore


def test_store_keeps_one_trace_per_mode_and_drops_stale_records(tiny_model, tokenizer) -> None:  # type: ignore[no-untyped-def]
    handle = wrap_model(tiny_model, tokenizer, "tiny", ModelChoice())
    store = RunStore()
    for run_id, mode in ((1, "cached"), (2, "recompute")):
        settings = RunSettings(mode, SamplingSettings.greedy_settings(), 5)
        request = RunRequest("안녕하세요", True, settings)
        ids = encode_prompt(handle, request)
        store.begin(run_info(run_id, handle, request, ids))
        stepper = Stepper(handle.backend, tokenizer, ids, mode=mode, max_new_tokens=5,
                          sampling=request.settings.sampling, stop_at_eos=False)
        for record in stepper:
            assert store.add(run_id, record)
    assert [t.mode for t in store.traces()] == ["cached", "recompute"]
    cached, recompute = store.trace("cached"), store.trace("recompute")
    assert cached is not None and recompute is not None
    p = cached.info.prompt_len
    assert cached.tokens_fed == [p, 1, 1, 1, 1]
    assert recompute.tokens_fed == [p + s for s in range(5)]
    assert cached.generated_text == recompute.generated_text  # greedy: same tokens
    assert not store.add(1, recompute.records[0])  # run 1 is not recompute's live run


def _begin(store: RunStore, handle, run_id: int, mode: str, prompt: str = "안녕하세요"):  # type: ignore[no-untyped-def]
    request = RunRequest(prompt, True, RunSettings(mode, SamplingSettings.greedy_settings(), 5))
    ids = encode_prompt(handle, request)
    return store.begin(run_info(run_id, handle, request, ids)), ids, request


def test_headline_totals_and_the_runs_each_chart_is_about(tiny_model, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """What the charts' export headlines and the presenter's headline panel both read."""
    handle = wrap_model(tiny_model, tokenizer, "tiny", ModelChoice())
    store = RunStore()
    assert store.stepped_traces() == [] and store.cache_trace is None
    cached, ids, request = _begin(store, handle, 1, "cached")
    assert store.stepped_traces() == [] and store.cache_trace is cached  # begun, no step yet
    assert cached.tokens_fed_total == 0 and cached.formula_total == 0
    stepper = Stepper(handle.backend, tokenizer, ids, mode="cached", max_new_tokens=3,
                      sampling=request.settings.sampling, stop_at_eos=False)
    for record in stepper:
        store.add(1, record)
    p = cached.info.prompt_len
    assert cached.tokens_fed_total == p + 2 == cached.formula_total  # P + (N − 1), N = 3
    assert cached.formula_cumulative == [p, p + 1, p + 2]
    recompute, ids, request = _begin(store, handle, 2, "recompute")
    assert store.stepped_traces() == [cached]  # the recompute run has no step yet
    assert store.cache_trace is cached  # recompute keeps no cache: the cached run is shown
    for record in Stepper(handle.backend, tokenizer, ids, mode="recompute", max_new_tokens=3,
                          sampling=request.settings.sampling, stop_at_eos=False):
        store.add(2, record)
    assert store.stepped_traces() == [cached, recompute]
    assert recompute.tokens_fed_total == 3 * p + 3 == recompute.formula_total  # P·N + N(N−1)/2
    alone = RunStore()
    only_recompute, _, _ = _begin(alone, handle, 3, "recompute")
    assert alone.cache_trace is only_recompute  # no cached run: the current one


def test_parse_temperatures() -> None:
    assert parse_temperatures("") == ()
    assert parse_temperatures("0.5, 1.0 1.5") == (0.5, 1.0, 1.5)
    for bad in ("hot", "-1"):
        try:
            parse_temperatures(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} should be refused")


def test_chat_template_default_follows_the_model_name(tokenizer) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.files.loaded import looks_like_chat

    assert looks_like_chat("ko-chat", tokenizer)
    assert looks_like_chat("full_sft_512", tokenizer)
    assert not looks_like_chat("ko-base", tokenizer)
    assert not looks_like_chat("pretrain_512", tokenizer)
