"""The quantized lab: fp16, int8 and int4 caches against the model's own cache.

Owns `quantized_cache`: greedy with the model's own cache as the reference,
then fp16, int8 and int4 caches: stored bytes (scales included) against the
layout's formula, max |Δlogit| per step, the first divergent step, and
whether the answer changed. A generator that yields `Progress` and ends with a
`QuantLabResult`; it never imports Qt.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.quantized import QUANT_BITS, formula_bytes_per_token
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, check_length, greedy_stepper, lab_prompt_ids


# ---- quantized -------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantRun:
    kind: str  # "reference", "fp16", "int8", "int4"
    bits: int  # bits per stored number (reference: the model's)
    token_ids: tuple[int, ...]
    text: str
    cache_bytes: int  # measured from the stored tensors (scales included) at the end
    formula_bytes: int  # tokens × the layout's bytes per token
    cache_tokens: int
    max_abs_logit_diff: tuple[float, ...]  # per step vs the reference, while contexts agree
    first_divergent_step: int | None  # first step whose greedy token differs

    @property
    def answer_changed(self) -> bool:
        return self.first_divergent_step is not None

    @property
    def max_logit_diff(self) -> float:
        return max(self.max_abs_logit_diff, default=0.0)


@dataclass(frozen=True)
class QuantLabResult:
    prompt_tokens: int
    new_tokens: int
    reference: QuantRun
    runs: tuple[QuantRun, ...]

    def run(self, kind: str) -> QuantRun:
        return next(r for r in self.runs if r.kind == kind)


def quantized_cache(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    new_tokens: int = 64,
    kinds: Sequence[str] = ("fp16", "int8", "int4"),
) -> Generator[Progress | QuantLabResult, None, None]:
    """Greedy, exactly `new_tokens` tokens, with the model's cache and each quantized kind."""
    for kind in kinds:
        if kind not in QUANT_BITS:
            raise ValueError(f"Unknown quantized cache {kind!r}; choose fp16, int8 or int4.")
    total = (1 + len(kinds)) * new_tokens
    done = 0
    L, G, d = backend.num_layers, backend.num_kv_heads, backend.head_dim
    reference_logits: list[torch.Tensor] = []
    reference_ids: tuple[int, ...] = ()
    runs: list[QuantRun] = []
    reference: QuantRun | None = None
    for kind in ("reference", *kinds):
        spec = CacheSpec("dynamic") if kind == "reference" else CacheSpec(kind)  # type: ignore[arg-type]
        stepper = greedy_stepper(backend, tokenizer, prompt_ids, new_tokens, cache=spec)
        logits: list[torch.Tensor] = []
        for record in stepper:
            if stepper.last_logits is not None:
                logits.append(stepper.last_logits[0].float().clone())  # (V,)
            done += 1
            yield Progress("quantized", kind, done, total, record)
        ids = tuple(stepper.generated_ids[0])
        last = stepper.records[-1]
        tokens = last.cache_length
        if kind == "reference":
            reference_logits, reference_ids = logits, ids
            per_token = formulas.model_bytes_per_token(backend)
            bits = backend.dtype_bytes * 8
            divergent = None
            diffs: tuple[float, ...] = tuple(0.0 for _ in logits)
        else:
            per_token = formula_bytes_per_token(kind, L, G, d)
            bits = QUANT_BITS[kind]
            divergent = next(
                (i for i, (a, b) in enumerate(zip(ids, reference_ids, strict=False)) if a != b),
                None,
            )
            # Step s sees the same context as the reference while tokens 0 … s−1 agree.
            valid = len(logits) if divergent is None else divergent + 1
            diffs = tuple(
                float((a - b).abs().max())
                for a, b in zip(logits[:valid], reference_logits[:valid], strict=False)
            )
        run = QuantRun(
            kind=kind,
            bits=bits,
            token_ids=ids,
            text=tokenizer.plain_text(stepper.generated_ids[0]),
            cache_bytes=last.cache_allocated_bytes,
            formula_bytes=per_token * tokens,
            cache_tokens=tokens,
            max_abs_logit_diff=diffs,
            first_divergent_step=divergent,
        )
        if kind == "reference":
            reference = run
        else:
            runs.append(run)
    assert reference is not None
    yield QuantLabResult(len(prompt_ids), new_tokens, reference, tuple(runs))


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | QuantLabResult]:
    """The lab as every front runs it: P lab-text tokens, or a front's own prompt (the
    option ``prompt_ids``: ``kvstudio compare --cache fp16|int8|int4`` passes its prompt,
    `prompt_tokens` then unused), then N new ones with each cache."""
    given = params.get("prompt_ids")
    p, n = (params["prompt_tokens"] if given is None else len(given)), params["new_tokens"]
    if p < 1:
        raise ValueError("The prompt is empty; give it at least one token.")
    check_length(model, p + n, advice="; use a shorter prompt or fewer new tokens")
    ids = lab_prompt_ids(model.tokenizer, p) if given is None else list(given)
    return quantized_cache(model.backend, model.tokenizer, ids, new_tokens=n)
