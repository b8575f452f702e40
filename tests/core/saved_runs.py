"""A saved run of any length, written as the window writes it, for the run-file tests.

Owns `run_file_text`: a one-run ``.kvrun.json`` of `steps` steps (a prefill of 3 tokens,
then one decode token each), optionally with a first-step logits row of any length, so a
test can make a file as large, or as malformed, as it needs without a model.
"""

from __future__ import annotations

from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import Candidate, SamplingSettings, StepRecord
from kvstudio.files.runfile import ModelFacts, SavedRun, dumps_runs


def step_record(step: int, logits: tuple[float, ...] | None = None) -> StepRecord:
    """Step `step` of a one-row cached run on a 2-layer model (`logits`: its last_logits)."""
    known = 3 + step
    return StepRecord(
        step=step, phase="prefill" if step == 0 else "decode", mode="cached",
        token_ids=(5,), token_texts=("가",), tokens_fed=3 if step == 0 else 1,
        elapsed_s=0.001, cache_layer_bytes=((64 * known, 64 * known),) * 2,
        cache_allocated_bytes=256 * known, cache_used_bytes=256 * known, cache_length=known,
        attention_mask_shape=(1, known), survivors_top_k=(100,), survivors_top_p=(10,),
        chosen_probability=(0.5,), top_candidates=((Candidate(5, "가", 0.5),),),
        finished=(False,), last_logits=logits)


def run_file_text(steps: int, logits: tuple[float, ...] | None = None,
                  model_name: str = "m") -> str:
    """A run file of `steps` steps; `logits` (kept in the file) on the first step only."""
    run = SavedRun(
        model_name=model_name, prompt="abc", prompt_ids=(1, 2, 3), mode="cached",
        sampling=SamplingSettings(), max_new_tokens=steps, cache=CacheSpec(),
        model=ModelFacts(2, 1, 32, 4),
        records=tuple(step_record(i, logits if i == 0 else None) for i in range(steps)),
        prompt_pieces=("a", "b", "c"))
    return dumps_runs([run], keep_logits=logits is not None)
