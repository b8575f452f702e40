"""How many users fit: requests whose KV caches fit in a memory budget at once.

Owns `users_that_fit` (contiguous: ⌊budget ÷ (bytes per token · tokens)⌋; paged: whole
blocks), the measured cache size of the loaded model (`measure_cache_size`), the
budget table the serving lab and ``kvstudio serving --fit-budget`` print (`fit_budget`,
for the loaded model, a published geometry and the projector's GPU sizes), the
count checked against the continuous scheduler's own admission (`admission_check`),
and both as ``--fit-budget`` asks for them (`fit_report`).
Why batching pays (the decode step timed per batch size) is ``batching``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kvstudio.engine import decode
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import lab_prompt_ids
from kvstudio.labs.scale import GIB, GPU_MEMORY_GIB, ModelGeometry
from kvstudio.labs.scale import preset as scale_preset
from kvstudio.labs.serving.batching import model_module

MAX_CHECKED_USERS = 64  # the admission check prefills every admitted request for real


# ---- how many users fit ------------------------------------------------------------------
def users_that_fit(
    bytes_per_token: int, request_tokens: int, budget_bytes: int, block_size: int | None = None
) -> int:
    """Requests of `request_tokens` tokens whose caches fit in `budget_bytes` at once.

    Contiguous (`block_size` None): ⌊budget ÷ (bytes per token · tokens)⌋. Paged:
    ⌊budget ÷ (b · bytes per token)⌋ blocks, ⌈tokens ÷ b⌉ blocks a request.
    """
    if bytes_per_token < 1 or request_tokens < 1:
        raise ValueError("users_that_fit needs positive bytes per token and request length.")
    if budget_bytes < 0:
        raise ValueError(f"A memory budget cannot be negative, got {budget_bytes:,} bytes.")
    if block_size is None:
        return budget_bytes // (bytes_per_token * request_tokens)
    if block_size < 1:
        raise ValueError(f"A block holds at least 1 token, got {block_size}.")
    return blocks_that_fit(budget_bytes, bytes_per_token * block_size) // blocks_per_request(
        request_tokens, block_size)


def blocks_that_fit(budget_bytes: int, block_bytes: int) -> int:
    """⌊budget ÷ one block's bytes⌋."""
    return budget_bytes // block_bytes


