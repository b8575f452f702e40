"""Up-front checks that a run or a model fits: positions, memory, thread count.

Owns the arithmetic that says, before anything is allocated, whether a run of
B rows × (P + N) positions fits the model's positions and the free memory,
whether a model config's weights fit in memory, and how many torch threads
make sense, and the largest length any setting may name before the model
is known (`MAX_TOKENS`). Every refusal is a `ValueError` saying how much was
asked, how much there is, and what to change. The estimates count the big tensors only
(weights, KV cache, logits, one layer's activations), so they are a lower
bound: a refused run could never have fitted.

It runs no model and allocates nothing.
"""

from __future__ import annotations

import os
from typing import Any

from kvstudio.engine import formulas

GIB = 1024**3
MEMORY_FRACTION = 0.9  # refuse a run whose estimate exceeds this share of the free memory
# The most tokens any length setting may name (prompt, new tokens, cache lengths, windows,
# blocks, context limits) before the model is even known: 16 Mi positions, past any model's
# context, and small enough that no index arithmetic on it overflows. The model's own
# positions are checked next (`check_run`).
MAX_TOKENS = 1 << 24
MAX_ROWS = 1 << 20  # samples in one batch (the free memory is checked next)
MAX_DRAFT_TOKENS = 64  # speculative decoding's k per round; more only wastes target rows


def max_threads() -> int:
    """The most torch threads worth asking for: one per CPU core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_threads(count: int) -> int:
    """`count` if it is a sensible torch thread count (1 … cores), else ValueError."""
    limit = max_threads()
    if not 1 <= count <= limit:
        raise ValueError(
            f"--threads must be between 1 and {limit} (the CPU cores here), got {count}; "
            "1 is fastest for the course model on a busy machine."
        )
    return count


def available_memory_bytes(device: Any = "cpu") -> int | None:
    """Free memory on `device` (bytes), or None when it cannot be told."""
    kind = getattr(device, "type", str(device).split(":")[0])
    if kind == "cuda":
        try:
            import torch

            return int(torch.cuda.mem_get_info(device)[0])
        except (RuntimeError, AssertionError, ValueError):
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def gib(n: float) -> str:
    return f"{n / GIB:,.1f} GiB" if n >= GIB else f"{n / 1024**2:,.1f} MiB"


def check_fits_memory(needed: int, what: str, device: Any = "cpu", hint: str = "") -> None:
    """ValueError if `needed` bytes exceed the share of free memory a run may take."""
    free = available_memory_bytes(device)
    if free is None or needed <= MEMORY_FRACTION * free:
        return
    raise ValueError(
        f"{what} needs about {gib(needed)} of memory but only {gib(free)} is free. "
        + (hint or "Ask for less.")
    )


def run_bytes(
    backend: Any,
    *,
    batch: int,
    prompt_len: int,
    new_tokens: int,
    cached: bool,
    cache_kind: str = "dynamic",
    cache_length: int = 0,
    block_size: int = 0,
) -> int:
    """A lower bound of the bytes one run allocates beyond the weights.

    KV cache (cached mode: 2·L·T·H_kv·d·bytes per row, T = P + N, the static
    length, or the window; a paged cache holds whole blocks of `block_size`:
    the prompt's full blocks once and, from the first new token on, at least
    one block per row, and never fewer than the 4 its pool starts with; rows
    that end early give their blocks back), the token buffer, the logits of one step (with the
    sampling pipeline's copies) and one layer's activations for the widest step
    (the prefill when cached, the whole sequence when recomputing).
    """
    total = prompt_len + new_tokens
    per_token = formulas.model_bytes_per_token(backend)
    if cached and cache_kind == "paged" and block_size > 0:
        shared = prompt_len // block_size  # full prompt blocks, shared by every row
        cache = max(4, shared + batch) * block_size * per_token
        widest = prompt_len
    elif cached:
        tokens = {"static": cache_length, "sliding": min(total, cache_length or total)}.get(
            cache_kind, total
        )
        cache = batch * max(tokens, prompt_len) * per_token
        widest = prompt_len
    else:
        cache = batch * total * per_token // max(backend.num_layers, 1)  # one layer at a time
        widest = total
    logits = 4 * batch * backend.vocab_size * 4  # logits, probabilities, sorted, mask (fp32)
    hidden = int(backend.hidden_size)
    activations = batch * widest * hidden * 8 * backend.dtype_bytes  # x, q|k|v, FFN, residual
    tokens_buffer = batch * total * 8
    return cache + logits + activations + tokens_buffer


def check_positions(positions: int, prompt_len: int, new_tokens: int) -> None:
    """The one position check: prompt and new tokens must fit the model's positions (RoPE)."""
    needed = prompt_len + new_tokens
    if positions and needed > positions:
        raise ValueError(
            f"P + N = {prompt_len:,} + {new_tokens:,} = {needed:,} positions, but the model "
            f"handles {positions:,}: shorten the prompt or ask for fewer new tokens."
        )


def check_run(
    backend: Any,
    *,
    batch: int,
    prompt_len: int,
    new_tokens: int,
    cached: bool,
    cache_kind: str = "dynamic",
    cache_length: int = 0,
    block_size: int = 0,
) -> None:
    """Refuse, before any work, a run past the model's positions or the free memory."""
    positions = backend.max_positions
    check_positions(positions, prompt_len, new_tokens)
    needed = prompt_len + new_tokens
    if cached and cache_kind == "static" and positions and cache_length > positions:
        raise ValueError(
            f"A static cache of {cache_length:,} tokens is longer than the model's "
            f"{positions:,} positions; it could never fill. Use at most {positions:,}."
        )
    if cached and cache_kind == "paged" and positions and block_size > positions:
        raise ValueError(
            f"A paged cache block of {block_size:,} tokens is longer than the model's "
            f"{positions:,} positions; one block would hold more than any sequence. Use a "
            "block of 16 to 256 tokens."
        )
    need = run_bytes(backend, batch=batch, prompt_len=prompt_len, new_tokens=new_tokens,
                     cached=cached, cache_kind=cache_kind, cache_length=cache_length,
                     block_size=block_size)
    check_fits_memory(
        need,
        f"This run ({batch:,} row(s) × {needed:,} positions)",
        backend.device,
        "Use fewer samples, fewer new tokens or a shorter static cache.",
    )


def parameter_count(
    *, vocab: int, hidden: int, layers: int, heads: int, kv_heads: int, head_dim: int,
    ffn: int, tied: bool,
) -> int:
    """Parameters of a MiniMind-style decoder with these sizes (plain arithmetic)."""
    attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    per_layer = attention + 3 * hidden * ffn + 2 * hidden
    return vocab * hidden * (1 if tied else 2) + layers * per_layer + hidden


def set_torch_threads(count: int) -> int:
    """Set torch's intra-op threads on purpose (1 keeps tiny matmuls fast on a busy machine);
    returns the count torch now uses. Torch is imported here, by whoever calls it first."""
    import torch

    torch.set_num_threads(max(1, count))
    return torch.get_num_threads()
