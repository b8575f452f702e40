"""The paged lab: the bytes a static, a dynamic and a paged cache hold.

Owns `paged_memory`: one repeated-sampling run (30 rows that finish at
different lengths) three times with one seed: a preallocated static cache
(every row to P + N), the dynamic cache and the paged cache; the bytes each
holds per step, measured from its tensors, and the paged cache's block table
per step. A greedy run checks that paged chooses the dynamic cache's tokens:
exact by construction, on any hardware, since attention gets each row's keys
gathered from its blocks into the (B, S, G, d) tensor a dynamic cache holds, so
the forward makes the same calls on the same shapes and numbers
(``tests/core/test_scale_caches.py`` compares the logits bit for bit).
A generator that yields `Progress` and ends with a `PagedLabResult`; it never
imports Qt.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.paged import BlockRef, PagedKVCache
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import (
    Progress,
    check_fits,
    check_length,
    greedy_stepper,
    lab_prompt_ids,
    prompt_ids,
)
from kvstudio.labs.course import COURSE

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
    settings: SamplingSettings = field(default_factory=lambda: COURSE.sampling)  # the draws'

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
    samples: int = COURSE.samples,
    new_tokens: int = 48,
    block_size: int = 16,
    temperature: float = COURSE.temperature,
    top_p: float = COURSE.top_p,
    seed: int = COURSE.seed,
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

    greedy_ids: list[list[int]] = []
    for spec in (CacheSpec("dynamic"), CacheSpec("paged", block_size=block_size)):
        stepper = greedy_stepper(
            backend, tokenizer, prompt if greedy_prompt is None else greedy_prompt,
            greedy_tokens, cache=spec)
        for record in stepper:
            done += 1
            yield Progress("paged", "greedy", done, total, record)
        greedy_ids.append(stepper.generated_ids[0])

    per_token = formulas.model_bytes_per_token(backend)
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
        settings=settings,
    )


def question_ids(model: LoadedModel) -> list[int]:
    """The sampling run's prompt: the course's question as `model` sees it."""
    return prompt_ids(model, COURSE.question)


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | PagedLabResult]:
    """The lab as every front runs it: the course's question sampled `samples` times with
    the three caches, then a greedy check, both ways: on the lab text at the course's P
    and N (as far as the model's positions allow), or on a front's own prompt and N, the
    options ``greedy_prompt_ids`` and ``greedy_tokens`` (``kvstudio compare --cache paged``
    passes its prompt and N). Its checks raise their ValueError here, before any work."""
    ids = question_ids(model)
    n, samples = params["new_tokens"], params["samples"]
    check_length(model, len(ids) + n)
    check_fits(model.backend, samples, len(ids), n, "cached",
               CacheSpec("paged", block_size=params["block_size"]))
    greedy_n = params.get("greedy_tokens") or min(COURSE.new_tokens, model.max_positions // 4)
    greedy = params.get("greedy_prompt_ids")
    if greedy is None:  # the lab text at the course's P, if it fits with N
        greedy = lab_prompt_ids(
            model.tokenizer, max(1, min(COURSE.prompt_tokens, model.max_positions - greedy_n)))
    if not greedy:
        raise ValueError("The greedy check's prompt is empty; give it at least one token.")
    check_length(model, len(greedy) + greedy_n, "The greedy check's P + N",
                 "; use a shorter prompt or fewer new tokens")
    return paged_memory(
        model.backend,
        model.tokenizer,
        ids,
        samples=samples,
        new_tokens=n,
        block_size=params["block_size"],
        greedy_prompt=greedy,
        greedy_tokens=greedy_n,
    )
