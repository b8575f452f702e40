"""Why batching pays, and how many users fit: the serving lab's two arithmetic-backed views.

Owns two parts of the serving lab (``labs/serving.py`` runs the requests):

- `batch_sweep`: one decode step of the loaded model timed at several batch sizes
  (median of k interleaved rounds with its range), beside what that step must read
  (the weights once, whatever the batch, plus every row's K/V, measured from the
  cache tensors) and compute (2 · parameters per token in a product, plus
  attention's 4 · L · H · d per key), their ratio (arithmetic intensity) and the
  machine's own copy bandwidth and matmul rate, so each point reads as bound by
  memory, by compute, or by overhead (far slower than both floors).
- `users_that_fit` / `fit_budget`: from the cache's own bytes per token (a real
  prefill's ``nbytes`` ÷ its tokens, a paged block's bytes from its pool) and a
  memory budget (bytes, blocks, or a GPU of the projector's sizes less the
  weights), the number of requests of a given length held at once.

Letters: B batch (rows), S keys each row's query reads, L layers, H query heads,
G K/V heads, d head_dim, b block size. Generators yield `Progress` and end with a
frozen result; nothing here imports Qt or prints.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import DEFAULT_REPEATS
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress, Spread, check_fits, lab_prompt_ids, spread
from kvstudio.labs.scale import GIB, GPU_MEMORY_GIB, ModelGeometry
from kvstudio.labs.serving.records import ServingResult

DEFAULT_BATCH_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)  # rows per decode step
DEFAULT_CONTEXT = 64  # prompt tokens each row holds before the timed step
MAX_BATCH = 1024  # a sweep point past this is a typo, not a lesson
# A step slower than this many times its memory and compute floors is bound by overhead:
# Python, kernel launches and small-kernel inefficiency, not by the bytes or the FLOPs.
OVERHEAD_FACTOR = 3.0
MAX_CHECKED_USERS = 64  # the admission check prefills every admitted request for real
# What the machine measurements move: a copy of this many bytes, a square matmul of this size.
COPY_BYTES = 64 * 1024**2
MATMUL_SIZE_CPU = 1024
MATMUL_SIZE_GPU = 4096

Bound = Literal["memory", "compute", "overhead"]


def _synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (a GPU runs ahead of the Python that timed it)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


# ---- what a decode step reads and computes, by arithmetic ------------------------------------
@dataclass(frozen=True)
class ModelWork:
    """The sizes a step's bytes and FLOPs follow from, read from the loaded model's tensors."""

    parameters: int  # every parameter (a tied table counted once)
    product_parameters: int  # those in a matrix product per token (an untied look-up left out)
    weight_bytes: int  # bytes of the product parameters: read once per step, whatever B
    layers: int  # L
    heads: int  # H, query heads (attention's FLOPs)
    kv_heads: int  # G (the cache's bytes)
    head_dim: int  # d
    dtype_bytes: int  # bytes per cached number

    def step_flops(self, batch: int, keys: int) -> int:
        """2 · B · product parameters + 4 · B · L · H · d · S (q·Kᵀ and weights·V)."""
        return 2 * batch * self.product_parameters + self.attention_flops(batch, keys)

    def attention_flops(self, batch: int, keys: int) -> int:
        """q·Kᵀ (2·H·d·S) and weights·V (2·H·d·S) per layer per row: 4 · B · L · H · d · S."""
        return 4 * batch * self.layers * self.heads * self.head_dim * keys

    def kv_bytes(self, batch: int, keys: int) -> int:
        """K and V of S positions for B rows: 2 · L · S · G · d · bytes · B (`formulas`)."""
        return formulas.cache_bytes(
            self.layers, keys, self.kv_heads, self.head_dim, self.dtype_bytes, batch
        )


def _module(backend: LanguageModel) -> torch.nn.Module:
    module = getattr(backend, "model", None)  # ours and transformers' both keep the module
    if not isinstance(module, torch.nn.Module):
        raise ValueError(
            f"The model {backend.name!r} has no torch module to count parameters from; "
            "load a MiniMind checkpoint or a transformers folder."
        )
    return module


def _looked_up_only(module: torch.nn.Module) -> torch.nn.Parameter | None:
    """The input embedding table when it is only a look-up (untied), else None.

    Tied, the same table is the LM head, a (C, V) product every token pays for.
    """
    get_in = getattr(module, "get_input_embeddings", None)
    if callable(get_in):  # transformers
        table = getattr(get_in(), "weight", None)
        get_out = getattr(module, "get_output_embeddings", None)
        head = getattr(get_out(), "weight", None) if callable(get_out) else None
        if isinstance(table, torch.nn.Parameter) and (head is None or head is not table):
            return table
        return None
    embed = getattr(getattr(module, "model", None), "embed_tokens", None)  # ours: None if tied
    weight = getattr(embed, "weight", None)
    return weight if isinstance(weight, torch.nn.Parameter) else None


def model_work(backend: LanguageModel) -> ModelWork:
    """`ModelWork` of the loaded model, counted from its parameters."""
    module = _module(backend)
    params = list(module.parameters())  # shared (tied) tensors appear once
    looked_up = _looked_up_only(module)
    product = [p for p in params if p is not looked_up]
    config = getattr(module, "config", None)
    get_text = getattr(config, "get_text_config", None)
    if callable(get_text):
        config = get_text()
    heads = int(getattr(config, "num_attention_heads", 0) or backend.num_kv_heads)
    return ModelWork(
        parameters=sum(p.numel() for p in params),
        product_parameters=sum(p.numel() for p in product),
        weight_bytes=sum(p.numel() * p.element_size() for p in product),
        layers=backend.num_layers,
        heads=heads,
        kv_heads=backend.num_kv_heads,
        head_dim=backend.head_dim,
        dtype_bytes=backend.dtype_bytes,
    )


# ---- the machine's own floors ------------------------------------------------------------
@dataclass(frozen=True)
class MachinePeaks:
    """What this device does at best, measured here: copy bandwidth and matmul rate."""

    device: str  # e.g. "cpu" or "cuda:0"
    bandwidth: Spread  # bytes moved per second by a large copy (read + write)
    flops: Spread  # FLOP per second of a square matmul in the model's dtype
    copy_bytes: int  # the copy's size (read and written)
    matmul_size: int  # n of the n × n × n product

    @property
    def balance(self) -> float:
        """FLOPs per byte where the two floors meet (the roofline's ridge), best rounds."""
        return self.flops.high / self.bandwidth.high


def machine_peaks(device: torch.device, dtype: torch.dtype, rounds: int) -> MachinePeaks:
    """Median of `rounds` rounds of a `COPY_BYTES` copy and an n × n matmul (untimed warm-up)."""
    numbers = COPY_BYTES // torch.finfo(dtype).bits * 8
    source = torch.ones(numbers, dtype=dtype, device=device)
    target = torch.empty_like(source)
    n = MATMUL_SIZE_GPU if device.type == "cuda" else MATMUL_SIZE_CPU
    a = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    b = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    moved = 2 * source.numel() * source.element_size()  # read once, written once
    products = 2 * n**3
    rates: list[float] = []
    speeds: list[float] = []
    with torch.inference_mode():
        target.copy_(source)
        torch.mm(a, b)
        for _ in range(rounds):
            _synchronize(device)
            start = time.perf_counter()
            target.copy_(source)
            _synchronize(device)
            copied = time.perf_counter()
            torch.mm(a, b)
            _synchronize(device)
            done = time.perf_counter()
            speeds.append(moved / max(copied - start, 1e-9))
            rates.append(products / max(done - copied, 1e-9))
    return MachinePeaks(str(device), spread(speeds), spread(rates), moved, n)


# ---- the sweep ----------------------------------------------------------------------------
@dataclass(frozen=True)
class BatchPoint:
    """One batch size: a decode step's time beside what it read and computed."""

    batch: int  # B rows, one new token each
    keys: int  # S: positions each row's query read (the cache's length after the step)
    step_seconds: Spread  # one decode step (forward + greedy choice), median of the rounds
    weight_bytes: int  # parameters in products, read once per step
    kv_bytes: int  # the cache's nbytes after the step, measured from its tensors
    flops: int  # `ModelWork.step_flops(B, S)`
    memory_seconds: float | None = None  # bytes read ÷ the machine's best copy bandwidth
    compute_seconds: float | None = None  # FLOPs ÷ the machine's best matmul rate

    @property
    def bytes_read(self) -> int:
        return self.weight_bytes + self.kv_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per byte read: low means the step waits on memory."""
        return self.flops / self.bytes_read

    @property
    def tokens_per_second(self) -> float:
        """B new tokens per median step."""
        return self.batch / self.step_seconds.median

    @property
    def ms_per_step(self) -> float:
        return 1000.0 * self.step_seconds.median

    @property
    def bound(self) -> Bound | None:
        """The larger floor names the bound; far above both, the step is overhead."""
        if self.memory_seconds is None or self.compute_seconds is None:
            return None
        floor = max(self.memory_seconds, self.compute_seconds)
        if self.step_seconds.median > OVERHEAD_FACTOR * floor:
            return "overhead"
        return "memory" if self.memory_seconds >= self.compute_seconds else "compute"


@dataclass(frozen=True)
class BatchSweepResult:
    model_label: str
    device: str
    dtype_bytes: int
    context: int  # prompt tokens per row before the timed step
    rounds: int  # k: each time is the median of k interleaved rounds
    work: ModelWork
    peaks: MachinePeaks | None  # None when the sweep was asked not to measure them
    points: tuple[BatchPoint, ...]

    @property
    def speedup(self) -> float:
        """Tokens per second at the largest batch ÷ at the smallest."""
        return self.points[-1].tokens_per_second / self.points[0].tokens_per_second


def check_batch_sizes(batch_sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(sorted(set(int(b) for b in batch_sizes)))
    if not sizes or sizes[0] < 1:
        raise ValueError("Give positive batch sizes to sweep, e.g. 1, 2, 4, 8, 16, 32.")
    if sizes[-1] > MAX_BATCH:
        raise ValueError(f"A batch of {sizes[-1]:,} rows is past {MAX_BATCH:,}; give smaller ones.")
    return sizes


def _timed_decode_step(
    backend: LanguageModel, prompt: torch.Tensor, batch: int
) -> tuple[float, int, int]:
    """Prefill B copies of `prompt`, one untimed decode step, then one timed.

    Returns (seconds, keys read, cache bytes after the step).
    """
    cache = backend.new_cache(CacheSpec(), batch)
    ids = prompt.expand(batch, -1)  # (B, P)
    logits = backend.forward_last(ids, cache, None)  # (B, V)
    token = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
    token = backend.forward_last(token, cache, None).argmax(dim=-1, keepdim=True)  # warm
    _synchronize(backend.device)
    start = time.perf_counter()
    token = backend.forward_last(token, cache, None).argmax(dim=-1, keepdim=True)  # (B, 1)
    _synchronize(backend.device)
    seconds = time.perf_counter() - start
    return seconds, int(cache.seq_length), int(cache.nbytes)


def batch_sweep(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    context: int = DEFAULT_CONTEXT,
    rounds: int = DEFAULT_REPEATS,
    measure_machine: bool = True,
    prompt_text: str | None = None,
) -> Generator[Progress | BatchSweepResult, None, None]:
    """Decode step time and throughput against batch size, with bytes and FLOPs beside them.

    Each round runs every batch size once (a fresh dynamic cache, a prefill of
    `context` tokens per row, one untimed and one timed decode step), the order
    reversed every other round so no size always runs first; a time is the
    median of `rounds` rounds with its range.
    """
    sizes = check_batch_sizes(batch_sizes)
    if rounds < 1:
        raise ValueError(f"Time at least one round, got {rounds}.")
    if context < 1:
        raise ValueError(f"Each row needs at least one prompt token, got {context}.")
    check_fits(backend, sizes[-1], context, 3, "cached", CacheSpec())
    work = model_work(backend)
    dtype = next(_module(backend).parameters()).dtype
    prompt = torch.tensor([lab_prompt_ids(tokenizer, context, prompt_text)],
                          device=backend.device)  # (1, P)
    total = rounds * len(sizes) + (1 if measure_machine else 0)
    done = 0
    peaks: MachinePeaks | None = None
    with torch.inference_mode():
        if measure_machine:
            peaks = machine_peaks(backend.device, dtype, rounds)
            done += 1
            yield Progress("serving-batch", "machine", done, total)
        for batch in sizes:  # untimed: the first forward at a shape pays for its set-up
            _timed_decode_step(backend, prompt, batch)
        seconds: dict[int, list[float]] = {b: [] for b in sizes}
        measured: dict[int, tuple[int, int]] = {}
        for round_index in range(rounds):
            order = sizes if round_index % 2 == 0 else tuple(reversed(sizes))
            for batch in order:
                step, keys, kv_bytes = _timed_decode_step(backend, prompt, batch)
                seconds[batch].append(step)
                measured[batch] = (keys, kv_bytes)
                done += 1
                yield Progress("serving-batch", f"B={batch}", done, total)
    points = []
    for batch in sizes:
        keys, kv_bytes = measured[batch]
        flops = work.step_flops(batch, keys)
        bytes_read = work.weight_bytes + kv_bytes
        points.append(BatchPoint(
            batch=batch,
            keys=keys,
            step_seconds=spread(seconds[batch]),
            weight_bytes=work.weight_bytes,
            kv_bytes=kv_bytes,
            flops=flops,
            # The floors use the machine's best round: what it can do, not what it did.
            memory_seconds=None if peaks is None else bytes_read / peaks.bandwidth.high,
            compute_seconds=None if peaks is None else flops / peaks.flops.high,
        ))
    yield BatchSweepResult(
        model_label=backend.name,
        device=str(backend.device),
        dtype_bytes=backend.dtype_bytes,
        context=context,
        rounds=rounds,
        work=work,
        peaks=peaks,
        points=tuple(points),
    )


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
        backend.forward_last(ids, dense, None)
        try:
            paged = backend.new_cache(CacheSpec(kind="paged", block_size=block_size), 1)
        except ValueError:  # a transformers model: no paged pool of ours
            blocks = blocks_per_request(tokens, block_size)
            per_token = int(dense.nbytes) // tokens
            return MeasuredCacheSize(tokens, int(dense.nbytes), block_size,
                                     blocks * block_size * per_token, blocks)
        backend.forward_last(ids, paged, None)
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
        weights, measured = _weights_nbytes(backend), True
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


def _weights_nbytes(backend: LanguageModel) -> int:
    return sum(p.numel() * p.element_size() for p in _module(backend).parameters())


def budget_blocks_for(users: int, request_tokens: int, block_size: int) -> int:
    """The smallest pool, in blocks, that holds `users` requests of `request_tokens`."""
    return users * blocks_per_request(request_tokens, block_size)


# ---- the window lab's one job: the requests' run, then the sweep ------------------------
def runs_requests(backend: LanguageModel) -> bool:
    """Whether the serving engine can run requests on `backend` (KV Studio's own model)."""
    from kvstudio.engine.serving.engine import serving_model

    try:
        serving_model(backend)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ServingLabResult:
    """What the window's serving lab ran: the schedulers over the requests, and the sweep."""

    serving: ServingResult | None  # None when only the sweep ran
    sweep: BatchSweepResult | None  # None when only the requests ran


def serving_lab(
    run: Iterator[object] | None, sweep: Iterator[object] | None
) -> Generator[object, None, None]:
    """Run `run` (``labs.serving``'s generator) then `sweep` (`batch_sweep`), passing their
    progress on; end with both results in one `ServingLabResult`."""
    if run is None and sweep is None:
        raise ValueError("Nothing to run: give requests, batch sizes or both.")
    serving: ServingResult | None = None
    swept: BatchSweepResult | None = None
    for item in run or ():
        if isinstance(item, ServingResult):
            serving = item
        else:
            yield item
    for item in sweep or ():
        if isinstance(item, BatchSweepResult):
            swept = item
        else:
            yield item
    if run is not None and serving is None:
        raise ValueError("The serving run ended without a result.")
    yield ServingLabResult(serving, swept)


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
    from kvstudio.engine.serving.records import Request, SchedulerConfig
    from kvstudio.engine.serving.schedulers import Scheduler

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
    requests = [Request(index=i, text=f"request {i}", prompt_ids=ids, arrival=0,
                        max_new_tokens=2) for i in range(offered)]
    config = SchedulerConfig(policy="continuous", max_batch=max(offered, 1),
                             block_size=block_size, block_budget=budget_blocks,
                             prefix_cache="none")
    with torch.inference_mode():
        first = next(iter(Scheduler(backend, requests, config).steps()))
    return AdmissionCheck(
        request_tokens=request_tokens, block_size=block_size, budget_bytes=budget_bytes,
        block_bytes=size.block_bytes, budget_blocks=budget_blocks, formula=formula,
        offered=offered, admitted=len(first.admitted), blocks_used=first.blocks_used,
    )