def blocks_per_request(request_tokens: int, block_size: int) -> int:
    """⌈tokens ÷ b⌉: only a request's last block can have empty slots."""
    return -(-request_tokens // block_size)


@dataclass(frozen=True)
class MeasuredCacheSize:
    """The cache's own bytes, read from a real prefill's tensors."""

    tokens: int  # prefilled
    dense_bytes: int  # a dynamic cache's nbytes after `tokens`
    block_size: int  # b
    paged_bytes: int  # a paged cache's nbytes after `tokens` (whole blocks)
    blocks: int  # blocks the paged cache holds

    @property
    def bytes_per_token(self) -> int:
        return self.dense_bytes // self.tokens

    @property
    def block_bytes(self) -> int:
        return self.paged_bytes // self.blocks


def measure_cache_size(
    backend: LanguageModel, tokenizer: TextTokenizer, block_size: int = 16,
    tokens: int | None = None,
) -> MeasuredCacheSize:
    """Prefill `tokens` (default: two blocks) into a dynamic and a paged cache; read their bytes.

    A transformers model keeps its own (dense) cache: its block bytes are b tokens' worth.
    """
    tokens = tokens if tokens is not None else 2 * block_size
    ids = torch.tensor([lab_prompt_ids(tokenizer, tokens)], device=backend.device)  # (1, T)
    with torch.inference_mode():
        dense = backend.new_cache(CacheSpec(), 1)
        decode.feed(backend, ids, dense)  # the prefill fills the cache
        try:
            paged = backend.new_cache(CacheSpec(kind="paged", block_size=block_size), 1)
        except ValueError:  # a transformers model: no paged pool of ours
            blocks = blocks_per_request(tokens, block_size)
            per_token = int(dense.nbytes) // tokens
            return MeasuredCacheSize(tokens, int(dense.nbytes), block_size,
                                     blocks * block_size * per_token, blocks)
        decode.feed(backend, ids, paged)
    blocks = int(getattr(paged, "live_blocks", blocks_per_request(tokens, block_size)))
    return MeasuredCacheSize(tokens, int(dense.nbytes), block_size, int(paged.nbytes), blocks)


@dataclass(frozen=True)
class BudgetRow:
    """One memory budget and the requests of the given length it holds."""

    label: str  # "24 GiB GPU", "budget 1,000 blocks", …
    memory_bytes: int  # the device's memory (0 when the budget was given directly)
    weight_bytes: int  # the model's weights, taken off the memory first
    budget_bytes: int  # left for the cache
    requests_dense: int  # contiguous caches of exactly the request's length
    requests_paged: int  # paged, whole blocks


@dataclass(frozen=True)
class FitResult:
    model_label: str
    request_tokens: int  # prompt + answer tokens of each request
    bytes_per_token: int  # measured (or the preset's formula)
    block_size: int
    block_bytes: int
    measured: bool  # True: read from the loaded model's cache tensors; False: a preset
    rows: tuple[BudgetRow, ...]


def budget_row(label: str, memory: int, weights: int, bytes_per_token: int,
               request_tokens: int, block_size: int, budget: int | None = None) -> BudgetRow:
    """`budget` None: the memory less the weights (nothing left: 0)."""
    budget = max(0, memory - weights) if budget is None else budget
    return BudgetRow(
        label=label,
        memory_bytes=memory,
        weight_bytes=weights,
        budget_bytes=budget,
        requests_dense=users_that_fit(bytes_per_token, request_tokens, budget),
        requests_paged=users_that_fit(bytes_per_token, request_tokens, budget, block_size),
    )


def fit_budget(
    backend: LanguageModel | None,
    tokenizer: TextTokenizer | None,
    *,
    request_tokens: int,
    block_size: int = 16,
    budget_bytes: int | None = None,
    gpu_gib: Sequence[int] = GPU_MEMORY_GIB,
    geometry: ModelGeometry | None = None,
) -> FitResult:
    """Requests of `request_tokens` held at once on each GPU size (weights taken off first),
    and in `budget_bytes` when given (the cache's budget itself, nothing taken off).

    With a backend, bytes per token and block bytes are measured from its caches and
    the weights counted from its parameters; with `geometry` (a projector preset)
    they come from the preset's formula and published parameter count.
    """
    if request_tokens < 1:
        raise ValueError(f"A request holds at least one token, got {request_tokens}.")
    if geometry is not None:
        label, per_token = geometry.name, geometry.bytes_per_token()
        block_bytes, weights, measured = per_token * block_size, geometry.weights_nbytes, False
    elif backend is not None and tokenizer is not None:
        size = measure_cache_size(backend, tokenizer, block_size)
        label, per_token, block_bytes = backend.name, size.bytes_per_token, size.block_bytes
        weights = sum(p.numel() * p.element_size() for p in model_module(backend).parameters())
        measured = True
    else:
        raise ValueError("Load a model or choose a preset to count how many users fit.")
    rows = []
    if budget_bytes is not None:
        rows.append(budget_row(f"budget {budget_bytes:,} B", 0, 0, per_token, request_tokens,
                               block_size, budget=budget_bytes))
    for gib in gpu_gib:
        rows.append(budget_row(f"{gib} GiB GPU", gib * GIB, weights, per_token,
                               request_tokens, block_size))
    return FitResult(label, request_tokens, per_token, block_size, block_bytes, measured,
                     tuple(rows))


# ---- the count checked against the continuous scheduler's own admission ----------------
@dataclass(frozen=True)
class AdmissionCheck:
    """`users_that_fit` beside what the continuous scheduler admits on the loaded model."""

    request_tokens: int  # L: each request's prompt (its K/V after the prefill step)
    block_size: int  # b
    budget_bytes: int  # the memory given to the cache
    block_bytes: int  # one block, every layer, K and V (measured from a paged cache)
    budget_blocks: int  # ⌊budget ÷ block bytes⌋: the scheduler's pool
    formula: int  # `users_that_fit(bytes per token, L, budget, b)`
    offered: int  # requests arriving together at step 0
    admitted: int  # requests the scheduler admitted in its first step
    blocks_used: int  # blocks in use after that step

    @property
    def equal(self) -> bool:
        """The formula's count is the scheduler's, and so are the blocks they hold."""
        return (self.formula == self.admitted
                and self.blocks_used == self.admitted * blocks_per_request(
                    self.request_tokens, self.block_size))


def admission_check(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    request_tokens: int,
    budget_bytes: int,
    block_size: int = 16,
    offered: int | None = None,
) -> AdmissionCheck:
    """`offered` requests of `request_tokens` prompt tokens (default: two more than the
    formula's count) arrive together; the continuous scheduler, with a pool of
    ⌊budget ÷ block bytes⌋ blocks and a batch wide enough for all, admits as many as
    the pool holds and the rest wait. After that first step (the prefills) each admitted
    request holds exactly its L tokens: ⌈L ÷ b⌉ blocks. Each may generate two tokens, so
    none has finished and given its blocks back yet.
    """
    # (Imports renamed only: the run's loop is `LLMEngine`, a request as asked `RequestSpec`.)
    from kvstudio.engine.serving.engine import LLMEngine
    from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig

    size = measure_cache_size(backend, tokenizer, block_size)
    budget_blocks = blocks_that_fit(budget_bytes, size.block_bytes)
    per_request = blocks_per_request(request_tokens + 2, block_size)  # the scheduler's check
    if budget_blocks < per_request:
        raise ValueError(
            f"A budget of {budget_bytes:,} bytes is {budget_blocks:,} blocks of "
            f"{size.block_bytes:,} bytes; one request of {request_tokens:,} tokens needs "
            f"{per_request:,}. Give a larger budget or shorter requests."
        )
    formula = users_that_fit(size.bytes_per_token, request_tokens, budget_bytes, block_size)
    if formula > MAX_CHECKED_USERS:
        most = MAX_CHECKED_USERS * blocks_per_request(request_tokens, block_size) * size.block_bytes
        raise ValueError(
            f"The budget holds {formula:,} requests; the check prefills each for real, so it "
            f"runs up to {MAX_CHECKED_USERS}: give a smaller budget (at most "
            f"{most:,} bytes here).")
    offered = formula + 2 if offered is None else offered
    ids = tuple(lab_prompt_ids(tokenizer, request_tokens))
    requests = [RequestSpec(index=i, text=f"request {i}", prompt_ids=ids, arrival=0,
                        max_new_tokens=2) for i in range(offered)]
    config = SchedulerConfig(policy="continuous", max_batch=max(offered, 1),
                             block_size=block_size, block_budget=budget_blocks,
                             prefix_cache="none")
    with torch.inference_mode():
        first = next(iter(LLMEngine(backend, requests, config).steps()))
    return AdmissionCheck(
        request_tokens=request_tokens, block_size=block_size, budget_bytes=budget_bytes,
        block_bytes=size.block_bytes, budget_blocks=budget_blocks, formula=formula,
        offered=offered, admitted=len(first.admitted), blocks_used=first.blocks_used,
    )


def fit_report(
    model: LoadedModel | None,
    *,
    request_tokens: int,
    block_size: int = 16,
    budget_bytes: int | None = None,
    preset: str | None = None,
) -> tuple[FitResult, AdmissionCheck | None]:
    """`fit_budget` for `preset`'s geometry (else the loaded `model`'s), and with a model
    and `budget_bytes` the count checked against the scheduler (`admission_check`)."""
    backend, tokenizer = (None, None) if model is None else (model.backend, model.tokenizer)
    fit = fit_budget(backend, tokenizer, request_tokens=request_tokens, block_size=block_size,
                     budget_bytes=budget_bytes,
                     geometry=scale_preset(preset) if preset else None)
    if backend is None or tokenizer is None or budget_bytes is None:
        return fit, None
    return fit, admission_check(backend, tokenizer, request_tokens=request_tokens,
                                budget_bytes=budget_bytes, block_size=block_size)
