"""The cache-kinds lab: dynamic, static and sliding-window caches on one prompt.

Owns `cache_kinds`: one run per cache kind (tokens, bytes held, time), ending
with a `CacheKindsResult`. A generator that yields `Progress`; it never
imports Qt.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CACHE_KINDS, CacheKind, CacheSpec
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, check_length, greedy_stepper, lab_prompt_ids


# ---- cache kinds ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CacheKindRun:
    """One cache kind's greedy run: memory and mask per step."""

    kind: CacheKind
    spec: CacheSpec
    allocated_bytes: tuple[int, ...]  # per step
    used_bytes: tuple[int, ...]  # per step
    cache_length: tuple[int, ...]  # tokens stored after each step
    mask_shapes: tuple[tuple[int, int], ...]  # (batch, keys seen) per step
    token_ids: tuple[int, ...]
    text: str

    @property
    def newest_keys(self) -> tuple[int, ...]:
        """Keys the step's newest query attends to, per step: the mask's width, but at most W
        with a sliding window (at the prefill the mask is P wide while the last prompt token
        sees only its W nearest keys, itself included)."""
        widths = tuple(shape[1] for shape in self.mask_shapes)
        if self.kind != "sliding":
            return widths
        return tuple(min(width, self.spec.window) for width in widths)


@dataclass(frozen=True)
class CacheKindsResult:
    prompt_tokens: int
    new_tokens: int
    window: int
    runs: tuple[CacheKindRun, ...]  # dynamic, static, sliding

    def run(self, kind: CacheKind) -> CacheKindRun:
        return next(r for r in self.runs if r.kind == kind)

    @property
    def window_covers_context(self) -> bool:
        """Every query sees the whole context: W ≥ P + N − 1 keys (W counts the query itself)."""
        return self.window >= self.prompt_tokens + self.new_tokens - 1

    def identical_to_dynamic(self, kind: CacheKind) -> bool:
        return self.run(kind).token_ids == self.run("dynamic").token_ids

    def first_divergent_step(self, kind: CacheKind) -> int | None:
        a, b = self.run(kind).token_ids, self.run("dynamic").token_ids
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)


def cache_kinds(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    new_tokens: int = 32,
    window: int = 64,
    static_length: int | None = None,
) -> Generator[Progress | CacheKindsResult, None, None]:
    """Greedy, cached, the same prompt with each cache kind; exactly `new_tokens` tokens."""
    needed = len(prompt_ids) + new_tokens
    specs = {
        "dynamic": CacheSpec("dynamic"),
        "static": CacheSpec("static", max_length=static_length or needed),
        "sliding": CacheSpec("sliding", window=window),
    }
    total = len(CACHE_KINDS) * new_tokens
    done = 0
    runs = []
    for kind in CACHE_KINDS:
        stepper = greedy_stepper(backend, tokenizer, prompt_ids, new_tokens, cache=specs[kind])
        for record in stepper:
            done += 1
            yield Progress("cache-kinds", kind, done, total, record)
        recs = stepper.records
        runs.append(
            CacheKindRun(
                kind=kind,
                spec=specs[kind],
                allocated_bytes=tuple(r.cache_allocated_bytes for r in recs),
                used_bytes=tuple(r.cache_used_bytes for r in recs),
                cache_length=tuple(r.cache_length for r in recs),
                mask_shapes=tuple(r.attention_mask_shape for r in recs),
                token_ids=tuple(stepper.generated_ids[0]),
                text=tokenizer.plain_text(stepper.generated_ids[0]),
            )
        )
    yield CacheKindsResult(len(prompt_ids), new_tokens, window, tuple(runs))


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | CacheKindsResult]:
    """The lab as every front runs it: P lab-text tokens, N new ones, window W."""
    p, n = params["prompt_tokens"], params["new_tokens"]
    check_length(model, p + n)
    ids = lab_prompt_ids(model.tokenizer, p)
    return cache_kinds(model.backend, model.tokenizer, ids, new_tokens=n,
                       window=params["window"])
