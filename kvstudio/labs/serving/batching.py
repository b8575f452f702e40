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
from typing import Any, Literal

import torch

from kvstudio.engine import decode, formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import synchronize
from kvstudio.engine.records import DEFAULT_REPEATS
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress, Spread, check_fits, lab_prompt_ids, spread
from kvstudio.labs.serving.records import SchedulerRun, ServingResult

DEFAULT_BATCH_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)  # rows per decode step
DEFAULT_CONTEXT = 64  # prompt tokens each row holds before the timed step
MAX_BATCH = 1024  # a sweep point past this is a typo, not a lesson
# A step slower than this many times its memory and compute floors is bound by overhead:
# Python, kernel launches and small-kernel inefficiency, not by the bytes or the FLOPs.
OVERHEAD_FACTOR = 3.0
# What the machine measurements move: a copy of this many bytes, a square matmul of this size.
COPY_BYTES = 64 * 1024**2
MATMUL_SIZE_CPU = 1024
MATMUL_SIZE_GPU = 4096

Bound = Literal["memory", "compute", "overhead"]


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


def model_module(backend: LanguageModel) -> torch.nn.Module:
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
    module = model_module(backend)
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
            synchronize(device)
            start = time.perf_counter()
            target.copy_(source)
            synchronize(device)
            copied = time.perf_counter()
            torch.mm(a, b)
            synchronize(device)
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
    """Prefill B copies of `prompt`, one untimed decode step, then one timed (greedy steps
    of the one decode loop, its clock waiting for the device).

    Returns (seconds, keys read, cache bytes after the step).
    """
    cache = backend.new_cache(CacheSpec(), batch)
    ids = prompt.expand(batch, -1)  # (B, P)

    def clock() -> float:
        synchronize(backend.device)
        return time.perf_counter()

    _prefill, _warm, timed = decode.run(
        backend, ids, cache, _greedy, steps=3, clock=clock
    )  # the prefill, one decode step to warm up, the timed one
    return timed.seconds, int(cache.seq_length), int(cache.nbytes)


def _greedy(logits: torch.Tensor) -> torch.Tensor:
    """logits (B, V) → each row's argmax (B,)."""
    return logits.argmax(dim=-1)


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
    dtype = next(model_module(backend).parameters()).dtype
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


# ---- the window lab's one job: the requests' run, then the sweep ------------------------
def runs_requests(backend: LanguageModel) -> bool:
    """Whether the serving engine can run requests on `backend` (KV Studio's own model)."""
    from kvstudio.engine.serving.model_runner import serving_model

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


def lab_numbers(result: ServingLabResult, run: SchedulerRun | None) -> dict[str, Any]:
    """numbers.json's block for the serving lab: `run` (the scheduler run on screen) and
    the batch sweep, every time in ms as a median with its fastest and slowest round."""

    def _ms(seconds: Spread | None) -> float | None:
        return None if seconds is None else 1000.0 * seconds.median

    out: dict[str, Any] = {}
    if run is not None and result.serving is not None:
        totals = run.totals
        out["serving"] = {
            "model": result.serving.model,
            "scheduler": run.config.label,
            "repeats": result.serving.repeats,
            "steps": totals.steps,
            "answer_tokens": totals.answer_tokens,
            "throughput_tokens_per_s": totals.throughput_tps.median,
            "throughput_min": totals.throughput_tps.low,
            "throughput_max": totals.throughput_tps.high,
            "padding_slots": totals.padding_slots,
            "padding_formula": totals.padding_formula,
            "prefix_hit_tokens": totals.prefix_hit_tokens,
            "preemptions": totals.preemptions,
            "peak_blocks": totals.peak_blocks,
            "peak_cache_bytes": totals.peak_cache_bytes,
            "all_identical_to_solo": run.all_identical,  # the same tokens
            "max_abs_logit_diff_vs_solo": run.max_abs_logit_diff,
            "requests": [
                {"index": o.request.index, "prompt_tokens": o.prompt_tokens,
                 "prefix_hit": o.prefix_hit, "ttft_ms": _ms(o.ttft_s),
                 "itl_p50_ms": _ms(o.itl_p50_s), "itl_p95_ms": _ms(o.itl_p95_s),
                 "answer_tokens": o.answer_tokens,
                 "identical_to_solo": o.identical_to_solo,
                 "max_abs_logit_diff_vs_solo": o.max_abs_logit_diff}
                for o in run.outcomes
            ],
        }
    sweep = result.sweep
    if sweep is not None:
        peaks = sweep.peaks
        out["batch_sweep"] = {
            "model": sweep.model_label,
            "device": sweep.device,
            "rounds": sweep.rounds,
            "context": sweep.context,
            "weight_bytes": sweep.work.weight_bytes,
            "best_copy_bytes_per_s": None if peaks is None else peaks.bandwidth.high,
            "best_matmul_flops_per_s": None if peaks is None else peaks.flops.high,
            "points": [
                {"batch": p.batch, "keys": p.keys, "ms_per_step": p.ms_per_step,
                 "ms_min": 1000.0 * p.step_seconds.low,
                 "ms_max": 1000.0 * p.step_seconds.high,
                 "tokens_per_s": p.tokens_per_second, "kv_bytes": p.kv_bytes,
                 "bytes_read": p.bytes_read, "flops": p.flops, "intensity": p.intensity,
                 "bound": p.bound}
                for p in sweep.points
            ],
        }
    return out
