"""A saved run's logits row is vocabulary-sized, and a run file is parsed once.

A 2,000,000-entry `last_logits` was read and checked entry by entry (9 s on the
window's thread) though no vocabulary KV Studio steps comes near it; a
30,000-step file was parsed twice (0.6 s of JSON each time).
"""

from __future__ import annotations

import json

import pytest

from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import Candidate, SamplingSettings, StepRecord
from kvstudio.files import runfile
from kvstudio.files.runfile import ModelFacts, SavedRun, dumps_runs, loads_run_file

QWEN3_ROWS = 151_936  # the largest embedding KV Studio steps
PAST_ANY_VOCABULARY = (1 << 18) + 1


def _record(step: int, logits: tuple[float, ...] | None = None) -> StepRecord:
    known = 3 + step
    return StepRecord(
        step=step, phase="prefill" if step == 0 else "decode", mode="cached",
        token_ids=(5,), token_texts=("가",), tokens_fed=3 if step == 0 else 1,
        elapsed_s=0.001, cache_layer_bytes=((64 * known, 64 * known),) * 2,
        cache_allocated_bytes=256 * known, cache_used_bytes=256 * known, cache_length=known,
        attention_mask_shape=(1, known), survivors_top_k=(100,), survivors_top_p=(10,),
        chosen_probability=(0.5,), top_candidates=((Candidate(5, "가", 0.5),),),
        finished=(False,), last_logits=logits)


def _file(steps: int, logits: tuple[float, ...] | None = None) -> str:
    run = SavedRun(
        model_name="m", prompt="abc", prompt_ids=(1, 2, 3), mode="cached",
        sampling=SamplingSettings(), max_new_tokens=steps, cache=CacheSpec(),
        model=ModelFacts(2, 1, 32, 4),
        records=tuple(_record(i, logits if i == 0 else None) for i in range(steps)),
        prompt_pieces=("a", "b", "c"))
    return dumps_runs([run], keep_logits=logits is not None)


def test_a_logits_row_longer_than_any_vocabulary_is_refused() -> None:
    text = _file(2, (0.25,) * PAST_ANY_VOCABULARY)
    with pytest.raises(ValueError, match=r"last_logits holds 262,145 logits.*vocabulary"):
        loads_run_file(text, "big.kvrun.json")


def test_a_vocabulary_sized_logits_row_still_loads() -> None:
    loaded = loads_run_file(_file(2, (0.25,) * QWEN3_ROWS))
    first = loaded.runs[0].records[0].last_logits
    assert first is not None and len(first) == QWEN3_ROWS


def test_a_run_file_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _file(50)
    calls = []
    real = json.loads

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(runfile.json, "loads", counted)
    loaded = loads_run_file(text)
    assert len(loaded.runs[0].records) == 50
    assert len(calls) == 1
