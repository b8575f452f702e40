"""The scale labs' experiments: paged blocks, a quantized cache, and the projector's check.

Owns three generators in the style of ``experiments.py`` (they yield
`Progress` and end with a frozen result):

- `paged_memory`: one repeated-sampling run (30 rows that finish at different
  lengths) three times with one seed: a preallocated static cache (every row
  to P + N), the dynamic cache and the paged cache; the bytes each holds per
  step, measured from its tensors, and the paged cache's block table per step.
  A greedy run checks that paged chooses the dynamic cache's tokens.
- `quantized_cache`: greedy with the model's own cache as the reference, then
  fp16, int8 and int4 caches: stored bytes (scales included) against the
  layout's formula, max |Δlogit| per step, the first divergent step, and
  whether the answer changed.
- `projection_check`: the projector's bytes for the loaded model against the
  bytes a real run of that length holds.

It never imports Qt; ``kvstudio.ui.labs`` and the CLI draw what it returns.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import cast

import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.paged import BlockRef, PagedKVCache
from kvstudio.engine.cache.quantized import QUANT_BITS, formula_bytes_per_token
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.experiments import Progress
from kvstudio.labs.scale import (
    ModelGeometry,
    ProjectionRow,
    context_points,
    geometry_of_backend,
    variants,
)

BlockTable = tuple[tuple[BlockRef, ...], ...]


# ---- paged -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PagedStep:
    """The paged cache after one step."""

    step: int
    table: BlockTable  # per row, its blocks in order
    held_bytes: int  # blocks the rows hold
    used_bytes: int  # slots holding tokens
    pool_bytes: int  # pool tensors' capacity


@dataclass(frozen=True)
class PagedLabResult:
    prompt_tokens: int  # P
    new_tokens: int  # N, the budget
    samples: int  # rows
    block_size: int  # b
    bytes_per_token: int  # 2·L·H_kv·d·bytes, from the backend
    block_bytes: int  # one block, every layer, K and V (measured from the pool)
    static_bytes: tuple[int, ...]  # per step: preallocated to P + N per row
    dynamic_bytes: tuple[int, ...]  # per step
    paged_steps: tuple[PagedStep, ...]
    row_lengths: tuple[int, ...]  # tokens each row stored at the end (paged)
    answer_lengths: tuple[int, ...]  # tokens each row generated (eos included)
    same_samples: bool  # the three runs drew the same tokens
    copies_on_write: int
    greedy_identical: bool  # paged vs dynamic, greedy, exactly N tokens
    greedy_tokens: int

    @property
    def paged_bytes(self) -> tuple[int, ...]:
        return tuple(s.held_bytes for s in self.paged_steps)

    @property
    def shared_prompt_blocks(self) -> int:
        return self.prompt_tokens // self.block_size

    @property
    def hand_count_blocks(self) -> int:
        """Full prompt blocks once, plus each row's own blocks: P//b + Σ (⌈len/b⌉ − P//b)."""
        b, shared = self.block_size, self.shared_prompt_blocks
        return shared + sum(-(-n // b) - shared for n in self.row_lengths)


def paged_memory(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    samples: int = 30,
    new_tokens: int = 48,
    block_size: int = 16,
    temperature: float = 1.0,
    top_p: float = 0.85,
    seed: int = 42,
    greedy_prompt: Sequence[int] | None = None,
    greedy_tokens: int = 32,
) -> Generator[Progress | PagedLabResult, None, None]:
    """Three caches for one sampling run (same seed), then a greedy paged-vs-dynamic check."""
    prompt = list(prompt_ids)
    P = len(prompt)
    settings = SamplingSettings(temperature=temperature, top_p=top_p, seed=seed)
    specs = {
        "static": CacheSpec("static", max_length=P + new_tokens),
        "dynamic": CacheSpec("dynamic"),
        "paged": CacheSpec("paged", block_size=block_size),
    }
    total = 3 * new_tokens + 2 * greedy_tokens
    done = 0
    series: dict[str, list[int]] = {}
    tokens: dict[str, list[list[int]]] = {}
    paged_steps: list[PagedStep] = []
    paged_cache: PagedKVCache | None = None
    for kind, spec in specs.items():
        stepper = Stepper(
            backend,
            tokenizer,
            prompt,
            sampling=settings,
            max_new_tokens=new_tokens,
            cache=spec,
            batch_size=samples,
            top_n=0,
        )
        series[kind] = []
        for record in stepper:
            series[kind].append(record.cache_allocated_bytes)
            if kind == "paged":
                cache = cast(PagedKVCache, stepper.cache)  # the paged spec makes a paged cache
                paged_cache = cache
                paged_steps.append(
                    PagedStep(
                        record.step,
                        cache.block_table(),
                        cache.nbytes,
                        cache.used_nbytes,
                        cache.pool_nbytes,
                    )
                )
            done += 1
            yield Progress("paged", kind, done, total, record)
        done += new_tokens - stepper.step_index  # a run that ended early
        tokens[kind] = stepper.generated_ids
    assert paged_cache is not None
    k_bytes, v_bytes = paged_cache.block_nbytes()

    greedy = SamplingSettings.greedy_settings()
    greedy_ids: list[list[int]] = []
    for spec in (CacheSpec("dynamic"), CacheSpec("paged", block_size=block_size)):
        stepper = Stepper(
            backend,
            tokenizer,
            list(greedy_prompt) if greedy_prompt is not None else prompt,
            sampling=greedy,
            max_new_tokens=greedy_tokens,
            cache=spec,
            stop_at_eos=False,
            top_n=0,
        )
        for record in stepper:
            done += 1
            yield Progress("paged", "greedy", done, total, record)
        greedy_ids.append(stepper.generated_ids[0])

    per_token = formulas.bytes_per_token(
        backend.num_layers, backend.num_kv_heads, backend.head_dim, backend.dtype_bytes
    )
    yield PagedLabResult(
        prompt_tokens=P,
        new_tokens=new_tokens,
        samples=samples,
        block_size=block_size,
        bytes_per_token=per_token,
        block_bytes=(k_bytes + v_bytes) * backend.num_layers,
        static_bytes=tuple(series["static"]),
        dynamic_bytes=tuple(series["dynamic"]),
        paged_steps=tuple(paged_steps),
        row_lengths=tuple(paged_cache.lengths),
        answer_lengths=tuple(len(row) for row in tokens["paged"]),
        same_samples=tokens["static"] == tokens["dynamic"] == tokens["paged"],
        copies_on_write=paged_cache.copies_on_write,
        greedy_identical=greedy_ids[0] == greedy_ids[1],
        greedy_tokens=greedy_tokens,
    )


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
    greedy = SamplingSettings.greedy_settings()
    total = (1 + len(kinds)) * new_tokens
    done = 0
    L, G, d = backend.num_layers, backend.num_kv_heads, backend.head_dim
    reference_logits: list[torch.Tensor] = []
    reference_ids: tuple[int, ...] = ()
    runs: list[QuantRun] = []
    reference: QuantRun | None = None
    for kind in ("reference", *kinds):
        spec = CacheSpec("dynamic") if kind == "reference" else CacheSpec(kind)  # type: ignore[arg-type]
        stepper = Stepper(
            backend,
            tokenizer,
            list(prompt_ids),
            sampling=greedy,
            max_new_tokens=new_tokens,
            cache=spec,
            stop_at_eos=False,
            top_n=0,
        )
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
            per_token = formulas.bytes_per_token(L, G, d, backend.dtype_bytes)
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
            text=stepper.text(0),
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


# ---- the projector's check -------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectionCheck:
    geometry: ModelGeometry
    context: int  # tokens the cache holds
    batch: int
    projected_bytes: int
    measured_bytes: int  # from the cache tensors of a real run

    @property
    def equal(self) -> bool:
        return self.projected_bytes == self.measured_bytes


def projection_check(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    batch: int = 1,
    new_tokens: int = 8,
) -> Generator[Progress | ProjectionCheck, None, None]:
    """Run P + N tokens on `batch` rows; the cache then holds P + N − 1 tokens per row."""
    geometry = geometry_of_backend(backend)
    stepper = Stepper(
        backend,
        tokenizer,
        list(prompt_ids),
        sampling=SamplingSettings.greedy_settings(),
        max_new_tokens=new_tokens,
        batch_size=batch,
        stop_at_eos=False,
        top_n=0,
    )
    for record in stepper:
        yield Progress("projector", "run", record.step + 1, new_tokens, record)
    last = stepper.records[-1]
    context = len(prompt_ids) + new_tokens - 1
    yield ProjectionCheck(
        geometry=geometry,
        context=context,
        batch=batch,
        projected_bytes=geometry.cache_bytes(context, batch, bits=backend.dtype_bytes * 8),
        measured_bytes=last.cache_allocated_bytes,
    )


# ---- the projector lab ---------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectorResult:
    geometry: ModelGeometry
    context: int
    batch: int
    bits: int
    rows: tuple[ProjectionRow, ...]  # as configured, then one change at a time
    contexts: tuple[int, ...]  # chart x
    cache_bytes: tuple[int, ...]  # chart y, as configured
    cache_bytes_8bit: tuple[int, ...]  # chart y, the same with an 8-bit cache
    check: ProjectionCheck | None  # the loaded model: projection vs a real run


def projector(
    geometry: ModelGeometry,
    *,
    context: int,
    batch: int,
    bits: int = 16,
    backend: LanguageModel | None = None,
    tokenizer: TextTokenizer | None = None,
    check_prompt: Sequence[int] | None = None,
) -> Generator[Progress | ProjectionCheck | ProjectorResult, None, None]:
    """The projection for `geometry`; with a backend, also `projection_check` on it."""
    check: ProjectionCheck | None = None
    if backend is not None and tokenizer is not None and check_prompt is not None:
        for item in projection_check(
            backend, tokenizer, check_prompt, batch=min(batch, 8), new_tokens=8
        ):
            if isinstance(item, ProjectionCheck):
                check = item
            yield item
    points = context_points(context)
    yield ProjectorResult(
        geometry=geometry,
        context=context,
        batch=batch,
        bits=bits,
        rows=tuple(variants(geometry, context, batch, bits)),
        contexts=tuple(points),
        cache_bytes=tuple(geometry.cache_bytes(c, batch, bits) for c in points),
        cache_bytes_8bit=tuple(geometry.cache_bytes(c, batch, 8) for c in points),
        check=check,
    )
