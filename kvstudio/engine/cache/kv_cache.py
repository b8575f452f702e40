"""The dense KV cache kinds: dynamic, static and sliding layers, each owning its K and V.

Mirrors transformers' cache layers (``DynamicLayer``, ``StaticLayer``,
``SlidingWindowLayer``); the verbs they share are `CacheLayer`'s
(``base.py``): ``update(k, v) -> (K, V)``, ``seq_length``, ``visible_start``,
``nbytes`` / ``used_nbytes``, ``select_rows``, ``crop``, ``reset``. K/V are stored
**after RoPE and before ``repeat_kv``**, shaped (B, T, n_kv, d), so grouped-query
attention shrinks the cache by n_heads / n_kv.

This module does not run attention and does not build masks beyond telling
the model which key positions are visible (``visible_start``).

Every layer **owns its storage**: K/V arriving from the model may be views into
a wider q|k|v projection buffer, so the first update copies them into tensors
of their own, and the bytes reported (``nbytes``) are the bytes of the storage
the layer's tensors hold, not of a view into something larger.
"""

from __future__ import annotations

import torch

from kvstudio.engine.cache.base import CacheLayer, KVCache, check_crop_length
from kvstudio.engine.cache.spec import (
    ALL_CACHE_KINDS,
    CACHE_KINDS,
    SCALE_CACHE_KINDS,
    CacheKind,
    CacheSpec,
    check_static_room,
)

__all__ = ["ALL_CACHE_KINDS", "CACHE_KINDS", "SCALE_CACHE_KINDS", "CacheKind", "CacheSpec",
           "DynamicLayer", "KVCache", "SlidingWindowLayer", "StaticLayer", "dense_layer"]


def tensor_nbytes(t: torch.Tensor | None) -> int:
    """Bytes of the numbers `t` shows (0 for no tensor yet)."""
    return 0 if t is None else t.nbytes


def storage_nbytes(t: torch.Tensor | None) -> int:
    """Bytes of the whole storage behind `t` (a view of a larger buffer counts all of it)."""
    return 0 if t is None else t.untyped_storage().nbytes()


def _own(t: torch.Tensor) -> torch.Tensor:
    """A compact copy with storage of its own (``contiguous()`` may return the view itself)."""
    return t.clone(memory_format=torch.contiguous_format)


def append_tokens(stored: torch.Tensor | None, new: torch.Tensor) -> torch.Tensor:
    """`new` (B, T_new, G, ·) after the `stored` tokens (B, T, G, ·). The first tokens are
    copied into storage of their own: k, v may be views into a wider q|k|v projection (for
    one token they even look contiguous, so contiguous() would keep the view)."""
    return _own(new) if stored is None else torch.cat([stored, new], dim=1)


class DynamicLayer(CacheLayer):
    """Grows by concatenation: every step appends the new K/V (what MiniMind does)."""

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None  # (B, T, n_kv, d)
        self.values: torch.Tensor | None = None  # (B, T, n_kv, d)
        self.seq_length = 0  # positions seen so far

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append k, v (B, T_new, n_kv, d); return all keys and values (B, T, n_kv, d)."""
        self.keys, self.values = append_tokens(self.keys, k), append_tokens(self.values, v)
        self.seq_length += k.shape[1]
        return self.keys, self.values

    def part_nbytes(self) -> tuple[int, int]:
        """Bytes of the storage this layer's tensors hold (static: the whole preallocation)."""
        return storage_nbytes(self.keys), storage_nbytes(self.values)

    @property
    def stored_tokens(self) -> int:
        return 0 if self.keys is None else self.keys.shape[1]

    def select_rows(self, rows: torch.Tensor) -> None:
        """Real copies of the rows kept, so the measured bytes are what the cache holds."""
        if self.keys is not None and self.values is not None:
            self.keys = self.keys.index_select(0, rows)  # (R, T, G, d)
            self.values = self.values.index_select(0, rows)

    def crop(self, length: int) -> None:
        """Keep positions 0 … length − 1, copied into storage of their own so the bytes drop."""
        check_crop_length(length, self.seq_length)
        if self.keys is not None and self.values is not None:
            self.keys = _own(self.keys[:, :length])  # (B, length, G, d)
            self.values = _own(self.values[:, :length])
        self.seq_length = length

    def reset(self) -> None:
        self.keys = self.values = None
        self.seq_length = 0


