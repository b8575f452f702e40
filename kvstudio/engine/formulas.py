"""The course formulas, as plain functions the window draws next to the measurements.

Owns the arithmetic only: how many tokens each mode feeds to the model and how
many bytes a KV cache holds. Nothing here runs a model; the stepper measures
the same quantities from real tensors so the two can be compared.

Letters: P prompt tokens, N new tokens, L layers, T cached tokens,
H_kv K/V heads, d head dimension, W sliding window (keys a query sees, itself
included, as transformers' ``sliding_window``: a sliding layer keeps W − 1 tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kvstudio.engine.records import Mode


def _check_lengths(prompt_tokens: int, new_tokens: int) -> None:
    if prompt_tokens < 1 or new_tokens < 1:
        raise ValueError(
            f"Need at least one prompt token and one new token, got P={prompt_tokens}, "
            f"N={new_tokens}."
        )


def tokens_fed_cached(prompt_tokens: int, new_tokens: int) -> int:
    """Cached: the prompt once, then one token per further step: P + (N − 1)."""
    _check_lengths(prompt_tokens, new_tokens)
    return prompt_tokens + (new_tokens - 1)


def tokens_fed_recompute(prompt_tokens: int, new_tokens: int) -> int:
    """Recompute: step s feeds P + s tokens, s = 0 … N−1: P·N + N(N−1)/2."""
    _check_lengths(prompt_tokens, new_tokens)
    return prompt_tokens * new_tokens + new_tokens * (new_tokens - 1) // 2


def tokens_fed(mode: Mode, prompt_tokens: int, new_tokens: int) -> int:
    """The formula for `mode` ("cached" or "recompute")."""
    if mode == "cached":
        return tokens_fed_cached(prompt_tokens, new_tokens)
    if mode == "recompute":
        return tokens_fed_recompute(prompt_tokens, new_tokens)
    raise ValueError(f"Unknown mode {mode!r}; choose 'cached' or 'recompute'.")


def tokens_fed_at_step(mode: Mode, prompt_tokens: int, step: int) -> int:
    """Tokens fed at step `step` (0 = prefill): cached P then 1; recompute P + step."""
    if step < 0:
        raise ValueError(f"Step must be 0 or more, got {step}.")
    if mode == "cached":
        return prompt_tokens if step == 0 else 1
    if mode == "recompute":
        return prompt_tokens + step
    raise ValueError(f"Unknown mode {mode!r}; choose 'cached' or 'recompute'.")


def tokens_fed_per_step(mode: Mode, prompt_tokens: int, new_tokens: int) -> list[int]:
    """Tokens fed at each of the N steps (for a bar chart)."""
    _check_lengths(prompt_tokens, new_tokens)
    return [tokens_fed_at_step(mode, prompt_tokens, s) for s in range(new_tokens)]


def tokens_fed_cumulative(mode: Mode, prompt_tokens: int, new_tokens: int) -> list[int]:
    """Running total of tokens fed after each step; the last entry is `tokens_fed(...)`."""
    totals, running = [], 0
    for fed in tokens_fed_per_step(mode, prompt_tokens, new_tokens):
        running += fed
        totals.append(running)
    return totals


def cache_bytes(
    layers: int,
    tokens: int,
    kv_heads: int,
    head_dim: int,
    dtype_bytes: int,
    batch_size: int = 1,
) -> int:
    """KV cache size: 2 (K and V) · L · T · H_kv · d · bytes (· batch)."""
    if min(layers, kv_heads, head_dim, dtype_bytes, batch_size) < 1 or tokens < 0:
        raise ValueError("cache_bytes needs positive sizes and a non-negative token count.")
    return 2 * layers * tokens * kv_heads * head_dim * dtype_bytes * batch_size


def window_keeps(window: int | None) -> int | None:
    """Tokens a sliding-window layer keeps between steps: W − 1 (None: no window, no cap).

    W is transformers' ``sliding_window``: each query sees W keys, itself
    included, so the W − 1 before the next token are all a cache must keep.
    """
    if window is None:
        return None
    if window < 1:
        raise ValueError(f"A sliding window must be at least 1 token, got {window}.")
    return window - 1


def cache_tokens_after_step(prompt_tokens: int, step: int, window: int | None = None) -> int:
    """Tokens the cache holds after step `step`: P + step, capped at W − 1 for a window W.

    After the prefill (step 0) the cache holds the prompt; each decode step adds
    the token fed at that step.
    """
    stored = prompt_tokens + step
    keeps = window_keeps(window)
    return stored if keeps is None else min(stored, keeps)


def layer_tokens(tokens: int, layer_windows: Sequence[int | None]) -> list[int]:
    """Tokens each layer holds when the sequence has `tokens` cached positions.

    `layer_windows` has one entry per layer: None for full attention (T tokens),
    a window W for sliding attention (min(T, W − 1) tokens).
    """
    held = []
    for window in layer_windows:
        keeps = window_keeps(window)
        held.append(tokens if keeps is None else min(tokens, keeps))
    return held


def cache_bytes_layers(
    tokens_per_layer: Sequence[int],
    kv_heads: int,
    head_dim: int,
    dtype_bytes: int,
    batch_size: int = 1,
) -> int:
    """KV cache size when layers hold different token counts: Σ_l 2·T_l·H_kv·d·bytes (· batch).

    With every T_l = T this is `cache_bytes`; a hybrid model (some sliding layers)
    holds fewer tokens on its sliding layers.
    """
    return sum(
        cache_bytes(1, t, kv_heads, head_dim, dtype_bytes, batch_size) for t in tokens_per_layer
    )


def cache_bytes_per_step(
    layers: int,
    kv_heads: int,
    head_dim: int,
    dtype_bytes: int,
    prompt_tokens: int,
    new_tokens: int,
    *,
    window: int | None = None,
    batch_size: int = 1,
) -> list[int]:
    """Cache bytes after each of the N steps (dynamic, or sliding with window W) for a line plot."""
    _check_lengths(prompt_tokens, new_tokens)
    return [
        cache_bytes(
            layers,
            cache_tokens_after_step(prompt_tokens, s, window),
            kv_heads,
            head_dim,
            dtype_bytes,
            batch_size,
        )
        for s in range(new_tokens)
    ]


def bytes_per_token(layers: int, kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """Cache bytes one token costs across all layers (course model fp32: 2,048)."""
    return cache_bytes(layers, 1, kv_heads, head_dim, dtype_bytes)


class CacheGeometry(Protocol):
    """The four sizes a model's cache follows from (every `LanguageModel` has them)."""

    num_layers: int  # L
    num_kv_heads: int  # H_kv
    head_dim: int  # d
    dtype_bytes: int  # bytes per cached number


def model_bytes_per_token(model: CacheGeometry) -> int:
    """`bytes_per_token` with a loaded model's own L, H_kv, d and bytes."""
    return bytes_per_token(model.num_layers, model.num_kv_heads, model.head_dim, model.dtype_bytes)