class StaticLayer(DynamicLayer):
    """Preallocated to `max_length` on the first update and written in place."""

    def __init__(self, max_length: int) -> None:
        super().__init__()
        if max_length <= 0:
            raise ValueError(f"A static cache needs a positive maximum length, got {max_length}.")
        self.max_length = max_length

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T_new, n_kv, d = k.shape
        if self.keys is None or self.values is None:
            self.keys = torch.zeros(B, self.max_length, n_kv, d, dtype=k.dtype, device=k.device)
            self.values = torch.zeros_like(self.keys)
        end = self.seq_length + T_new
        check_static_room(self.max_length, end)
        self.keys[:, self.seq_length : end] = k
        self.values[:, self.seq_length : end] = v
        self.seq_length = end
        return self.keys[:, :end], self.values[:, :end]  # views, no copy

    @property
    def used_nbytes(self) -> int:
        if self.keys is None:
            return 0
        per_token = self.keys[:, :1].numel() * self.keys.element_size()
        return 2 * per_token * self.seq_length

    @property
    def stored_tokens(self) -> int:
        return self.seq_length

    def crop(self, length: int) -> None:
        """Move the write position back to `length`; the slots after it are zeroed."""
        check_crop_length(length, self.seq_length)
        if self.keys is not None and self.values is not None:
            self.keys[:, length:].zero_()  # the preallocation stays: nbytes does not change
            self.values[:, length:].zero_()
        self.seq_length = length


class SlidingWindowLayer(DynamicLayer):
    """A window of W keys per query, itself included; keeps the last W − 1 tokens.

    W means what transformers' ``sliding_window`` means (Mistral, Gemma, EXAONE-4,
    ``DynamicSlidingWindowLayer``): a query at position i attends to keys
    i − W + 1 … i, so the next token needs only the W − 1 tokens before it and
    the bytes stop growing at W − 1 tokens. W = 1 lets each token see only itself.
    """

    def __init__(self, window: int) -> None:
        super().__init__()
        if window <= 0:
            raise ValueError(f"A sliding window must be at least 1 token, got {window}.")
        self.window = window

    @property
    def keep(self) -> int:
        """Tokens stored between steps: W − 1."""
        return self.window - 1

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        full_k = append_tokens(self.keys, k)  # (B, stored + T_new, n_kv, d)
        full_v = append_tokens(self.values, v)
        self.seq_length += k.shape[1]
        self.keys, self.values = self._last(full_k), self._last(full_v)
        return full_k, full_v  # the new queries still need the keys just past the window

    def _last(self, full: torch.Tensor) -> torch.Tensor:
        """The last W − 1 tokens of full (B, S, n_kv, d), in storage of their own."""
        if full.shape[1] <= self.keep:
            return full  # already its own (a copy or a concatenation)
        return _own(full[:, full.shape[1] - self.keep :])

    def visible_start(self, new_tokens: int) -> int:
        return max(0, self.seq_length - self.keep)

    def crop(self, length: int) -> None:
        """Refused: the window has already dropped keys the cropped positions would need."""
        raise ValueError(
            "A sliding-window cache cannot be cropped: it has already dropped the keys "
            "older than its window, which the positions left after a crop would need; "
            "use the dynamic, static, paged or a quantized cache for speculative decoding."
        )


def dense_layer(spec: CacheSpec) -> DynamicLayer:
    """The dynamic, static or sliding layer `spec` names."""
    if spec.kind == "static":
        return StaticLayer(spec.max_length)
    if spec.kind == "sliding":
        return SlidingWindowLayer(spec.window)
    return DynamicLayer()
